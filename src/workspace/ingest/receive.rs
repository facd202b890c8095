//! What the ingest server answers: the routes, CORS, and how a posted body
//! becomes lines of the session's current run (only while the session is
//! active and the run open).

use super::{is_token, trusted_token, Intake, MAX_RECORD, MAX_REQUEST, TOKEN_FILE};
use crate::core::model::{DebugState, Stage};
use crate::workspace::runlog;
use crate::workspace::store::{FileStore, Refused, Store, StoreError, SESSIONS_DIR};
use axum::body::{Body, HttpBody};
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Ingest {
    state_dir: PathBuf,
    /// token -> session, refreshed from the token files on a miss.
    tokens: Mutex<HashMap<String, String>>,
    /// One append at a time, so concurrent posts never interleave lines.
    append: Mutex<()>,
    /// How long a body may take once its header is in.
    body_timeout: Duration,
    /// Secrets in posted records are redacted before they reach the run,
    /// locations mapped, and only its session admitted when it names one.
    intake: Intake,
}

impl Ingest {
    fn session_for(&self, token: &str) -> Option<String> {
        if !is_token(token) {
            return None;
        }
        let admitted = |session: &String| {
            self.intake
                .session
                .as_ref()
                .is_none_or(|only| only == session)
        };
        let mut tokens = self.tokens.lock().ok()?;
        if let Some(session) = tokens.get(token) {
            return Some(session.clone()).filter(admitted);
        }
        tokens.clear();
        for entry in fs::read_dir(self.state_dir.join(SESSIONS_DIR))
            .ok()?
            .flatten()
        {
            if let Some(found) = trusted_token(&entry.path().join(TOKEN_FILE)) {
                let id = entry.file_name().to_string_lossy().into_owned();
                tokens.insert(found, id);
            }
        }
        tokens.get(token).cloned().filter(admitted)
    }

    /// Append `lines` to the session's current run while the session is
    /// active and the run open. Blocking: the session's lock may be held by
    /// a command.
    fn append(&self, session_id: &str, lines: &[u8]) -> Result<(), NotAppended> {
        // One waiter for the session's lock at a time: the store caps the
        // helpers blocked on it per process.
        let _one_at_a_time = self.append.lock().unwrap_or_else(|e| e.into_inner());
        append_under_lock(&self.state_dir, session_id, lines)
    }
}

/// Appends `lines` under the session's lock, reading its state fresh: a
/// command that ends the session or starts the next run comes wholly
/// before or after this append. The state itself is never written here.
fn append_under_lock(state_dir: &Path, session_id: &str, lines: &[u8]) -> Result<(), NotAppended> {
    let runs = state_dir.join(SESSIONS_DIR).join(session_id).join("runs");
    let mut outcome = Err(NotAppended::Ended);
    FileStore::new(state_dir)
        .update(session_id, now_ms(), &mut |state| {
            outcome = append_to_open_run(&runs, state, lines);
            Err(Refused::default())
        })
        .map_err(NotAppended::State)?;
    outcome
}

/// Appends lines the sidecar writes for the person (a mark) to the
/// session's current run, as posted lines are: only while the session is
/// active, not cleaning up, and the run open. The error says why not.
pub fn append_to_current_run(
    state_dir: &Path,
    session_id: &str,
    lines: &[u8],
) -> Result<(), String> {
    append_under_lock(state_dir, session_id, lines).map_err(|why| match why {
        NotAppended::Ended => "no debug session is active".to_string(),
        NotAppended::CleaningUp => "the session is cleaning up: its last run is closed".to_string(),
        NotAppended::NoRun(error) => format!("no current run to append to ({error})"),
        NotAppended::State(error) => format!("the session's state could not be read ({error})"),
    })
}

/// Why a request's body was not read.
#[derive(Debug)]
enum BodyError {
    TooLarge,
    Broken,
}

/// The body in one buffer, each frame copied in and let go at once: a body
/// sent in a million 1-byte chunks costs its bytes, not a buffer per chunk
/// (hyper's frames would otherwise keep their read buffers alive).
async fn body_bytes(mut body: Body, max: usize) -> Result<Vec<u8>, BodyError> {
    let mut out = Vec::new();
    loop {
        let frame = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
        match frame {
            None => return Ok(out),
            Some(Err(_)) => return Err(BodyError::Broken),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    if out.len() + data.len() > max {
                        return Err(BodyError::TooLarge);
                    }
                    out.extend_from_slice(&data);
                }
            }
        }
    }
}

/// Why posted lines were not appended.
#[derive(Debug)]
enum NotAppended {
    /// No active session (ended, aborted, or never started).
    Ended,
    /// Marked fixed: the last run was closed, and probes are being removed.
    CleaningUp,
    /// No run of the sidecar's own to append to.
    NoRun(io::Error),
    /// The session's state could not be read (or its lock was held too long).
    State(StoreError),
}

