//! What the ingest server answers: the routes, CORS, and how a posted body
//! becomes lines of the session's current run.

use super::{is_token, trusted_token, MAX_RECORD, MAX_REQUEST, TOKEN_FILE};
use crate::workspace::store::SESSIONS_DIR;
use axum::body::{to_bytes, Body};
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
}

impl Ingest {
    fn session_for(&self, token: &str) -> Option<String> {
        if !is_token(token) {
            return None;
        }
        let mut tokens = self.tokens.lock().ok()?;
        if let Some(session) = tokens.get(token) {
            return Some(session.clone());
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
        tokens.get(token).cloned()
    }

    fn append(&self, session_id: &str, lines: &[u8]) -> io::Result<()> {
        let runs = self
            .state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join("runs");
        let _one_at_a_time = self.append.lock().map_err(|_| io::Error::other("lock"))?;
        // Only through the sidecar's own link, to a file of its own: never
        // created here (without a current run there is nothing to append
        // to), never followed out of `runs/`.
        let file = crate::workspace::runlog::active_target(&runs)?;
        let mut handle = crate::workspace::runlog::open_own_append(&file)?;
        handle.write_all(lines)
    }
}

pub(super) fn router(state_dir: &Path, body_timeout: Duration) -> Router {
    let ingest = Arc::new(Ingest {
        state_dir: state_dir.to_path_buf(),
        tokens: Mutex::new(HashMap::new()),
        append: Mutex::new(()),
        body_timeout,
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
    let bytes = match tokio::time::timeout(ingest.body_timeout, to_bytes(body, MAX_REQUEST)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return cors(
                StatusCode::PAYLOAD_TOO_LARGE,
                "{\"error\":\"request over 1 MiB\"}",
            )
        }
        Err(_) => {
            return cors(
                StatusCode::REQUEST_TIMEOUT,
                "{\"error\":\"the request body did not arrive in time\"}",
            )
        }
    };
    let lines = match records(&bytes) {
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
    match ingest.append(&session, &lines) {
        Ok(()) => cors(StatusCode::NO_CONTENT, ""),
        Err(error) => {
            tracing::warn!("ingest for {session} failed: {error}");
            cors(
                StatusCode::CONFLICT,
                "{\"error\":\"no current run to append to\"}",
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
fn records(body: &[u8]) -> Result<Vec<u8>, Refusal> {
    let text = std::str::from_utf8(body).map_err(|_| Refusal::Malformed)?;
    let values: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).map_err(|_| Refusal::Malformed))
            .collect::<Result<_, _>>()?,
    };
    if values.is_empty() {
        return Err(Refusal::Malformed);
    }
    let mut out = Vec::new();
    for value in values {
        if !value.is_object() {
            return Err(Refusal::Malformed);
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
    fn bodies_become_lines_all_or_nothing() {
        assert_eq!(records(b"{\"a\":1}").unwrap(), b"{\"a\":1}\n");
        assert_eq!(
            records(b"[{\"a\":1},{\"b\":2}]").unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(
            records(b"{\"a\":1}\n\n{\"b\":2}\n").unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(records(b"{\"a\":1}\nnope\n"), Err(Refusal::Malformed));
        assert_eq!(records(b"[1]"), Err(Refusal::Malformed));
        assert_eq!(records(b""), Err(Refusal::Malformed));
        let big = format!("{{\"data\":\"{}\"}}", "x".repeat(MAX_RECORD));
        assert_eq!(records(big.as_bytes()), Err(Refusal::TooLarge));
    }
}
