//! Where session state is kept between commands (DESIGN section 6). The
//! engine only talks to the `Store` interface: every mutation is one
//! `update` (lock, read, apply, write, unlock), so processes sharing a store
//! never lose each other's updates. `FileStore` keeps sessions in the
//! workspace's state directory; `MemoryStore` keeps them for the life of the
//! process (tests, and a fallback nobody else can see).

use crate::core::activity::Activity;
use crate::core::model::DebugState;
use crate::core::revival;
use serde_json::Value;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

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
    next.revision = current.revision + 1;
    Some(next)
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

/// Values read from files, per session, each with the stamp of its file.
struct StampCache<T> {
    entries: HashMap<String, (FileStamp, T)>,
}

impl<T: Clone> StampCache<T> {
    fn new() -> Self {
        StampCache {
            entries: HashMap::new(),
        }
    }

    /// The cached value while the file still has the stamp it had.
    fn get(&self, session_id: &str, stamp: Option<FileStamp>) -> Option<T> {
        let (cached, value) = self.entries.get(session_id)?;
        (stamp? == *cached).then(|| value.clone())
    }

    /// Remember `value` as the content of the file with `stamp`; forget the
    /// session when there is no stamp to check it by.
    fn put(&mut self, session_id: &str, stamp: Option<FileStamp>, value: &T) {
        match stamp {
            Some(stamp) => {
                self.entries
                    .insert(session_id.to_string(), (stamp, value.clone()));
            }
            None => self.forget(session_id),
        }
    }

    fn forget(&mut self, session_id: &str) {
        self.entries.remove(session_id);
    }
}

/// What identifies one version of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

impl FileStamp {
    fn of(path: &Path) -> io::Result<FileStamp> {
        let metadata = fs::metadata(path)?;
        Ok(FileStamp {
            modified: metadata.modified().ok(),
            len: metadata.len(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&metadata),
        })
    }
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
        let path = path.to_path_buf();
        let text = match read_own(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let mut stored = self.with_warning(session_id, Stored::empty());
                // Another process may have found the damage: what it moved
                // aside tells every process, until the session is written again.
                if stored.warning.is_none() {
                    stored.warning =
                        moved_aside(&path).map(|aside| moved_aside_warning(session_id, &aside));
                }
                return Ok(stored);
            }
            // A link where the state should be is damage like a torn file:
            // moved aside below, never followed.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && is_link(&path) => Vec::new(),
            Err(e) => return Err(read_error(&path)(e)),
        };
        let Some(data) = serde_json::from_slice::<Value>(&text)
            .ok()
            .filter(Value::is_object)
        else {
            // Move it aside only under the session's lock, and only if it is
            // still the damaged file: a writer may have replaced it meanwhile.
            let _lock = if locked {
                None
            } else {
                self.lock(session_id).ok()
            };
            let still = match read_own(&path) {
                Ok(now) => now == text,
                // Still the link it was (a link reads as nothing).
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied && is_link(&path) => {
                    text.is_empty()
                }
                // Gone (another process moved it) or unreadable: look again.
                Err(_) => false,
            };
            if !still {
                return self.read_file(session_id, &path, now, true);
            }
            let aside = path.with_file_name(format!("{STATE_FILE}.corrupt-{now}"));
            let warning = match fs::rename(&path, &aside) {
                Ok(()) => moved_aside_warning(session_id, &aside),
                // Another process moved it first: what it left tells.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return self.read_file(session_id, &path, now, true);
                }
                // The directory is read-only.
                Err(e) => format!(
                    "The saved state of session {session_id} at {} is damaged ({e}); the session starts inactive.",
                    path.display()
                ),
            };
            tracing::warn!("{warning}");
            self.warnings.insert(session_id.to_string(), warning);
            return Ok(self.with_warning(session_id, Stored::empty()));
        };
        // A readable state: whatever damage this process found earlier was
        // mended by another process's write.
        self.warnings.remove(session_id);
        let stored = Stored {
            state: revival::load_live(&data),
            revision: data.get("revision").and_then(Value::as_u64).unwrap_or(0),
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
        match fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                tracing::warn!("{} is damaged ({error}); starting afresh", path.display());
                Activity::default()
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Activity::default()),
            Err(e) => Err(read_error(&path)(e)),
        }
    }

    /// The session's exclusive lock, held until the returned file is dropped.
    fn lock(&self, session_id: &str) -> Result<File, StoreError> {
        let dir = self.prepare(session_id)?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(write_error(&lock_path))?;
        wait_for_lock(&lock).map_err(write_error(&lock_path))?;
        remove_stale_temps(&dir);
        Ok(lock)
    }
}

