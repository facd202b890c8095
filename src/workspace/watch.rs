//! Watching the state directory so a long-lived process learns of writes by
//! other processes (another `serve`, an `mcp` face, a hook call), and of
//! lines programs append to run logs.

use super::runlog::{Appended, LogTail};
use super::store::{ACTIVITY_FILE, SESSIONS_DIR, STATE_FILE};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// When a new session directory is looked at again.
const NEW_DIRECTORY_RECHECK: Duration = Duration::from_millis(150);

/// How long appends to one run log are gathered into one report: a program
/// logging in a tight loop raises an event per write.
pub const LOG_GATHER: Duration = Duration::from_millis(100);

/// What changed under the state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watched {
    /// A session's state or activity file was replaced (or its directory made).
    Session(String),
    /// Any session may have changed unheard: events were lost, or the
    /// directory was watched only after sessions were written into it.
    Everything,
    /// Complete lines reached a run's log file. They are counted here, on
    /// the watcher's own thread, so a long log never holds up the engine.
    RunLog {
        session_id: String,
        run_id: String,
        appended: Appended,
    },
}

/// What a path under `sessions/` names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Found {
    Session(String),
    RunLog { session_id: String, run_id: String },
}

/// How far each run file's lines have been reported, per watcher.
type Tails = Arc<Mutex<HashMap<PathBuf, LogTail>>>;

