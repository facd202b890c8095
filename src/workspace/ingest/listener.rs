//! A session's listener for one target (issue 32): the ingest routes on the
//! one address that target reaches this machine by, admitting that
//! session's token only, for as long as the session lasts. It runs as a
//! process of its own (`debug-sidecar ingest-listen`), so it outlives the
//! face that asked for it (an MCP server ends with its harness, a hook at
//! once) while the person reproduces, and it exits by itself when the
//! session ends, the state directory goes, or another listener replaced it.
//!
//! `sessions/<id>/ingest-<target>.json` (`{bind, port, pid}`) says where it
//! listens: written by the listener before it reports its port, so any
//! process can put its URL on the board.

use super::{write_whole, Intake, Limits};
use crate::core::target::Target;
use crate::workspace::store::{FileStore, Store, SESSIONS_DIR};
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, BufReader};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How often a listener checks that its session still runs.
const WATCH: Duration = Duration::from_millis(500);
/// How long a face waits for a new listener to say its port.
const START_WAIT: Duration = Duration::from_secs(10);

/// Where a session's listener for a target listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listening {
    pub bind: IpAddr,
    pub port: u16,
    pub pid: u32,
}

impl Listening {
    fn file(state_dir: &Path, session_id: &str, target: Target) -> PathBuf {
        state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join(format!("ingest-{}.json", target.name()))
    }

    /// The session's listener for `target`, when its process still runs.
    pub fn read(state_dir: &Path, session_id: &str, target: Target) -> Option<Listening> {
        let file = Listening::file(state_dir, session_id, target);
        let handle = crate::workspace::runlog::open_own(&file).ok()?;
        let found: Listening = serde_json::from_reader(io::Read::take(handle, 4096)).ok()?;
        super::process_alive(found.pid).then_some(found)
    }

    /// `address:port` it listens on.
    pub fn address(&self) -> String {
        std::net::SocketAddr::new(self.bind, self.port).to_string()
    }

    /// Every target the session has a running listener for.
    pub fn all(state_dir: &Path, session_id: &str) -> Vec<(Target, Listening)> {
        Target::ALL
            .into_iter()
            .filter(|t| t.posts())
            .filter_map(|t| Some((t, Listening::read(state_dir, session_id, t)?)))
            .collect()
    }
}

/// The port of the session's listener for `target` on `bind`: the running
/// one, or a new one started for it.
pub fn ensure(
    root: &Path,
    state_dir: &Path,
    session_id: &str,
    target: Target,
    bind: IpAddr,
) -> io::Result<u16> {
    if let Some(found) = Listening::read(state_dir, session_id, target) {
        if found.bind == bind {
            return Ok(found.port);
        }
    }
    let mut command = Command::new(sidecar_program()?);
    command
        .arg("ingest-listen")
        .arg("--workspace")
        .arg(root)
        .arg("--state-dir")
        .arg(state_dir)
        .args(["--session", session_id, "--target", target.name()])
        .arg("--bind")
        .arg(bind.to_string())
        // Nothing of a hook's or a server's pipes: a harness waits for
        // them to close.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Not in the terminal's foreground group: a Ctrl-C meant for the
        // harness does not end the person's reproduction's listener.
        command.process_group(0);
    }
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no pipe"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(START_WAIT).unwrap_or_default();
    // Reaped by a thread, so it leaves no zombie behind in a long-lived face.
    std::thread::spawn(move || child.wait());
    match line.trim().strip_prefix("listening ") {
        Some(port) => port
            .parse()
            .map_err(|_| io::Error::other(format!("the listener said {line:?}"))),
        None => Err(io::Error::other(
            line.trim()
                .strip_prefix("error ")
                .map_or("the listener did not start".to_string(), str::to_string),
        )),
    }
}

/// Names the sidecar program that runs listeners, for a process that is
/// not it (a test that holds an engine in process).
pub const PROGRAM_ENV: &str = "DEBUG_SIDECAR_PROGRAM";

/// The debug-sidecar program: this one, or the one `PROGRAM_ENV` names.
fn sidecar_program() -> io::Result<PathBuf> {
    if let Some(program) = std::env::var_os(PROGRAM_ENV) {
        return Ok(PathBuf::from(program));
    }
    let this = std::env::current_exe()?;
    let named = this
        .file_stem()
        .is_some_and(|stem| stem.to_string_lossy().starts_with("debug-sidecar"));
    if named {
        Ok(this)
    } else {
        Err(io::Error::other(format!(
            "listeners run as the debug-sidecar program, and this is {} (set {PROGRAM_ENV})",
            this.display()
        )))
    }
}

/// The listener process: binds, records, reports `listening <port>` (or
/// `error <why>`) on stdout, and serves until its session ends.
pub fn serve(
    root: &Path,
    state_dir: &Path,
    session_id: &str,
    target: Target,
    bind: IpAddr,
) -> io::Result<()> {
    use std::io::Write;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let intake = Intake {
        redactor: crate::workspace::redaction::load(root, state_dir),
        paths: Some(std::sync::Arc::new(
            crate::workspace::targets::LivePaths::new(root, state_dir),
        )),
        session: Some(session_id.to_string()),
    };
    let started = super::start(
        state_dir,
        bind,
        Limits::standard(),
        runtime.handle(),
        intake,
    );
    let mut stdout = io::stdout();
    let address = match started {
        Ok(address) => address,
        Err(error) => {
            let _ = writeln!(stdout, "error cannot listen on {bind}: {error}");
            return Err(error);
        }
    };
    let listening = Listening {
        bind,
        port: address.port(),
        pid: std::process::id(),
    };
    let record = serde_json::to_vec(&listening).map_err(io::Error::other)?;
    let session_dir = state_dir.join(SESSIONS_DIR).join(session_id);
    let name = format!("ingest-{}.json", target.name());
    write_whole(&session_dir, &name, &record)?;
    writeln!(stdout, "listening {}", address.port())?;
    stdout.flush()?;
    let watched = (state_dir.to_path_buf(), session_id.to_string());
    runtime.block_on(async move {
        let (state_dir, session_id) = watched;
        loop {
            tokio::time::sleep(WATCH).await;
            if !still_wanted(&state_dir, &session_id, target, listening.pid) {
                return;
            }
        }
    });
    if Listening::read(state_dir, session_id, target).is_some_and(|f| f.pid == listening.pid) {
        let _ = std::fs::remove_file(Listening::file(state_dir, session_id, target));
    }
    Ok(())
}

/// Whether the listener should go on: its session is live, and its record
/// still names it.
fn still_wanted(state_dir: &Path, session_id: &str, target: Target, pid: u32) -> bool {
    let live = FileStore::new(state_dir)
        .load(session_id)
        .is_ok_and(|stored| stored.state.session().is_some());
    live && Listening::read(state_dir, session_id, target).is_some_and(|found| found.pid == pid)
}
