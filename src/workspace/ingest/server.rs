//! The ingest server's accept loop, with bounded resources (issue 13): a
//! client that opens connections and never finishes a request (a header
//! sent a byte at a time, a body that stops, a kept-alive connection left
//! idle, an answer never read) must not take the descriptors the rest of
//! the process needs for its state files. `axum::serve` has no such bounds,
//! so each connection is served here by hyper, with the router as its
//! service.

use super::receive;
use super::IngestInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// Connections served at once. A browser opens at most six per origin, so a
/// few pages, simulators and containers stay far below it; 64 descriptors
/// are a small share of the usual soft limit of 1024. Never more than a
/// quarter of the process's own limit (`RLIMIT_NOFILE`).
pub const MAX_CONNECTIONS: usize = 64;
/// From the moment a request is awaited (a new connection, or a kept-alive
/// one after its last answer) until its header is complete: so it is also
/// the idle keep-alive timeout. A client on loopback sends its header in
/// one write; 10 s only cuts off one that trickles it or sends nothing.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// From the complete header until the whole body arrived (1 MiB at most,
/// milliseconds on loopback); a body that stalls is answered 408.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// A connection's whole life. Then it is closed after its current answer,
/// and at the latest `BODY_TIMEOUT` later: this bounds a client that never
/// reads its answers. A busy page just opens a new connection each minute.
pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(60);
/// The pause after a failed accept (out of descriptors), so the loop never
/// spins while the connection waits in the kernel's queue.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Shorter timeouts for tests, `<header>,<body>,<age>` in milliseconds;
/// honoured only with the test hooks on (`DEBUG_SIDECAR_TEST_HOOKS=1`).
pub const TEST_LIMITS_ENV: &str = "DEBUG_SIDECAR_TEST_INGEST_MS";

/// What one server lets its clients hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub connections: usize,
    pub header: Duration,
    pub body: Duration,
    pub age: Duration,
}

impl Limits {
    /// The limits above, the connection count within the descriptor limit.
    pub fn standard() -> Limits {
        Limits {
            connections: MAX_CONNECTIONS.min(descriptor_share()),
            header: HEADER_TIMEOUT,
            body: BODY_TIMEOUT,
            age: MAX_CONNECTION_AGE,
        }
    }

    /// `standard`, with the timeouts of `TEST_LIMITS_ENV` when `test_hooks`.
    pub fn from_env(test_hooks: bool) -> Limits {
        let standard = Limits::standard();
        if !test_hooks {
            return standard;
        }
        std::env::var(TEST_LIMITS_ENV)
            .ok()
            .and_then(|spec| standard.with_timeouts(&spec))
            .unwrap_or(standard)
    }

    fn with_timeouts(self, spec: &str) -> Option<Limits> {
        let millis: Vec<u64> = spec
            .split(',')
            .map(|part| part.trim().parse().ok().filter(|ms| *ms > 0))
            .collect::<Option<_>>()?;
        let [header, body, age] = millis[..] else {
            return None;
        };
        Some(Limits {
            header: Duration::from_millis(header),
            body: Duration::from_millis(body),
            age: Duration::from_millis(age),
            ..self
        })
    }
}

/// A quarter of the soft descriptor limit: the rest is the process's own.
fn descriptor_share() -> usize {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        if let Some(current) = limit.current {
            return usize::try_from(current / 4).unwrap_or(usize::MAX).max(1);
        }
    }
    usize::MAX
}

