//! Where session state is kept between commands (DESIGN section 6). The
//! engine only talks to the `Store` interface: every mutation is one
//! `update` (lock, read, apply, write, unlock), so processes sharing a store
//! never lose each other's updates. `FileStore` keeps sessions in the
//! workspace's state directory; `MemoryStore` keeps them for the life of the
//! process (tests, and a fallback nobody else can see).
//!
//! Beside this file: the session lock (`lock`), how files are read and
//! replaced (`files`), damaged state moved aside (`damage`) and the memory
//! store (`memory`).

mod damage;
mod files;
mod lock;
mod memory;
pub mod wakers;

pub use lock::LOCK_WAIT;
pub use memory::MemoryStore;

use crate::core::activity::Activity;
use crate::core::model::DebugState;
use crate::core::revision::{next_revision, revived_revision};
use crate::core::revival;
use damage::Found;
pub use damage::{set_aside_unless, Expected};
use files::{replace_file, swap_in, FileStamp, StampCache};
use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One session's state as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub state: DebugState,
    /// Increases by one on every write.
    pub revision: u64,
    /// When the session was last written (ms since the epoch); 0 if never.
    pub updated_at: u64,
    /// Something a person should know about how the state was loaded (a
    /// damaged file moved aside); kept until the session is written again.
    pub warning: Option<String>,
}

