//! Watching the state directory so a long-lived process learns of writes by
//! other processes (another `serve`, an `mcp` face, a hook call).

use super::store::{ACTIVITY_FILE, SESSIONS_DIR, STATE_FILE};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// When a new session directory is looked at again.
const NEW_DIRECTORY_RECHECK: Duration = Duration::from_millis(150);

/// Calls `changed(session_id)` whenever a session's state or activity file
/// is replaced.
/// The watcher stops when the returned value is dropped.
pub fn watch_sessions(
    state_dir: &Path,
    changed: impl Fn(String) + Send + Sync + 'static,
) -> notify::Result<RecommendedWatcher> {
    let sessions = state_dir.join(SESSIONS_DIR);
    let root = sessions.clone();
    let changed = Arc::new(changed);
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<Event>| match event {
            Ok(event) if !may_change_a_session(&event.kind) => {}
            Ok(event) => {
                let mut seen: Vec<String> = Vec::new();
                for path in &event.paths {
                    let Some(id) = session_of(&root, path) else {
                        continue;
                    };
                    if seen.contains(&id) {
                        continue;
                    }
                    seen.push(id.clone());
                    if path.parent() == Some(root.as_path()) {
                        // A new session directory: its first files may be
                        // written before the watch on it exists, so look
                        // again once they have had time to land.
                        let again = Arc::clone(&changed);
                        let id = id.clone();
                        std::thread::spawn(move || {
                            std::thread::sleep(NEW_DIRECTORY_RECHECK);
                            again(id);
                        });
                    }
                    changed(id);
                }
            }
            Err(error) => tracing::warn!("watching the state directory failed: {error}"),
        })?;
    watcher.watch(&sessions, RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// Reads raise access events, and the refresh a change triggers reads the
/// files again: answering those would loop forever. Only writes count.
fn may_change_a_session(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(_) | EventKind::Other)
}

/// `<sessions>/<id>/state.json` (or `activity.json`, or the directory
/// `<sessions>/<id>` itself) names session `<id>`; any other path nothing.
fn session_of(sessions: &Path, path: &Path) -> Option<String> {
    // A new session directory: files written into it before the watcher
    // added a watch for it raise no events, so its creation counts too.
    if path.parent()? == sessions {
        return Some(path.file_name()?.to_string_lossy().into_owned());
    }
    let name = path.file_name()?;
    if name != STATE_FILE && name != ACTIVITY_FILE {
        return None;
    }
    let dir: PathBuf = path.parent()?.to_path_buf();
    if dir.parent()? != sessions {
        return None;
    }
    Some(dir.file_name()?.to_string_lossy().into_owned())
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
    fn only_state_files_name_a_session() {
        let sessions = Path::new("/w/.debug-sidecar/sessions");
        assert_eq!(
            session_of(sessions, &sessions.join("abc/state.json")),
            Some("abc".into())
        );
        assert_eq!(
            session_of(sessions, &sessions.join("abc/activity.json")),
            Some("abc".into())
        );
        assert_eq!(
            session_of(sessions, &sessions.join("abc")),
            Some("abc".into())
        );
        assert_eq!(session_of(sessions, &sessions.join("abc/.lock")), None);
        assert_eq!(
            session_of(sessions, &sessions.join("abc/runs/state.json")),
            None
        );
        assert_eq!(
            session_of(sessions, &sessions.join("abc/.state.json.1-2.tmp")),
            None
        );
    }
}
