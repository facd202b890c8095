//! Damaged state: a `state.json` that cannot be read as a state (torn,
//! not JSON, a link, a directory, a FIFO) is moved aside as
//! `state.json.corrupt-<time>`, and every process says so until the session
//! is written again. A layout the store did not make (a file where a
//! session's directory should be, a linked lock) is moved aside the same
//! way, so one damaged entry never locks the whole workspace.

use super::files::{is_link, read_own};
use super::{FileStore, StoreError, Stored, SESSIONS_DIR, STATE_FILE};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What is where a file of the store should be.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found {
    Missing,
    /// A regular file's bytes.
    Bytes(Vec<u8>),
    /// Something else (a link, a directory, a FIFO), never opened.
    NotAFile(&'static str),
}

/// What `path` holds, without following a link or opening anything that is
/// not a regular file (a FIFO would block the read).
pub(super) fn inspect(path: &Path) -> io::Result<Found> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_file() => return Ok(Found::NotAFile(kind(&meta.file_type()))),
        Ok(_) => {}
    }
    match read_own(path) {
        Ok(bytes) => Ok(Found::Bytes(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Missing),
        // Replaced by a link since it was looked at.
        Err(_) if is_link(path) => Ok(Found::NotAFile("a symbolic link")),
        Err(e) => Err(e),
    }
}

fn kind(file_type: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_file() {
        "a file"
    } else {
        "not a file"
    }
}

/// What a directory of the store must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Directory,
    File,
}

/// Moves whatever is at `path` aside as `<name>.corrupt-<now>` unless it is
/// what the store expects there (or nothing): a file where a directory
/// should be, a link (never followed out of the state directory), a FIFO.
/// Returns where it went and what it was; `None` when nothing was moved.
pub fn set_aside_unless(
    path: &Path,
    expected: Expected,
    now: u64,
) -> io::Result<Option<(PathBuf, &'static str)>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let fits = match expected {
        Expected::Directory => meta.is_dir(),
        Expected::File => meta.is_file(),
    };
    if fits {
        return Ok(None);
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let aside = path.with_file_name(format!("{name}.corrupt-{now}"));
    match fs::rename(path, &aside) {
        Ok(()) => {
            let what = kind(&meta.file_type());
            tracing::warn!(
                "{} was {what}, not what the sidecar keeps there; moved to {}",
                path.display(),
                aside.display()
            );
            Ok(Some((aside, what)))
        }
        // Another process moved it first.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl FileStore {
    /// `sessions/` and the session's directory must be directories of the
    /// store's own: anything else there is moved aside (the session then
    /// starts inactive with a warning). `Some` when the damage cannot be
    /// moved (a read-only state directory): the state to answer with.
    pub(super) fn mend_layout(&mut self, session_id: &str, now: u64) -> Option<Stored> {
        let sessions = self.dir.join(SESSIONS_DIR);
        for dir in [sessions.clone(), sessions.join(session_id)] {
            let warning = match set_aside_unless(&dir, Expected::Directory, now) {
                Ok(None) => continue,
                Ok(Some((aside, what))) => format!(
                    "The saved state of session {session_id} was damaged ({} was {what}); it was moved to {} and the session starts inactive.",
                    dir.display(),
                    aside.display()
                ),
                Err(e) => {
                    let warning = format!(
                        "The saved state of session {session_id} is damaged ({} is not a directory and could not be moved: {e}); the session starts inactive.",
                        dir.display()
                    );
                    self.warnings.insert(session_id.to_string(), warning);
                    return Some(self.with_warning(session_id, Stored::empty()));
                }
            };
            self.warnings.insert(session_id.to_string(), warning);
        }
        None
    }

    /// `path` holds `found`, which is not a state: move it aside (under the
    /// session's lock; `locked` when the caller holds it) and start the
    /// session inactive with a warning.
    pub(super) fn set_aside(
        &mut self,
        session_id: &str,
        path: &Path,
        found: &Found,
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
        // Gone (another process moved it), replaced or unreadable: look again.
        if inspect(path).ok().as_ref() != Some(found) {
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

/// The latest damage moved aside for the session whose `state` is gone: a
/// state file beside it, or what stood where the session's directory is.
pub(super) fn moved_aside(state: &Path) -> Option<PathBuf> {
    let session_dir = state.parent()?;
    let session = session_dir.file_name()?.to_string_lossy();
    let beside = (session_dir, format!("{STATE_FILE}.corrupt-"));
    let above = (session_dir.parent()?, format!("{session}.corrupt-"));
    [beside, above]
        .iter()
        .flat_map(|(dir, prefix)| {
            fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(move |entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let stamp: u64 = name.strip_prefix(prefix.as_str())?.parse().ok()?;
                    Some((stamp, entry.path()))
                })
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