/// Calls `changed` whenever a session's state or activity file is replaced
/// and, at most once per [`LOG_GATHER`] per run, when a run log grows.
/// The watcher stops when the returned value is dropped.
/// `all_new`: the directory appeared after the caller started, so run logs
/// already in it were written unheard and are reported too.
pub fn watch_sessions(
    state_dir: &Path,
    all_new: bool,
    changed: impl Fn(Watched) + Send + Sync + 'static,
) -> notify::Result<RecommendedWatcher> {
    let sessions = state_dir.join(SESSIONS_DIR);
    let root = sessions.clone();
    let changed = Arc::new(changed);
    let gathering: Arc<Mutex<HashSet<Found>>> = Arc::default();
    let tails: Tails = Arc::default();
    // Lines written to a run log in a directory made before the watch on it
    // existed raise no events: once the files have had time to land, every
    // run log under a new directory is read as news.
    let sweep = {
        let (root, gathering, tails, changed) = (
            root.clone(),
            Arc::clone(&gathering),
            Arc::clone(&tails),
            Arc::clone(&changed),
        );
        move |under: PathBuf| {
            let (root, gathering, tails, changed) = (
                root.clone(),
                Arc::clone(&gathering),
                Arc::clone(&tails),
                Arc::clone(&changed),
            );
            std::thread::spawn(move || {
                std::thread::sleep(NEW_DIRECTORY_RECHECK);
                for file in run_logs_under(&under) {
                    if let Some(what) = classify(&root, &file) {
                        gather(&gathering, &tails, &changed, what, &file);
                    }
                }
            });
        }
    };
    if all_new {
        sweep(sessions.clone());
    }
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<Event>| match event {
            // The kernel's queue overflowed: events were lost.
            Ok(event) if event.need_rescan() => changed(Watched::Everything),
            Ok(event) if !may_change_a_session(&event.kind) => {}
            Ok(event) => {
                let mut seen: Vec<Found> = Vec::new();
                for path in &event.paths {
                    if matches!(event.kind, EventKind::Create(_)) && path.is_dir() {
                        sweep(path.clone());
                    }
                    let Some(what) = classify(&root, path) else {
                        continue;
                    };
                    if seen.contains(&what) {
                        continue;
                    }
                    seen.push(what.clone());
                    match &what {
                        Found::RunLog { .. } => gather(&gathering, &tails, &changed, what, path),
                        Found::Session(id) => {
                            if path.parent() == Some(root.as_path()) {
                                // A new session directory: its first files may be
                                // written before the watch on it exists, so look
                                // again once they have had time to land.
                                let again = Arc::clone(&changed);
                                let id = id.clone();
                                std::thread::spawn(move || {
                                    std::thread::sleep(NEW_DIRECTORY_RECHECK);
                                    again(Watched::Session(id));
                                });
                            }
                            changed(Watched::Session(id.clone()));
                        }
                    }
                }
            }
            Err(error) => tracing::warn!("watching the state directory failed: {error}"),
        })?;
    watcher.watch(&sessions, RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// Watches a state directory that may not exist yet. Until it does, only
/// its parent is watched (without recursion), so a server in a workspace
/// that never had a session creates nothing in it. Once the directory is
/// there (made by this process's first write or by another process), the
/// sessions inside are watched as [`watch_sessions`] does and every session
/// already there is reported. If it is deleted, the wait starts again.
pub struct StateWatch {
    _parent: Option<RecommendedWatcher>,
    /// Holds the sessions' watcher: dropping it stops the watch.
    _inner: Arc<StateWatchInner>,
}

struct StateWatchInner {
    state_dir: PathBuf,
    sessions: Mutex<Option<RecommendedWatcher>>,
    changed: Arc<dyn Fn(Watched) + Send + Sync>,
}

pub fn watch_state_dir(
    state_dir: &Path,
    changed: impl Fn(Watched) + Send + Sync + 'static,
) -> notify::Result<StateWatch> {
    let inner = Arc::new(StateWatchInner {
        state_dir: state_dir.to_path_buf(),
        sessions: Mutex::new(None),
        changed: Arc::new(changed),
    });
    let existed = state_dir.is_dir();
    let Some(parent) = state_dir.parent().filter(|p| p.is_dir()) else {
        // Nothing to wait on: make the directory now.
        inner.activate(false)?;
        return Ok(StateWatch {
            _parent: None,
            _inner: inner,
        });
    };
    // The parent stays watched: the directory may also be deleted (a `git
    // clean -xdf`) and made again, which the watch inside it cannot see.
    let waiting = Arc::clone(&inner);
    let mut parent_watcher =
        notify::recommended_watcher(move |event: notify::Result<Event>| match event {
            Ok(event) if event.paths.iter().any(|p| *p == waiting.state_dir) => {
                if matches!(event.kind, EventKind::Remove(_)) || !waiting.state_dir.is_dir() {
                    waiting.deactivate();
                } else if let Err(error) = waiting.activate(true) {
                    tracing::warn!("could not watch {}: {error}", waiting.state_dir.display());
                }
            }
            Ok(_) => {}
            Err(error) => tracing::warn!("watching the workspace failed: {error}"),
        })?;
    parent_watcher.watch(parent, RecursiveMode::NonRecursive)?;
    if state_dir.is_dir() {
        // There already, or made between the first look and the watch (no
        // event will come, and sessions may have been written unheard).
        inner.activate(!existed)?;
    }
    Ok(StateWatch {
        _parent: Some(parent_watcher),
        _inner: inner,
    })
}

impl StateWatchInner {
    /// The directory is gone: its watch with it, until it is made again.
    fn deactivate(&self) {
        if let Ok(mut sessions) = self.sessions.lock() {
            *sessions = None;
        }
    }

    /// Start watching the sessions, once. `late`: the directory appeared
    /// after the server started, so sessions may have been written before
    /// the watch existed.
    fn activate(&self, late: bool) -> notify::Result<()> {
        let mut sessions = self
            .sessions
            .lock()
            .map_err(|_| notify::Error::generic("the state watch was poisoned"))?;
        if sessions.is_some() {
            return Ok(());
        }
        super::store::ensure_state_dir(&self.state_dir)
            .map_err(|e| notify::Error::generic(&e.to_string()))?;
        let changed = Arc::clone(&self.changed);
        *sessions = Some(watch_sessions(&self.state_dir, late, move |w| changed(w))?);
        drop(sessions);
        if late {
            (self.changed)(Watched::Everything);
        }
        Ok(())
    }
}

/// The first write to a run log starts a short wait; writes during it join
/// the one report sent when it ends. A write after that starts a new wait,
/// so the last lines are always reported.
fn gather<F: Fn(Watched) + Send + Sync + 'static>(
    gathering: &Arc<Mutex<HashSet<Found>>>,
    tails: &Tails,
    changed: &Arc<F>,
    what: Found,
    file: &Path,
) {
    let Found::RunLog { session_id, run_id } = what.clone() else {
        return;
    };
    let fresh = gathering
        .lock()
        .map(|mut set| set.insert(what.clone()))
        .unwrap_or(false);
    if !fresh {
        return;
    }
    let (gathering, tails, changed) = (
        Arc::clone(gathering),
        Arc::clone(tails),
        Arc::clone(changed),
    );
    let file = file.to_path_buf();
    std::thread::spawn(move || {
        std::thread::sleep(LOG_GATHER);
        if let Ok(mut set) = gathering.lock() {
            set.remove(&what);
        }
        let advanced = match tails.lock() {
            Ok(mut tails) => tails.entry(file.clone()).or_default().advance(&file),
            Err(_) => return,
        };
        match advanced {
            Ok(Some(appended)) => changed(Watched::RunLog {
                session_id,
                run_id,
                appended,
            }),
            Ok(None) => {}
            Err(error) => tracing::warn!("could not read {}: {error}", file.display()),
        }
    });
}

