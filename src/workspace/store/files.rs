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
    let temp = write_beside(path, bytes, durable)?;
    rename_or_remove(&temp, path)?;
    if durable {
        File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()?;
    }
    Ok(())
}

/// Write `bytes` to a temporary file beside `path`, exchange the two and
/// remove the old one: readers see the old file or the new, never none,
/// as with `replace_file`. For a file that is a view of the moment (the
/// activity): renamed over another file, ext4 starts the new one's
/// writeback inside the rename (its guard against an empty file after a
/// crash), which took 0.1-0.35 ms of a hook here, milliseconds while
/// another process wrote to the disk. Such a view found damaged after a
/// crash is read as a fresh one.
/// Where there is nothing to exchange with, or the system or filesystem
/// cannot exchange, it is a rename.
pub(super) fn swap_in(path: &Path, bytes: &[u8]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        let temp = write_beside(path, bytes, false)?;
        if renameat_with(CWD, &temp, CWD, path, RenameFlags::EXCHANGE).is_ok() {
            // The old file, now under the temporary name; one left by a
            // writer killed here goes with the stale temporaries.
            let _ = fs::remove_file(&temp);
            return Ok(());
        }
        rename_or_remove(&temp, path)
    }
    #[cfg(not(target_os = "linux"))]
    replace_file(path, bytes, false)
}

/// `bytes` in a new temporary file beside `path` (synced with `durable`);
/// nothing is left behind when that fails.
fn write_beside(path: &Path, bytes: &[u8], durable: bool) -> io::Result<std::path::PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = File::create(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        Ok(())
    });
    match written {
        Ok(()) => Ok(temp),
        Err(error) => {
            let _ = fs::remove_file(&temp);
            Err(error)
        }
    }
}

/// `temp` renamed to `path`, or removed when it cannot be.
fn rename_or_remove(temp: &Path, path: &Path) -> io::Result<()> {
    let renamed = fs::rename(temp, path);
    if renamed.is_err() {
        let _ = fs::remove_file(temp);
    }
    renamed
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn temporaries(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_swapped_in_file_replaces_the_old_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("ds-swap-in-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(ACTIVITY_FILE);
        swap_in(&path, b"{\"revision\":1}").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"revision\":1}", "created");
        let mut held = File::open(&path).unwrap();
        swap_in(&path, b"{\"revision\":2}").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"revision\":2}", "replaced");
        let mut old = String::new();
        held.read_to_string(&mut old).unwrap();
        assert_eq!(
            old, "{\"revision\":1}",
            "a reader of the old file reads it whole"
        );
        assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
        let _ = fs::remove_dir_all(&dir);
    }
}
