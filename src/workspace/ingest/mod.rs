//! The loopback ingest server (DESIGN section 7): code that cannot write the
//! run's file (a browser page, a mobile simulator, a container) posts its
//! probe lines to `POST /ingest/<token>`, and they are appended to the
//! session's current run. One server per workspace, started by `serve`
//! when a live debug session first needs its URL (an editor window with no
//! debug session opens no port); each session has its own token, so a line lands in the session it was
//! written for and a wrong token writes nothing.
//!
//! Files: `<state dir>/ingest.json` says where the server listens
//! (`{port, pid}`), so every process can put the URL on the blackboard and a
//! restarted server takes the same port when it is free;
//! `sessions/<id>/ingest-token` holds the session's token.
//!
//! This file: where the server listens and the tokens; `server`: the
//! accept loop and its limits; `receive`: the routes and how a body becomes
//! lines of the run.

pub mod listener;
mod receive;
mod server;

pub use receive::append_to_current_run;
pub use server::{
    start, Limits, BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS, MAX_CONNECTION_AGE,
    TEST_LIMITS_ENV,
};

use super::store::SESSIONS_DIR;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

/// The largest request body accepted.
pub const MAX_REQUEST: usize = 1024 * 1024;
/// The largest single record accepted.
pub const MAX_RECORD: usize = 64 * 1024;
pub const INFO_FILE: &str = "ingest.json";
pub const TOKEN_FILE: &str = "ingest-token";
/// How many connections the workspace's running server refused while it
/// was full (`{"refused": n, "pid": p}`), for the board.
pub const BUSY_FILE: &str = "ingest-busy.json";

/// Connections the workspace's ingest server, while it runs, answered 503
/// because it was full: probes that post may have lost lines. 0 when none,
/// or when the server that counted them is gone.
pub fn busy_refusals(state_dir: &Path) -> u64 {
    #[derive(Deserialize)]
    struct Busy {
        refused: u64,
        pid: u32,
    }
    let Some(busy) = fs::read(state_dir.join(BUSY_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Busy>(&bytes).ok())
    else {
        return 0;
    };
    let running =
        IngestInfo::read(state_dir).is_some_and(|info| info.pid == busy.pid && info.is_alive());
    if running {
        busy.refused
    } else {
        0
    }
}

/// Writes a whole small file under a name of its own and renames it into
/// place, so a reader never sees half of it; unique per call, as two
/// threads of one process may write at once.
fn write_whole(state_dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    fs::create_dir_all(state_dir)?;
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = state_dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    fs::write(&temp, bytes)?;
    fs::rename(&temp, state_dir.join(name))
}

/// Where a workspace's ingest server listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngestInfo {
    pub port: u16,
    pub pid: u32,
}

impl IngestInfo {
    pub fn read(state_dir: &Path) -> Option<IngestInfo> {
        let bytes = fs::read(state_dir.join(INFO_FILE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Record it in `ingest.json`, so the workspace's other processes (the
    /// MCP face, hooks) can hand out the URL and a restarted server can take
    /// the same port again.
    pub fn record(&self, state_dir: &Path) -> io::Result<()> {
        write_whole(
            state_dir,
            INFO_FILE,
            &serde_json::to_vec(self).map_err(io::Error::other)?,
        )
    }

    /// Whether the process that wrote it still runs (always true where
    /// that cannot be told).
    pub fn is_alive(&self) -> bool {
        process_alive(self.pid)
    }
}

/// Whether process `pid` still runs (always true where that cannot be told).
pub(super) fn process_alive(pid: u32) -> bool {
    !cfg!(target_os = "linux") || Path::new(&format!("/proc/{pid}")).exists()
}

/// A token file the sidecar minted for this user: a regular file (not a
/// link), owned by this user, readable by nobody else (mode 0600), holding a
/// token. A token that arrived with the directory (committed to a
/// repository, where git keeps no such mode, or unpacked from elsewhere) is
/// never honoured: the sidecar mints a new one.
pub(super) fn trusted_token(file: &Path) -> Option<String> {
    let handle = crate::workspace::runlog::open_own(file).ok()?;
    let meta = handle.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o077 != 0 {
            return None;
        }
    }
    let mut text = String::new();
    handle.take(128).read_to_string(&mut text).ok()?;
    let token = text.trim();
    is_token(token).then(|| token.to_string())
}

/// The session's token, made on first use (and made again when the one
/// there is not trusted).
pub fn session_token(state_dir: &Path, session_id: &str) -> io::Result<String> {
    let dir = state_dir.join(SESSIONS_DIR).join(session_id);
    let file = dir.join(TOKEN_FILE);
    if let Some(token) = trusted_token(&file) {
        return Ok(token);
    }
    match fs::remove_file(&file) {
        Ok(()) => tracing::warn!(
            "{} was not minted here; a new token replaces it",
            file.display()
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(&dir)?;
    let token = random_token()?;
    let temp = dir.join(format!(".{TOKEN_FILE}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&temp);
    {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(&temp)?.write_all(token.as_bytes())?;
    }
    // Two processes making one at once: the first link wins for both.
    match fs::hard_link(&temp, &file) {
        Ok(()) => {
            let _ = fs::remove_file(&temp);
            Ok(token)
        }
        Err(_) => {
            let _ = fs::remove_file(&temp);
            trusted_token(&file).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is not a token this user's sidecar minted",
                        file.display()
                    ),
                )
            })
        }
    }
}

pub(super) fn is_token(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The session's token when one was minted; never mints one.
pub fn existing_token(state_dir: &Path, session_id: &str) -> Option<String> {
    trusted_token(
        &state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join(TOKEN_FILE),
    )
}

/// The URL probes of the session post to, when a server runs for the workspace.
pub fn ingest_url(state_dir: &Path, info: &IngestInfo, session_id: &str) -> Option<String> {
    let token = session_token(state_dir, session_id).ok()?;
    Some(url(info, &token))
}

/// The session's URL when its token was minted already; never mints one.
pub fn existing_ingest_url(
    state_dir: &Path,
    info: &IngestInfo,
    session_id: &str,
) -> Option<String> {
    Some(url(info, &existing_token(state_dir, session_id)?))
}

fn url(info: &IngestInfo, token: &str) -> String {
    format!("http://127.0.0.1:{}/ingest/{token}", info.port)
}

/// What a server does with what it receives: redaction, the path map for
/// records' locations, and the one session it admits (a target's listener)
/// or every session of the workspace (`None`).
#[derive(Debug, Clone, Default)]
pub struct Intake {
    pub redactor: crate::core::redact::Redactor,
    /// The workspace's path map, as its settings hold it when a record
    /// arrives (none: locations are kept as posted).
    pub paths: Option<std::sync::Arc<crate::workspace::targets::LivePaths>>,
    pub session: Option<String>,
}

/// The default address: loopback only.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_made_once_and_kept() {
        let dir = std::env::temp_dir().join(format!("ds-ingest-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = session_token(&dir, "s").unwrap();
        assert!(is_token(&first));
        assert_eq!(session_token(&dir, "s").unwrap(), first);
        assert_ne!(session_token(&dir, "t").unwrap(), first);
        fs::remove_dir_all(dir).unwrap();
    }
}