/// Run log files at most two levels under `dir` (a session directory, its
/// `runs/`, or the sessions directory itself).
fn run_logs_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 2 => pending.push((path, depth + 1)),
                Ok(kind) if kind.is_file() => found.push(path),
                _ => {}
            }
        }
    }
    found
}

/// Reads raise access events, and the refresh a change triggers reads the
/// files again: answering those would loop forever. Only writes count.
fn may_change_a_session(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(_) | EventKind::Other)
}

/// `<sessions>/<id>/state.json` or `activity.json` (or the directory
/// `<sessions>/<id>` itself) names session `<id>`; `<sessions>/<id>/runs/
/// <run>.jsonl` that run's log; any other path nothing.
fn classify(sessions: &Path, path: &Path) -> Option<Found> {
    // A new session directory: files written into it before the watcher
    // added a watch for it raise no events, so its creation counts too.
    if path.parent()? == sessions {
        return Some(Found::Session(
            path.file_name()?.to_string_lossy().into_owned(),
        ));
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    let dir: PathBuf = path.parent()?.to_path_buf();
    if dir.file_name()? == "runs" && dir.parent()?.parent()? == sessions {
        // Probes write through `active.jsonl`, which the kernel reports
        // under the run file's own name.
        let run_id = name.strip_suffix(".jsonl")?;
        crate::core::run_id::parse_run_id(run_id)?;
        let session = dir.parent()?.file_name()?.to_string_lossy().into_owned();
        return Some(Found::RunLog {
            session_id: session,
            run_id: run_id.to_string(),
        });
    }
    if name != STATE_FILE && name != ACTIVITY_FILE {
        return None;
    }
    if dir.parent()? != sessions {
        return None;
    }
    Some(Found::Session(
        dir.file_name()?.to_string_lossy().into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_state_file_is_no_change() {
        use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RenameMode};
        assert!(!may_change_a_session(&EventKind::Access(AccessKind::Open(
            AccessMode::Read
        ))));
        assert!(!may_change_a_session(&EventKind::Access(
            AccessKind::Close(AccessMode::Read)
        )));
        assert!(may_change_a_session(&EventKind::Modify(ModifyKind::Name(
            RenameMode::To
        ))));
        assert!(may_change_a_session(&EventKind::Create(CreateKind::File)));
    }

    #[test]
    fn only_state_files_and_run_logs_name_something() {
        let sessions = Path::new("/w/.debug-sidecar/sessions");
        let session = |id: &str| Some(Found::Session(id.into()));
        assert_eq!(
            classify(sessions, &sessions.join("abc/state.json")),
            session("abc")
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/activity.json")),
            session("abc")
        );
        assert_eq!(classify(sessions, &sessions.join("abc")), session("abc"));
        assert_eq!(classify(sessions, &sessions.join("abc/.lock")), None);
        assert_eq!(
            classify(sessions, &sessions.join("abc/runs/state.json")),
            None
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/.state.json.1-2.tmp")),
            None
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/runs/r2-1700000000000.jsonl")),
            Some(Found::RunLog {
                session_id: "abc".into(),
                run_id: "r2-1700000000000".into()
            })
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/runs/active.jsonl")),
            None
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/artifacts/r1-5.jsonl")),
            None
        );
        assert_eq!(
            classify(sessions, &sessions.join("abc/x/runs/r1-5.jsonl")),
            None
        );
    }
}
