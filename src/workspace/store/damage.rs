//! Damaged state: a `state.json` that cannot be read as a state is moved
//! aside as `state.json.corrupt-<time>`, and every process says so until
//! the session is written again.

use super::files::{is_link, read_own};
use super::{FileStore, StoreError, Stored, STATE_FILE};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

impl FileStore {
    /// `path` holds `text`, which is not a state: move it aside (under the
    /// session's lock; `locked` when the caller holds it) and start the
    /// session inactive with a warning.
    pub(super) fn set_aside(
        &mut self,
        session_id: &str,
        path: &Path,
        text: &[u8],
        now: u64,
        locked: bool,
    ) -> Result<Stored, StoreError> {
        // Move it aside only under the session's lock, and only if it is
        // still the damaged file: a writer may have replaced it meanwhile.
        let _lock = if locked {
            None
        } else {
            self.lock(session_id).ok()
        };
        let still = match read_own(path) {
            Ok(now) => now == text,
            // Still the link it was (a link reads as nothing).
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && is_link(path) => {
                text.is_empty()
            }
            // Gone (another process moved it) or unreadable: look again.
            Err(_) => false,
        };
        if !still {
            return self.read_file(session_id, path, now, true);
        }
        let aside = path.with_file_name(format!("{STATE_FILE}.corrupt-{now}"));
        let warning = match fs::rename(path, &aside) {
            Ok(()) => moved_aside_warning(session_id, &aside),
            // Another process moved it first: what it left tells.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return self.read_file(session_id, path, now, true);
            }
            // The directory is read-only.
            Err(e) => format!(
                "The saved state of session {session_id} at {} is damaged ({e}); the session starts inactive.",
                path.display()
            ),
        };
        tracing::warn!("{warning}");
        self.warnings.insert(session_id.to_string(), warning);
        Ok(self.with_warning(session_id, Stored::empty()))
    }
}

pub(super) fn moved_aside_warning(session_id: &str, aside: &Path) -> String {
    format!(
        "The saved state of session {session_id} was damaged and could not be read; it was moved to {} and the session starts inactive.",
        aside.display()
    )
}

/// The latest damaged state file moved aside next to `state` (which is gone).
pub(super) fn moved_aside(state: &Path) -> Option<PathBuf> {
    let prefix = format!("{STATE_FILE}.corrupt-");
    fs::read_dir(state.parent()?)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stamp: u64 = name.strip_prefix(&prefix)?.parse().ok()?;
            Some((stamp, entry.path()))
        })
        .max()
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::super::Store;
    use super::*;
    use crate::core::model::{DebugSession, DebugState};

    fn active() -> DebugState {
        DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)))
    }

    #[test]
    fn damage_is_reported_by_every_store_until_the_session_is_written_again() {
        let dir = std::env::temp_dir().join(format!("ds-store-damage-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (mut finder, mut other) = (FileStore::new(&dir), FileStore::new(&dir));
        finder.update("s", 1, &mut |_| Ok(active())).unwrap();
        fs::write(finder.file("s"), "{ damaged").unwrap();
        let found = finder.load("s").unwrap().warning.expect("the finder warns");
        assert!(found.contains("moved to"), "{found}");
        assert_eq!(
            other.load("s").unwrap().warning.as_deref(),
            Some(found.as_str())
        );
        other.update("s", 2, &mut |_| Ok(active())).unwrap();
        assert_eq!(other.load("s").unwrap().warning, None);
        assert_eq!(
            finder.load("s").unwrap().warning,
            None,
            "mended by the other's write"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
