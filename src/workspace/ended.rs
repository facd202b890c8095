//! Sessions that ended with their cleanup verified, kept for their fix
//! certificate: the session as it was when the stop ended it, and what the
//! verifying scan read. One file per ended session,
//! `sessions/<id>/ended/<endedAt>.json`; the certificate is made from it
//! and the session's run files whenever it is asked for. A session that
//! was aborted keeps only the files its probes were in,
//! `sessions/<id>/aborted-files.json`, so `check` still reads them (a
//! removed Go block's imports) once no ledger names them.

use crate::core::model::DebugSession;
use crate::workspace::runlog::{create_own, open_own};
use crate::workspace::store::SESSIONS_DIR;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

const ENDED_DIR: &str = "ended";
/// A record larger than this is not one the sidecar wrote.
const MAX_RECORD: u64 = 64 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedSession {
    pub session_id: String,
    /// When the stop found no probe left (ms since the epoch).
    pub ended_at: u64,
    /// Files the verifying scan read.
    pub files_scanned: usize,
    pub session: DebugSession,
}

fn ended_dir(state_dir: &Path, session_id: &str) -> PathBuf {
    state_dir
        .join(SESSIONS_DIR)
        .join(session_id)
        .join(ENDED_DIR)
}

/// Keeps `record`; returns its file.
pub fn write(state_dir: &Path, record: &EndedSession) -> io::Result<PathBuf> {
    let dir = ended_dir(state_dir, &record.session_id);
    fs::create_dir_all(&dir)?;
    let file = dir.join(format!("{}.json", record.ended_at));
    let mut out = create_own(&file)?;
    out.write_all(&serde_json::to_vec(record).map_err(io::Error::other)?)?;
    out.sync_all()?;
    Ok(file)
}

const ABORTED_FILES: &str = "aborted-files.json";
/// An aborted session's list larger than this is not one the sidecar wrote.
const MAX_ABORTED_FILES: u64 = 4 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct AbortedFiles {
    files: Vec<String>,
}

/// Keeps the files an aborted session's probes were in (workspace-relative),
/// beside the ones kept at an earlier abort of the same session.
pub fn keep_aborted_files(state_dir: &Path, session_id: &str, files: &[String]) -> io::Result<()> {
    let mut kept = aborted_files(state_dir, session_id);
    kept.extend(files.iter().cloned());
    kept.sort();
    kept.dedup();
    let dir = state_dir.join(SESSIONS_DIR).join(session_id);
    fs::create_dir_all(&dir)?;
    let file = dir.join(ABORTED_FILES);
    // A name of its own per write (two aborts at once write two files), and
    // no leftover when the write fails.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let temporary = dir.join(format!(
        ".{ABORTED_FILES}.{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let written = (|| {
        let mut out = create_own(&temporary)?;
        out.write_all(
            &serde_json::to_vec(&AbortedFiles { files: kept }).map_err(io::Error::other)?,
        )?;
        out.sync_all()?;
        fs::rename(&temporary, &file)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// The files kept for an aborted session, or none (also when the record is
/// missing, too large or not one the sidecar wrote: `check` then reads what
/// it reads anyway).
pub fn aborted_files(state_dir: &Path, session_id: &str) -> Vec<String> {
    let file = state_dir
        .join(SESSIONS_DIR)
        .join(session_id)
        .join(ABORTED_FILES);
    let Ok(handle) = open_own(&file) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if handle
        .take(MAX_ABORTED_FILES + 1)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.len() as u64 > MAX_ABORTED_FILES
    {
        return Vec::new();
    }
    let mut files = serde_json::from_slice::<AbortedFiles>(&bytes)
        .map(|kept| kept.files)
        .unwrap_or_default();
    // The state directory may come from elsewhere: only paths inside the
    // workspace are read.
    files.retain(|file| crate::core::model::is_inside_path(file));
    files
}

/// Why no certificate can be made.
#[derive(Debug, thiserror::Error)]
pub enum EndedError {
    #[error(
        "no session of this workspace has ended with its cleanup verified{}; a certificate is \
         written for one that has (Mark fixed, then the agent's cleanup)",
        for_session(.0)
    )]
    None(Option<String>),
    #[error("cannot read {}: {source}", file.display())]
    Read { file: PathBuf, source: io::Error },
    #[error("{} is not a record this version of debug-sidecar wrote: {reason}", file.display())]
    Unreadable { file: PathBuf, reason: String },
}

