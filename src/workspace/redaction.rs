//! The workspace's redaction settings, `<state dir>/redaction.json`:
//! `{"enabled": false}` turns redaction off (only ever explicitly), `keys`
//! and `patterns` add to the built-in rules (`core::redact`). A settings
//! file that is not this user's own, or that came with a state directory
//! committed to git, is not read: a repository cannot switch redaction off
//! for the person who clones it. A file that does not parse keeps the
//! built-in rules, and says why on stderr.

use crate::core::redact::{Redactor, Settings};
use std::io::Read;
use std::path::Path;

pub const SETTINGS_FILE: &str = "redaction.json";
/// The largest settings file read.
const MAX_SETTINGS: u64 = 256 * 1024;

/// The redactor for the workspace at `root` with its state in `state_dir`.
pub fn load(root: &Path, state_dir: &Path) -> Redactor {
    let file = state_dir.join(SETTINGS_FILE);
    let Ok(handle) = crate::workspace::runlog::open_own(&file) else {
        return Redactor::default();
    };
    if !owned_by_this_user(&handle) {
        tracing::warn!("{} is not this user's own: not read", file.display());
        return Redactor::default();
    }
    if crate::workspace::committed::tracked_files(root, state_dir).1 > 0 {
        tracing::warn!(
            "{} came with a committed state directory: not read",
            file.display()
        );
        return Redactor::default();
    }
    let mut text = String::new();
    if handle.take(MAX_SETTINGS).read_to_string(&mut text).is_err() {
        return Redactor::default();
    }
    let settings = match serde_json::from_str::<Settings>(&text) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!(
                "debug-sidecar: {} is not valid ({error}); the built-in redaction applies",
                file.display()
            );
            return Redactor::default();
        }
    };
    Redactor::with_settings(&settings).unwrap_or_else(|error| {
        eprintln!(
            "debug-sidecar: {}: {error}; the built-in redaction applies",
            file.display()
        );
        Redactor::default()
    })
}

fn owned_by_this_user(handle: &std::fs::File) -> bool {
    let Ok(meta) = handle.metadata() else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
            return false;
        }
    }
    true
}

/// Values redacted in run files, counted by offset so a recount reads only
/// complete lines appended since: markers the doors on the way in wrote,
/// and secrets probes appended raw, which every read redacts.
#[derive(Debug, Default)]
pub struct RedactionCounter {
    files: std::collections::HashMap<std::path::PathBuf, (u64, u64)>,
}

impl RedactionCounter {
    pub fn count(&mut self, file: &Path, redactor: &Redactor) -> std::io::Result<u64> {
        use std::io::{BufRead, Seek, SeekFrom};
        if !redactor.is_enabled() {
            return Ok(0);
        }
        let mut handle = match crate::workspace::runlog::open_own(file) {
            Ok(handle) => handle,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let len = handle.metadata()?.len();
        let (mut offset, mut count) = self.files.get(file).copied().unwrap_or_default();
        if len < offset {
            (offset, count) = (0, 0);
        }
        handle.seek(SeekFrom::Start(offset))?;
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, handle);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line)?;
            if read == 0 || line.last() != Some(&b'\n') {
                break;
            }
            offset += read as u64;
            count += crate::core::redact::markers_in(&line) as u64;
            if let Ok(mut record) = serde_json::from_slice::<serde_json::Value>(&line) {
                count += redactor.record(&mut record) as u64;
            }
        }
        self.files.insert(file.to_path_buf(), (offset, count));
        Ok(count)
    }
}