impl Stored {
    fn empty() -> Self {
        Stored {
            state: DebugState::Inactive,
            revision: 0,
            updated_at: 0,
            warning: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read session state at {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write session state at {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

fn read_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    }
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// The apply step refused the command. `keep` is a state to write anyway:
/// facts learned from the disk before the refusal stay learned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Refused {
    pub keep: Option<DebugState>,
}

/// How an update ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The new state was written with the next revision.
    Written(Stored),
    /// The step left the state as it was; nothing was written.
    Unchanged(Stored),
    Refused,
}

pub trait Store: Send {
    /// The session's current state (inactive at revision 0 when unknown).
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError>;

    /// Read the session, let `apply` compute the next state, and write it
    /// with the next revision when it differs.
    fn update(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
    ) -> Result<Update, StoreError> {
        self.update_then(session_id, now, apply, &mut |_| {})
    }

    /// `update`, then `then` with the state now durable (written, or as it
    /// was), still under the session's lock: for what must follow a write
    /// and never precede it (the run link). Not called when a write fails.
    fn update_then(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
        then: &mut dyn FnMut(&Stored),
    ) -> Result<Update, StoreError>;

    /// Known sessions, most recently written first.
    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError>;

    /// Every session with something saved: a state, or only the agent's
    /// activity; in no particular order.
    fn session_ids(&mut self) -> Result<Vec<String>, StoreError>;

    /// The most recently written session, cheaply (asked on most requests).
    fn most_recent(&mut self) -> Result<Option<String>, StoreError> {
        Ok(self.sessions()?.into_iter().next().map(|(id, _)| id))
    }

    /// The agent's activity in the session (default when none was saved).
    fn load_activity(&mut self, session_id: &str) -> Result<Activity, StoreError>;

    /// Read the activity under the session's lock, let `apply` change it,
    /// and save it with the next revision when it changed. Returns it as
    /// saved (or as it was, when nothing changed).
    fn update_activity(
        &mut self,
        session_id: &str,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<Activity, StoreError>;
}

/// `apply` on a copy; the new activity with the next revision, when it changed.
fn changed_activity(current: &Activity, apply: &mut dyn FnMut(&mut Activity)) -> Option<Activity> {
    let mut next = current.clone();
    apply(&mut next);
    if next.same_as(current) {
        return None;
    }
    next.revision = next_revision(current.revision);
    Some(next)
}

/// What `apply` decided about `current`.
enum Decided {
    Unchanged,
    /// The new state, with the next revision.
    Write(Stored),
    /// Refused, with facts to keep written at the next revision.
    Keep(Stored),
    Refused,
}

fn decide(
    current: &Stored,
    now: u64,
    apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
) -> Decided {
    let next = |state| Stored {
        state,
        revision: next_revision(current.revision),
        updated_at: now,
        warning: None,
    };
    match apply(&current.state) {
        Ok(state) if state == current.state => Decided::Unchanged,
        Ok(state) => Decided::Write(next(state)),
        Err(Refused { keep }) => match keep.filter(|kept| *kept != current.state) {
            Some(kept) => Decided::Keep(next(kept)),
            None => Decided::Refused,
        },
    }
}

/// The state directory's `.gitignore`: nothing in it is ever committed.
pub const GITIGNORE: &str = "*\n";
pub const STATE_FILE: &str = "state.json";
/// The agent's turn state, progress and subagents: shown live, not worth a
/// fsync (a crash loses at most the last change, never the file).
pub const ACTIVITY_FILE: &str = "activity.json";
const LOCK_FILE: &str = ".lock";
pub const SESSIONS_DIR: &str = "sessions";

/// Sessions as files under `<state dir>/sessions/<id>/state.json`.
///
/// Writes hold an exclusive advisory lock on the session's `.lock` file,
/// read the current file, apply, write a temporary file, fsync it, rename it
/// over `state.json` and fsync the directory, so a crash at any instant
/// leaves the old or the new state, never a torn one. Reads take no lock:
/// the rename makes every read see a whole file.
pub struct FileStore {
    dir: PathBuf,
    /// fsync files and directories (off only for benchmarks).
    durable: bool,
    /// Damage found while loading, per session, until the next write.
    warnings: HashMap<String, String>,
    /// The last state read or written per session, with the stamp of the
    /// file it came from: a read whose file has the same stamp (every write
    /// renames a new file into place) returns it without parsing.
    cache: StampCache<Stored>,
    /// The same for activity files, read on every harness event.
    activity_cache: StampCache<Activity>,
}

impl FileStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileStore {
            dir: dir.into(),
            durable: true,
            warnings: HashMap::new(),
            cache: StampCache::new(),
            activity_cache: StampCache::new(),
        }
    }

    /// Without fsync: faster, not crash-safe. For measuring what fsync costs.
    pub fn without_fsync(mut self) -> Self {
        self.durable = false;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn session_dir(&self, session_id: &str) -> PathBuf {
        self.dir.join(SESSIONS_DIR).join(session_id)
    }

    fn file(&self, session_id: &str) -> PathBuf {
        self.session_dir(session_id).join(STATE_FILE)
    }

    /// The state directory with its `.gitignore`, and the session's directory.
    fn prepare(&self, session_id: &str) -> Result<PathBuf, StoreError> {
        ensure_state_dir(&self.dir)?;
        let dir = self.session_dir(session_id);
        fs::create_dir_all(&dir).map_err(write_error(&dir))?;
        Ok(dir)
    }

    /// The session's state; `locked` when the caller holds the session's
    /// lock (a second lock on the same file would wait for the first).
    fn read(&mut self, session_id: &str, now: u64, locked: bool) -> Result<Stored, StoreError> {
        if let Some(unmendable) = self.mend_layout(session_id, now) {
            return Ok(unmendable);
        }
        let path = self.file(session_id);
        let stamp = match FileStamp::of(&path) {
            Ok(stamp) => Some(stamp),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(read_error(&path)(e)),
        };
        if let Some(stored) = self.cache.get(session_id, stamp) {
            return Ok(self.with_warning(session_id, stored));
        }
        let stored = self.read_file(session_id, &path, now, locked)?;
        // An empty state may stand for a damaged file: never cached.
        let worth = stored.revision > 0 || stored.state.session().is_some();
        self.cache.put(session_id, stamp.filter(|_| worth), &stored);
        Ok(stored)
    }

    fn read_file(
        &mut self,
        session_id: &str,
        path: &Path,
        now: u64,
        locked: bool,
    ) -> Result<Stored, StoreError> {
        let found = damage::inspect(path).map_err(read_error(path))?;
        let data = match &found {
            Found::Missing => {
                let mut stored = self.with_warning(session_id, Stored::empty());
                // Another process may have found the damage: what it moved
                // aside tells every process, until the session is written again.
                if stored.warning.is_none() {
                    stored.warning = damage::moved_aside(path)
                        .map(|aside| damage::moved_aside_warning(session_id, &aside));
                }
                return Ok(stored);
            }
            Found::Bytes(text) => serde_json::from_slice::<Value>(text)
                .ok()
                .filter(Value::is_object),
            // Not a file (a link is never followed): damage like a torn file.
            Found::NotAFile(_) => None,
        };
        let Some(data) = data else {
            return self.set_aside(session_id, path, &found, now, locked);
        };
        // A readable state: whatever damage this process found earlier was
        // mended by another process's write.
        self.warnings.remove(session_id);
        let stored = Stored {
            state: revival::load_live(&data),
            revision: revived_revision(data.get("revision").and_then(Value::as_u64).unwrap_or(0)),
            updated_at: data.get("updatedAt").and_then(Value::as_u64).unwrap_or(0),
            warning: None,
        };
        Ok(self.with_warning(session_id, stored))
    }

    fn with_warning(&self, session_id: &str, mut stored: Stored) -> Stored {
        stored.warning = self.warnings.get(session_id).cloned();
        stored
    }

    fn write(&mut self, session_id: &str, stored: &Stored) -> Result<(), StoreError> {
        let mut data = revival::persist(&stored.state);
        if let Some(object) = data.as_object_mut() {
            object.insert("revision".into(), stored.revision.into());
            object.insert("updatedAt".into(), stored.updated_at.into());
        }
        let path = self.file(session_id);
        let bytes = serde_json::to_vec_pretty(&data).map_err(|e| write_error(&path)(e.into()))?;
        replace_file(&path, &bytes, self.durable).map_err(write_error(&path))?;
        self.warnings.remove(session_id);
        self.cache
            .put(session_id, FileStamp::of(&path).ok(), stored);
        Ok(())
    }

    fn activity_file(&self, session_id: &str) -> PathBuf {
        self.session_dir(session_id).join(ACTIVITY_FILE)
    }

    fn read_activity(&self, session_id: &str) -> Result<Activity, StoreError> {
        let path = self.activity_file(session_id);
        match damage::inspect(&path).map_err(read_error(&path))? {
            Found::Bytes(bytes) => {
                let mut activity: Activity =
                    serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                        tracing::warn!("{} is damaged ({error}); starting afresh", path.display());
                        Activity::default()
                    });
                activity.revision = revived_revision(activity.revision);
                Ok(activity)
            }
            Found::Missing => Ok(Activity::default()),
            // Moved aside by the next write (under the lock).
            Found::NotAFile(what) => {
                tracing::warn!("{} is {what}; starting afresh", path.display());
                Ok(Activity::default())
            }
        }
    }
}