fn for_session(session: &Option<String>) -> String {
    session
        .as_deref()
        .map(|id| format!(" as session {}", crate::core::escape::inline_cut(id, 80)))
        .unwrap_or_default()
}

/// The latest ended session (of `session_id` when given): its record.
pub fn latest(state_dir: &Path, session_id: Option<&str>) -> Result<EndedSession, EndedError> {
    let sessions_dir = state_dir.join(SESSIONS_DIR);
    let sessions: Vec<String> = match session_id {
        Some(id) => vec![id.to_string()],
        None => fs::read_dir(&sessions_dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut newest: Option<(u64, PathBuf)> = None;
    for session in sessions {
        if crate::core::session_id::check_session_id(&session).is_err() {
            continue;
        }
        let Ok(entries) = fs::read_dir(ended_dir(state_dir, &session)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(stamp) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            if newest.as_ref().is_none_or(|(best, _)| stamp > *best) {
                newest = Some((stamp, entry.path()));
            }
        }
    }
    let Some((_, file)) = newest else {
        return Err(EndedError::None(session_id.map(str::to_string)));
    };
    read(&file)
}

/// The session directory a record's file is in.
fn session_of(file: &Path) -> Option<&str> {
    file.parent()?.parent()?.file_name()?.to_str()
}

fn read(file: &Path) -> Result<EndedSession, EndedError> {
    let read_error = |source| EndedError::Read {
        file: file.to_path_buf(),
        source,
    };
    let handle = open_own(file).map_err(read_error)?;
    let mut bytes = Vec::new();
    handle
        .take(MAX_RECORD + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_RECORD {
        return Err(EndedError::Unreadable {
            file: file.to_path_buf(),
            reason: "it is larger than 64 MiB".into(),
        });
    }
    // The state directory may come from elsewhere: the parser's words
    // quote the file, so they are made inert.
    let unreadable = |reason: String| EndedError::Unreadable {
        file: file.to_path_buf(),
        reason: crate::core::escape::inline_cut(&reason, 300),
    };
    let record: EndedSession =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
    if session_of(file) != Some(record.session_id.as_str()) {
        return Err(unreadable(
            "its session id is not the one of its folder".into(),
        ));
    }
    if record.session.rounds.is_empty() {
        return Err(unreadable("its session has no round".into()));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, ended_at: u64) -> EndedSession {
        EndedSession {
            session_id: id.into(),
            ended_at,
            files_scanned: 3,
            session: DebugSession::new(format!("problem {ended_at}"), "r1-a".into(), 1),
        }
    }

    #[test]
    fn the_latest_record_is_read_back_of_any_session_or_of_one() {
        let dir = std::env::temp_dir().join(format!("ds-ended-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        assert!(matches!(latest(&dir, None), Err(EndedError::None(None))));
        write(&dir, &record("a", 10)).unwrap();
        write(&dir, &record("b", 30)).unwrap();
        write(&dir, &record("a", 20)).unwrap();
        assert_eq!(latest(&dir, None).unwrap(), record("b", 30));
        assert_eq!(latest(&dir, Some("a")).unwrap(), record("a", 20));
        assert!(matches!(
            latest(&dir, Some("c")),
            Err(EndedError::None(Some(_)))
        ));
        // A damaged record is named, never taken for another.
        fs::write(ended_dir(&dir, "a").join("40.json"), b"{").unwrap();
        let error = latest(&dir, Some("a")).unwrap_err().to_string();
        assert!(
            error.contains("40.json") && error.contains("not a record"),
            "{error}"
        );
        // One that names another session, or whose session has no round.
        let mut forged = serde_json::to_value(record("b", 50)).unwrap();
        fs::write(ended_dir(&dir, "a").join("50.json"), forged.to_string()).unwrap();
        let error = latest(&dir, Some("a")).unwrap_err().to_string();
        assert!(error.contains("not the one of its folder"), "{error}");
        forged["sessionId"] = "a".into();
        forged["session"]["rounds"] = serde_json::json!([]);
        fs::write(ended_dir(&dir, "a").join("60.json"), forged.to_string()).unwrap();
        let error = latest(&dir, Some("a")).unwrap_err().to_string();
        assert!(error.contains("has no round"), "{error}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