/// Bind the server on `ip` (the port `ingest.json` records when it is free,
/// else any) and serve on `runtime` until the process ends. Synchronous, so
/// the engine can start it the moment a session first needs its URL. Where
/// it listens is recorded by the engine, before it first hands out a URL: a
/// workspace without a session gets no state directory.
pub fn start(
    state_dir: &Path,
    ip: IpAddr,
    limits: Limits,
    runtime: &tokio::runtime::Handle,
    intake: super::Intake,
) -> io::Result<SocketAddr> {
    let preferred = IngestInfo::read(state_dir)
        .filter(|info| !info.is_alive() || info.pid == std::process::id())
        .map(|info| info.port);
    let listener = match preferred {
        Some(port) => match std::net::TcpListener::bind((ip, port)) {
            Ok(listener) => listener,
            Err(_) => std::net::TcpListener::bind((ip, 0))?,
        },
        None => std::net::TcpListener::bind((ip, 0))?,
    };
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    let listener = {
        let _entered = runtime.enter();
        TcpListener::from_std(listener)?
    };
    let app = receive::router(state_dir, limits.body, intake);
    let refused = Arc::new(AtomicU64::new(0));
    runtime.spawn(accept_loop(listener, app, limits, refused.clone()));
    runtime.spawn(record_refusals(state_dir.to_path_buf(), refused));
    Ok(address)
}

/// How often the refusal count is written, when it changed.
const REFUSALS_RECORDED: Duration = Duration::from_millis(250);

/// Keeps `ingest-busy.json` at the count of connections refused, for the
/// board: written only when it changed, at most every `REFUSALS_RECORDED`,
/// so a flood costs no write per connection. The state directory is
/// created by the engine before any URL is handed out.
async fn record_refusals(state_dir: std::path::PathBuf, refused: Arc<AtomicU64>) {
    let mut written = 0;
    loop {
        tokio::time::sleep(REFUSALS_RECORDED).await;
        let now = refused.load(Ordering::Relaxed);
        if now == written || !state_dir.is_dir() {
            continue;
        }
        let record = serde_json::json!({"refused": now, "pid": std::process::id()});
        match super::write_whole(&state_dir, super::BUSY_FILE, record.to_string().as_bytes()) {
            Ok(()) => written = now,
            Err(error) => tracing::warn!("could not record the ingest refusals: {error}"),
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    app: axum::Router,
    limits: Limits,
    refused: Arc<AtomicU64>,
) {
    let slots = Arc::new(Semaphore::new(limits.connections));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header);
    let mut full = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::debug!("ingest accept failed: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        // Full: answered 503 and closed at once, so its descriptor is free
        // again and the kernel's queue keeps moving (a connection left
        // queued would wait behind every idle one), and the client can tell
        // a full server from a dead one.
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !full {
                tracing::warn!(
                    "ingest: {} connections open; new ones are answered 503 until one ends",
                    limits.connections
                );
                full = true;
            }
            refuse_busy(stream);
            refused.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        full = false;
        let app = app.clone();
        let service = hyper::service::service_fn(move |request| app.clone().oneshot(request));
        let connection = http.serve_connection(TokioIo::new(stream), service);
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!("ingest connection ended: {error}");
                    }
                }
                () = tokio::time::sleep(limits.age) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(limits.body, connection).await;
                }
            }
            drop(slot);
        });
    }
}

/// What a connection beyond the limit is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
Content-Type: application/json\r\nContent-Length: 37\r\nConnection: close\r\n\r\n\
{\"error\":\"too many connections open\"}";

/// Answers a connection the server has no room for, without waiting on it:
/// what it already sent is read and dropped (a close with unread bytes
/// would reset the connection and lose the answer), the answer goes out in
/// one write, and the socket is closed.
fn refuse_busy(stream: tokio::net::TcpStream) {
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match stream.try_read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    let _ = stream.try_write(BUSY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_answer_states_its_own_length() {
        let text = std::str::from_utf8(BUSY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
        assert!(serde_json::from_str::<serde_json::Value>(body).is_ok());
    }

    #[test]
    fn test_timeouts_are_read_whole_or_not_at_all() {
        let standard = Limits::standard();
        assert!(standard.connections >= 1 && standard.connections <= MAX_CONNECTIONS);
        let short = standard.with_timeouts("100, 200,300").unwrap();
        assert_eq!(short.header, Duration::from_millis(100));
        assert_eq!(short.body, Duration::from_millis(200));
        assert_eq!(short.age, Duration::from_millis(300));
        assert_eq!(short.connections, standard.connections);
        for bad in ["", "1,2", "1,2,3,4", "1,x,3", "0,1,2", "-1,2,3"] {
            assert_eq!(standard.with_timeouts(bad), None, "{bad:?}");
        }
    }
}