/// Create the state directory and its `.gitignore` when missing.
pub fn ensure_state_dir(dir: &Path) -> Result<(), StoreError> {
    let sessions = dir.join(SESSIONS_DIR);
    fs::create_dir_all(&sessions).map_err(write_error(&sessions))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        fs::write(&ignore, GITIGNORE).map_err(write_error(&ignore))?;
    }
    Ok(())
}

impl Store for FileStore {
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError> {
        self.read(session_id, now_stamp(), false)
    }

    fn update_then(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
        then: &mut dyn FnMut(&Stored),
    ) -> Result<Update, StoreError> {
        // A session never made takes no lock (its lock file would be the
        // first file of a fresh workspace): a command that writes nothing
        // (a refusal, a stop with no session) is answered as "no session".
        // One that writes is applied again under the lock below.
        if fs::symlink_metadata(self.session_dir(session_id)).is_err() {
            let none = self.read(session_id, now, false)?;
            match decide(&none, now, apply) {
                Decided::Unchanged => {
                    then(&none);
                    return Ok(Update::Unchanged(none));
                }
                Decided::Refused => {
                    then(&none);
                    return Ok(Update::Refused);
                }
                Decided::Write(_) | Decided::Keep(_) => {}
            }
        }
        // The lock is released when `lock` is dropped, on every path out.
        let lock = self.lock(session_id)?;
        // Under the lock the file itself is the truth: a stamp (time, size,
        // inode) can repeat across versions, so the cache is not consulted.
        self.cache.forget(session_id);
        let current = self.read(session_id, now, true)?;
        let (update, durable) = match decide(&current, now, apply) {
            Decided::Unchanged => (Update::Unchanged(current.clone()), current),
            Decided::Write(stored) => {
                self.write(session_id, &stored)?;
                (Update::Written(stored.clone()), stored)
            }
            Decided::Keep(stored) => {
                self.write(session_id, &stored)?;
                (Update::Refused, stored)
            }
            Decided::Refused => (Update::Refused, current),
        };
        then(&durable);
        drop(lock);
        Ok(update)
    }

    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError> {
        let mut all = Vec::new();
        for id in self.session_ids()? {
            // Whatever is there, even a link (moved aside when read).
            if fs::symlink_metadata(self.file(&id)).is_ok() {
                let stored = self.load(&id)?;
                all.push((id, stored));
            }
        }
        all.sort_by(|a, b| b.1.updated_at.cmp(&a.1.updated_at).then(a.0.cmp(&b.0)));
        Ok(all)
    }