fn append_to_open_run(runs: &Path, state: &DebugState, lines: &[u8]) -> Result<(), NotAppended> {
    let session = state.session().ok_or(NotAppended::Ended)?;
    if session.stage == Stage::CleaningUp {
        return Err(NotAppended::CleaningUp);
    }
    // A link left on an older run (a process killed before switching it)
    // is repaired first: the state, read under the lock, is the truth.
    if let Err(error) = runlog::follow_run(runs, session.run_id()) {
        tracing::warn!("{error}");
    }
    // Only through the sidecar's own link, to the run the state names:
    // never followed out of `runs/`.
    // While the agent's `run_reproduction` holds the link, posted lines are
    // its run's, like every other probe's (`runlog::lend_active`).
    let linked = runlog::linked_run(runs, session.run_id(), now_ms());
    let file = runlog::active_target(runs).map_err(NotAppended::NoRun)?;
    if file != runlog::run_file(runs, &linked) {
        return Err(NotAppended::NoRun(io::Error::other(format!(
            "{} is not the session's current run {}",
            file.display(),
            session.run_id()
        ))));
    }
    let mut handle = runlog::open_own_append(&file).map_err(NotAppended::NoRun)?;
    handle.write_all(lines).map_err(NotAppended::NoRun)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub(super) fn router(state_dir: &Path, body_timeout: Duration, intake: Intake) -> Router {
    let ingest = Arc::new(Ingest {
        state_dir: state_dir.to_path_buf(),
        tokens: Mutex::new(HashMap::new()),
        append: Mutex::new(()),
        body_timeout,
        intake,
    });
    Router::new()
        .route(
            "/health",
            get(|| async { cors(StatusCode::OK, "{\"ok\":true}") }),
        )
        .route(
            "/ingest/{token}",
            post(receive).options(|| async { cors(StatusCode::NO_CONTENT, "") }),
        )
        .with_state(ingest)
}

/// Every answer allows any origin: the page posting is on another origin,
/// and the token, not the origin, is what admits a line.
fn cors(status: StatusCode, body: &'static str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    if !body.is_empty() {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    response
}

async fn receive(
    State(ingest): State<Arc<Ingest>>,
    UrlPath(token): UrlPath<String>,
    method: Method,
    body: Body,
) -> Response {
    debug_assert_eq!(method, Method::POST);
    let Some(session) = ingest.session_for(&token) else {
        return cors(StatusCode::FORBIDDEN, "{\"error\":\"unknown token\"}");
    };
    // A body that stalls would hold its connection for ever.
    let bytes = match tokio::time::timeout(ingest.body_timeout, body_bytes(body, MAX_REQUEST)).await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(BodyError::TooLarge)) => {
            return cors(
                StatusCode::PAYLOAD_TOO_LARGE,
                "{\"error\":\"request over 1 MiB\"}",
            )
        }
        Ok(Err(BodyError::Broken)) => {
            return cors(
                StatusCode::BAD_REQUEST,
                "{\"error\":\"the request body broke off\"}",
            )
        }
        Err(_) => {
            return cors(
                StatusCode::REQUEST_TIMEOUT,
                "{\"error\":\"the request body did not arrive in time\"}",
            )
        }
    };
    let lines = match records(&bytes, &ingest.intake) {
        Ok(lines) => lines,
        Err(Refusal::TooLarge) => {
            return cors(
                StatusCode::PAYLOAD_TOO_LARGE,
                "{\"error\":\"record over 64 KiB\"}",
            )
        }
        Err(Refusal::Malformed) => {
            return cors(
                StatusCode::BAD_REQUEST,
                "{\"error\":\"not JSON or NDJSON objects\"}",
            )
        }
    };
    let (appending, id) = (Arc::clone(&ingest), session.clone());
    let outcome = tokio::task::spawn_blocking(move || appending.append(&id, &lines)).await;
    match outcome {
        Ok(Ok(())) => cors(StatusCode::NO_CONTENT, ""),
        Ok(Err(NotAppended::Ended)) => cors(
            StatusCode::CONFLICT,
            "{\"error\":\"the session has ended\"}",
        ),
        Ok(Err(NotAppended::CleaningUp)) => cors(
            StatusCode::CONFLICT,
            "{\"error\":\"the session is cleaning up: its last run is closed\"}",
        ),
        Ok(Err(NotAppended::NoRun(error))) => {
            tracing::warn!("ingest for {session} failed: {error}");
            cors(
                StatusCode::CONFLICT,
                "{\"error\":\"no current run to append to\"}",
            )
        }
        Ok(Err(NotAppended::State(error))) => {
            tracing::warn!("ingest for {session} failed: {error}");
            cors(
                StatusCode::SERVICE_UNAVAILABLE,
                "{\"error\":\"the session's state could not be read; try again\"}",
            )
        }
        Err(error) => {
            tracing::error!("ingest append failed: {error}");
            cors(
                StatusCode::INTERNAL_SERVER_ERROR,
                "{\"error\":\"internal error\"}",
            )
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    TooLarge,
    Malformed,
}

/// A body as JSON lines: one object, an array of objects, or NDJSON. All or
/// nothing: one bad record refuses the request.
fn records(body: &[u8], intake: &Intake) -> Result<Vec<u8>, Refusal> {
    let text = std::str::from_utf8(body).map_err(|_| Refusal::Malformed)?;
    let mut values: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).map_err(|_| Refusal::Malformed))
            .collect::<Result<_, _>>()?,
    };
    if values.is_empty() || !values.iter().all(Value::is_object) {
        return Err(Refusal::Malformed);
    }
    intake.redactor.records(body, &mut values);
    let paths = intake
        .paths
        .as_ref()
        .map(|live| live.current())
        .unwrap_or_default();
    let mut out = Vec::new();
    for mut value in values {
        let mapped = value
            .get("location")
            .and_then(Value::as_str)
            .and_then(|location| paths.location(location));
        if let Some(mapped) = mapped {
            value["location"] = Value::String(mapped);
        }
        // A page's mark keeps the time it arrived when it says none.
        let mark = value.get("source").and_then(Value::as_str)
            == Some(crate::workspace::logread::marks::MARKER);
        if mark && value.get("timestamp").is_none() {
            value["timestamp"] = Value::from(now_ms());
        }
        let line = serde_json::to_vec(&value).map_err(|_| Refusal::Malformed)?;
        if line.len() > MAX_RECORD {
            return Err(Refusal::TooLarge);
        }
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_only_to_the_open_run_the_state_names() {
        use crate::core::model::DebugSession;
        use crate::core::run_id::run_id;
        let runs = std::env::temp_dir().join(format!("ds-ingest-runs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&runs);
        let (first, second) = (run_id(1, 1_000), run_id(2, 2_000));
        let mut session = DebugSession::new("p".into(), first.clone(), 0);
        runlog::start_run(&runs, &first).unwrap();
        let state = |session: &DebugSession| DebugState::Active(Box::new(session.clone()));

        append_to_open_run(&runs, &state(&session), b"{}\n").unwrap();
        assert_eq!(
            runlog::count_lines(&runlog::run_file(&runs, &first)).unwrap(),
            1
        );
        // The link moved on without the state (a process killed between
        // the two): the state is the truth, and the link is put back.
        runlog::start_run(&runs, &second).unwrap();
        append_to_open_run(&runs, &state(&session), b"{}\n").unwrap();
        assert_eq!(
            runlog::count_lines(&runlog::run_file(&runs, &first)).unwrap(),
            2
        );
        // A run file that is a link is never linked to, nor written.
        let outside = runs.with_extension("outside");
        fs::write(&outside, "").unwrap();
        fs::remove_file(runlog::run_file(&runs, &first)).unwrap();
        std::os::unix::fs::symlink(&outside, runlog::run_file(&runs, &first)).unwrap();
        let refused = append_to_open_run(&runs, &state(&session), b"{}\n");
        assert!(matches!(refused, Err(NotAppended::NoRun(_))), "{refused:?}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "");
        let _ = fs::remove_file(&outside);
        session.stage = Stage::CleaningUp;
        let refused = append_to_open_run(&runs, &state(&session), b"{}\n");
        assert!(
            matches!(refused, Err(NotAppended::CleaningUp)),
            "{refused:?}"
        );
        let refused = append_to_open_run(&runs, &DebugState::Inactive, b"{}\n");
        assert!(matches!(refused, Err(NotAppended::Ended)), "{refused:?}");
        assert_eq!(
            runlog::count_lines(&runlog::run_file(&runs, &second)).unwrap(),
            0
        );
        fs::remove_dir_all(runs).unwrap();
    }

    #[test]
    fn bodies_become_lines_all_or_nothing() {
        assert_eq!(
            records(b"{\"a\":1}", &Intake::default()).unwrap(),
            b"{\"a\":1}\n"
        );
        assert_eq!(
            records(b"[{\"a\":1},{\"b\":2}]", &Intake::default()).unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(
            records(b"{\"a\":1}\n\n{\"b\":2}\n", &Intake::default()).unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(
            records(b"{\"a\":1}\nnope\n", &Intake::default()),
            Err(Refusal::Malformed)
        );
        assert_eq!(records(b"[1]", &Intake::default()), Err(Refusal::Malformed));
        assert_eq!(records(b"", &Intake::default()), Err(Refusal::Malformed));
        let big = format!("{{\"data\":\"{}\"}}", "x".repeat(MAX_RECORD));
        assert_eq!(
            records(big.as_bytes(), &Intake::default()),
            Err(Refusal::TooLarge)
        );
    }
}