/// Write `bytes` to a temporary file beside `path` and rename it over
/// `path`; with `durable`, fsync the file before and the directory after.
fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
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

/// How long a command waits for another process's hold on a session.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The session's lock, waiting at most `LOCK_WAIT`: a process stopped while
/// holding it (paused in a debugger, say) must not hang every hook.
///
/// A contended lock is waited for in the kernel, by a helper thread blocked
/// on a duplicate of the handle (the same open file, so the same lock).
/// Blocked waiters are woken when the lock is released and usually take it
/// first, where polling with growing pauses let busy writers take it again
/// and again before a sleeper looked.
fn wait_for_lock(file: &File) -> io::Result<()> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(fs::TryLockError::WouldBlock) => {}
        Err(fs::TryLockError::Error(error)) => return Err(error),
    }
    let timed_out = || {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "another process has held this session for over {}s",
                LOCK_WAIT.as_secs()
            ),
        )
    };
    // A helper whose command gave up stays blocked until the holder lets go;
    // a holder stopped for hours must not collect them without bound.
    if BLOCKED_HELPERS.fetch_add(1, Ordering::SeqCst) >= MAX_BLOCKED_HELPERS {
        BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
        return Err(timed_out());
    }
    let waiter = file.try_clone()?;
    let (taken, outcome) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("debug-sidecar-lock".into())
        .spawn(move || {
            let result = waiter.lock();
            BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
            // Close this handle first: the caller's own keeps the lock while
            // it waits, and if it gave up, this was the last one.
            drop(waiter);
            let _ = taken.send(result);
        });
    if let Err(error) = spawned {
        BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
        return Err(error);
    }
    outcome
        .recv_timeout(LOCK_WAIT)
        .unwrap_or_else(|_| Err(timed_out()))
}

/// Helpers blocked on a session lock in this process, and their cap.
static BLOCKED_HELPERS: AtomicUsize = AtomicUsize::new(0);
const MAX_BLOCKED_HELPERS: usize = 16;