    /// By the state files' modification times, without reading them.
    fn session_ids(&mut self) -> Result<Vec<String>, StoreError> {
        let root = self.dir.join(SESSIONS_DIR);
        let entries = match fs::read_dir(&root) {
            Ok(entries) => entries,
            Err(e) if no_sessions(&e) => return Ok(Vec::new()),
            Err(e) => return Err(read_error(&root)(e)),
        };
        Ok(entries
            .flatten()
            // Never through a link: a linked session is not one of ours.
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|id| crate::core::session_id::check_session_id(id).is_ok())
            .collect())
    }

    fn most_recent(&mut self) -> Result<Option<String>, StoreError> {
        let root = self.dir.join(SESSIONS_DIR);
        let entries = match fs::read_dir(&root) {
            Ok(entries) => entries,
            Err(e) if no_sessions(&e) => return Ok(None),
            Err(e) => return Err(read_error(&root)(e)),
        };
        let mut newest: Option<(std::time::SystemTime, String)> = None;
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let id = entry.file_name().to_string_lossy().into_owned();
            let Ok(modified) =
                fs::metadata(entry.path().join(STATE_FILE)).and_then(|m| m.modified())
            else {
                continue;
            };
            if crate::core::session_id::check_session_id(&id).is_err() {
                continue;
            }
            let newer = newest
                .as_ref()
                .is_none_or(|(time, best)| modified > *time || (modified == *time && id < *best));
            if newer {
                newest = Some((modified, id));
            }
        }
        Ok(newest.map(|(_, id)| id))
    }

    /// Unchanged files (same stamp) are not parsed again.
    fn load_activity(&mut self, session_id: &str) -> Result<Activity, StoreError> {
        let path = self.activity_file(session_id);
        let stamp = FileStamp::of(&path).ok();
        if let Some(activity) = self.activity_cache.get(session_id, stamp) {
            return Ok(activity);
        }
        let activity = self.read_activity(session_id)?;
        self.activity_cache.put(session_id, stamp, &activity);
        Ok(activity)
    }

    fn update_activity(
        &mut self,
        session_id: &str,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<Activity, StoreError> {
        let _lock = self.lock(session_id)?;
        let current = self.read_activity(session_id)?;
        let Some(next) = changed_activity(&current, apply) else {
            return Ok(current);
        };
        let path = self.activity_file(session_id);
        // A directory there would refuse the rename of every write.
        set_aside_unless(&path, Expected::File, now_stamp()).map_err(write_error(&path))?;
        let bytes = serde_json::to_vec(&next).map_err(|e| write_error(&path)(e.into()))?;
        swap_in(&path, &bytes).map_err(write_error(&path))?;
        // What this process wrote is what its next read would parse (a
        // hook reads the activity again for the board it answers with).
        self.activity_cache
            .put(session_id, FileStamp::of(&path).ok(), &next);
        Ok(next)
    }
}

/// Listing `sessions/` found none: it is missing, or the state directory
/// is a file (reads then say so per session, writes fail naming the path).
fn no_sessions(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// A stamp for names of files moved aside.
pub(super) fn now_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::DebugSession;

    #[test]
    fn a_session_never_made_is_locked_only_by_a_command_that_writes() {
        let dir = std::env::temp_dir().join(format!("ds-store-none-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut store = FileStore::new(&dir);
        let refused = store.update("s", 1, &mut |_| Err(Refused::default()));
        assert_eq!(refused.unwrap(), Update::Refused);
        let unchanged = store.update("s", 1, &mut |state| Ok(state.clone()));
        assert!(matches!(unchanged.unwrap(), Update::Unchanged(_)));
        assert!(!dir.exists(), "nothing is made for no session");
        let mut applied = 0;
        let active = DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)));
        let written = store.update("s", 2, &mut |_| {
            applied += 1;
            Ok(active.clone())
        });
        assert!(matches!(
            written.unwrap(),
            Update::Written(Stored { revision: 1, .. })
        ));
        assert_eq!(applied, 2, "looked at without the lock, applied under it");
        assert!(dir.join(".gitignore").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_state_saved_at_a_revision_no_sidecar_writes_still_takes_commands() {
        let dir = std::env::temp_dir().join(format!("ds-store-revision-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut store = FileStore::new(&dir);
        let active = DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)));
        store.update("s", 1, &mut |_| Ok(active.clone())).unwrap();
        let mut saved: Value = serde_json::from_slice(&fs::read(store.file("s")).unwrap()).unwrap();
        saved["revision"] = u64::MAX.into();
        fs::write(store.file("s"), saved.to_string()).unwrap();
        let mut store = FileStore::new(&dir);
        assert_eq!(
            store.load("s").unwrap().revision,
            0,
            "the count starts over"
        );
        let update = store
            .update("s", 2, &mut |_| Ok(DebugState::Inactive))
            .unwrap();
        assert!(
            matches!(update, Update::Written(Stored { revision: 1, .. })),
            "{update:?}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_state_directory_that_is_a_file_lists_no_sessions_and_refuses_writes_by_name() {
        let dir = std::env::temp_dir().join(format!("ds-store-file-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::write(&dir, "not a directory").unwrap();
        let mut store = FileStore::new(&dir);
        assert!(store.sessions().unwrap().is_empty());
        assert_eq!(store.most_recent().unwrap(), None);
        assert!(store.load("s").unwrap().warning.is_some());
        let active = DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)));
        let refused = store
            .update("s", 1, &mut |_| Ok(active.clone()))
            .unwrap_err();
        assert!(
            refused.to_string().contains(&*dir.to_string_lossy()),
            "{refused}"
        );
        let _ = fs::remove_file(&dir);
    }
}
