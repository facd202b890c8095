//! How the store reads and replaces its files: stamps that tell one
//! version of a file from the next, atomic replacement, and reads that never
//! follow a symlink.

use super::{ACTIVITY_FILE, STATE_FILE};
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Values read from files, per session, each with the stamp of its file.
pub(super) struct StampCache<T> {
    entries: HashMap<String, (FileStamp, T)>,
}

impl<T: Clone> StampCache<T> {
    pub(super) fn new() -> Self {
        StampCache {
            entries: HashMap::new(),
        }
    }

    /// The cached value while the file still has the stamp it had.
    pub(super) fn get(&self, session_id: &str, stamp: Option<FileStamp>) -> Option<T> {
        let (cached, value) = self.entries.get(session_id)?;
        (stamp? == *cached).then(|| value.clone())
    }

    /// Remember `value` as the content of the file with `stamp`; forget the
    /// session when there is no stamp to check it by.
    pub(super) fn put(&mut self, session_id: &str, stamp: Option<FileStamp>, value: &T) {
        match stamp {
            Some(stamp) => {
                self.entries
                    .insert(session_id.to_string(), (stamp, value.clone()));
            }
            None => self.forget(session_id),
        }
    }

    pub(super) fn forget(&mut self, session_id: &str) {
        self.entries.remove(session_id);
    }
}

/// What identifies one version of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileStamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

impl FileStamp {
    pub(super) fn of(path: &Path) -> io::Result<FileStamp> {
        let metadata = fs::metadata(path)?;
        Ok(FileStamp {
            modified: metadata.modified().ok(),
            len: metadata.len(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&metadata),
        })
    }
}

/// Write `bytes` to a temporary file beside `path` and rename it over
/// `path`; with `durable`, fsync the file before and the directory after.
pub(super) fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        fs::rename(&temp, path)?;
        if durable {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Temporary files a writer killed mid-write left behind. Only the lock
/// holder writes, so under the lock every temporary file is stale.
pub(super) fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = [STATE_FILE, ACTIVITY_FILE]
            .iter()
            .any(|file| name.starts_with(&format!(".{file}.")));
        if ours && name.ends_with(".tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}
pub(super) fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// A state file's bytes, never through a symlink (a state directory may
/// come from elsewhere).
pub(super) fn read_own(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::workspace::runlog::open_own(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}