/// Temporary files a writer killed mid-write left behind. Only the lock
/// holder writes, so under the lock every temporary file is stale.
fn remove_stale_temps(dir: &Path) {
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

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// A state file's bytes, never through a symlink (a state directory may
/// come from elsewhere).
fn read_own(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::workspace::runlog::open_own(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn moved_aside_warning(session_id: &str, aside: &Path) -> String {
    format!(
        "The saved state of session {session_id} was damaged and could not be read; it was moved to {} and the session starts inactive.",
        aside.display()
    )
}

/// The latest damaged state file moved aside next to `state` (which is gone).
fn moved_aside(state: &Path) -> Option<PathBuf> {
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

impl Store for FileStore {
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError> {
        self.read(session_id, now_stamp(), false)
    }

    fn update(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
    ) -> Result<Update, StoreError> {
        // The lock is released when `lock` is dropped, on every path out.
        let lock = self.lock(session_id)?;
        // Under the lock the file itself is the truth: a stamp (time, size,
        // inode) can repeat across versions, so the cache is not consulted.
        self.cache.forget(session_id);
        let current = self.read(session_id, now, true)?;
        let next = match apply(&current.state) {
            Ok(next) if next == current.state => return Ok(Update::Unchanged(current)),
            Ok(next) => next,
            Err(Refused { keep }) => {
                if let Some(kept) = keep.filter(|kept| *kept != current.state) {
                    let stored = Stored {
                        state: kept,
                        revision: current.revision + 1,
                        updated_at: now,
                        warning: None,
                    };
                    self.write(session_id, &stored)?;
                }
                return Ok(Update::Refused);
            }
        };
        let stored = Stored {
            state: next,
            revision: current.revision + 1,
            updated_at: now,
            warning: None,
        };
        self.write(session_id, &stored)?;
        drop(lock);
        Ok(Update::Written(stored))
    }

    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError> {
        let mut all = Vec::new();
        for id in self.session_ids()? {
            if self.file(&id).exists() {
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
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(read_error(&root)(e)),
        };
        Ok(entries
            .flatten()
            .filter(|entry| entry.path().is_dir())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|id| crate::core::session_id::check_session_id(id).is_ok())
            .collect())
    }

    fn most_recent(&mut self) -> Result<Option<String>, StoreError> {
        let root = self.dir.join(SESSIONS_DIR);
        let entries = match fs::read_dir(&root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read_error(&root)(e)),
        };
        let mut newest: Option<(std::time::SystemTime, String)> = None;
        for entry in entries.flatten() {
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
        let bytes = serde_json::to_vec(&next).map_err(|e| write_error(&path)(e.into()))?;
        replace_file(&path, &bytes, false).map_err(write_error(&path))?;
        Ok(next)
    }
}

/// A stamp for names of files moved aside.
fn now_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// State kept in this process only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: HashMap<String, Stored>,
    activities: HashMap<String, Activity>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn write(&mut self, session_id: &str, state: DebugState, now: u64) -> Stored {
        let entry = self
            .sessions
            .entry(session_id.to_string())
            .or_insert_with(Stored::empty);
        entry.state = state;
        entry.revision += 1;
        entry.updated_at = now;
        entry.warning = None;
        entry.clone()
    }
}

impl Store for MemoryStore {
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError> {
        Ok(self
            .sessions
            .get(session_id)
            .cloned()
            .unwrap_or_else(Stored::empty))
    }

    fn update(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
    ) -> Result<Update, StoreError> {
        let current = self.load(session_id)?;
        Ok(match apply(&current.state) {
            Ok(next) if next == current.state => Update::Unchanged(current),
            Ok(next) => Update::Written(self.write(session_id, next, now)),
            Err(Refused { keep }) => {
                if let Some(kept) = keep.filter(|kept| *kept != current.state) {
                    self.write(session_id, kept, now);
                }
                Update::Refused
            }
        })
    }

    fn session_ids(&mut self) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = self.sessions.keys().cloned().collect();
        ids.extend(
            self.activities
                .keys()
                .filter(|id| !self.sessions.contains_key(*id))
                .cloned(),
        );
        Ok(ids)
    }

    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError> {
        let mut all: Vec<(String, Stored)> = self
            .sessions
            .iter()
            .map(|(id, stored)| (id.clone(), stored.clone()))
            .collect();
        all.sort_by(|a, b| b.1.updated_at.cmp(&a.1.updated_at).then(a.0.cmp(&b.0)));
        Ok(all)
    }

    fn load_activity(&mut self, session_id: &str) -> Result<Activity, StoreError> {
        Ok(self.activities.get(session_id).cloned().unwrap_or_default())
    }

    fn update_activity(
        &mut self,
        session_id: &str,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<Activity, StoreError> {
        let current = self.load_activity(session_id)?;
        let Some(next) = changed_activity(&current, apply) else {
            return Ok(current);
        };
        self.activities.insert(session_id.to_string(), next.clone());
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::DebugSession;

    fn active() -> DebugState {
        DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)))
    }

    #[test]
    fn a_contended_lock_is_taken_when_released_and_held_by_the_waiters_own_handle() {
        let dir = std::env::temp_dir().join(format!("ds-store-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".lock");
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let holder = open();
        holder.lock().unwrap();
        let waiter = std::thread::spawn({
            let waiter_file = open();
            move || {
                wait_for_lock(&waiter_file).unwrap();
                waiter_file
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(holder);
        let waiter_file = waiter.join().unwrap();
        // The helper thread's handle is gone; the waiter's own still holds it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(
            open().try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(waiter_file);
        assert!(
            open().try_lock().is_ok(),
            "released with the waiter's handle"
        );
        assert_eq!(BLOCKED_HELPERS.load(Ordering::SeqCst), 0);
        let _ = fs::remove_dir_all(&dir);
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

    #[test]
    fn an_unchanged_state_is_not_written() {
        let mut store = MemoryStore::new();
        let update = store
            .update("s", 5, &mut |state| Ok(state.clone()))
            .unwrap();
        assert!(matches!(
            update,
            Update::Unchanged(Stored { revision: 0, .. })
        ));
        let update = store.update("s", 6, &mut |_| Ok(active())).unwrap();
        let Update::Written(stored) = update else {
            panic!("expected a write: {update:?}");
        };
        assert_eq!((stored.revision, stored.updated_at), (1, 6));
    }

    #[test]
    fn a_refused_step_keeps_only_what_it_asks_to_keep() {
        let mut store = MemoryStore::new();
        let update = store
            .update("s", 1, &mut |_| Err(Refused::default()))
            .unwrap();
        assert_eq!(update, Update::Refused);
        assert_eq!(store.load("s").unwrap().revision, 0);
        let keep = Some(active());
        store
            .update("s", 2, &mut |_| Err(Refused { keep: keep.clone() }))
            .unwrap();
        assert_eq!(store.load("s").unwrap().revision, 1);
    }

    #[test]
    fn sessions_list_the_most_recent_first() {
        let mut store = MemoryStore::new();
        store.update("old", 1, &mut |_| Ok(active())).unwrap();
        store.update("new", 9, &mut |_| Ok(active())).unwrap();
        let ids: Vec<String> = store.sessions().unwrap().into_iter().map(|s| s.0).collect();
        assert_eq!(ids, ["new", "old"]);
    }
}
