//! A small blocking client for `debug-sidecar serve`, speaking real
//! `Content-Length` frames over the child's pipes. The demo, the tests and
//! the benchmark drive the server through it, as an editor would.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// How long a request waits for its answer before the client gives up.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// A JSON-RPC error answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("the server did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the server closed its output")]
    Closed,
    #[error("talking to the server failed: {0}")]
    Io(#[from] io::Error),
}

pub struct Connection {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Notifications (and stray answers) read while waiting for an answer.
    backlog: VecDeque<Value>,
    next_id: i64,
}

impl Connection {
    /// Start `program serve` in `cwd`; its stderr goes to ours unless quiet.
    pub fn spawn(program: &Path, cwd: &Path, quiet_stderr: bool) -> io::Result<Self> {
        let mut command = Command::new(program);
        command
            .arg("serve")
            .current_dir(cwd)
            .stderr(if quiet_stderr {
                Stdio::null()
            } else {
                Stdio::inherit()
            });
        Self::start(command)
    }

    /// Start a prepared command (its stdin and stdout become the pipes).
    pub fn start(mut command: Command) -> io::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let (sender, incoming) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Ok(Some(message)) = read_frame(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Ok(Connection {
            stdin: child.stdin.take(),
            child,
            incoming,
            backlog: VecDeque::new(),
            next_id: 1,
        })
    }

    /// Write raw bytes to the server, framing and all.
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("stdin is closed"))?;
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    pub fn send(&mut self, message: &Value) -> io::Result<()> {
        let body = message.to_string();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body.as_bytes());
        self.send_raw(&frame)
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Send a request and wait for its answer; notifications read meanwhile
    /// are kept for `notifications`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        self.answer(&json!(id))
    }

    /// Wait for the answer with this id.
    pub fn answer(&mut self, id: &Value) -> Result<Value, ClientError> {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        if let Some(at) = self.backlog.iter().position(|m| is_answer_to(m, id)) {
            let message = self.backlog.remove(at).unwrap_or_default();
            return outcome(message);
        }
        loop {
            let message = self.receive_until(deadline)?;
            if is_answer_to(&message, id) {
                return outcome(message);
            }
            self.backlog.push_back(message);
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) -> io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// `initialize` + `initialized` for a workspace; returns the initialize result.
    pub fn initialize(&mut self, root: &Path, options: Value) -> Result<Value, ClientError> {
        let uri = format!("file://{}", root.display());
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "workspace"}],
                "initializationOptions": options,
            }),
        )?;
        self.notify("initialized", json!({}))?;
        Ok(result)
    }

    /// The next message that is not an answer we are waiting for, within `timeout`.
    pub fn next_message(&mut self, timeout: Duration) -> Option<Value> {
        if let Some(message) = self.backlog.pop_front() {
            return Some(message);
        }
        self.receive_until(Instant::now() + timeout).ok()
    }

    /// Drop messages until a notification of `method` satisfying `accept`
    /// arrives; returns it.
    pub fn wait_for(
        &mut self,
        method: &str,
        timeout: Duration,
        accept: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.next_message(left)?;
            if message["method"] == method && accept(&message["params"]) {
                return Some(message["params"].clone());
            }
        }
    }

    /// Every message that arrives within `quiet` of the last one.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        std::iter::from_fn(|| self.next_message(quiet)).collect()
    }

    /// `shutdown`, `exit`, and the process's exit status.
    pub fn shutdown(mut self) -> Result<ExitStatus, ClientError> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        self.wait()
    }

    /// Close stdin and wait for the process.
    pub fn wait(mut self) -> Result<ExitStatus, ClientError> {
        drop(self.stdin.take());
        Ok(self.child.wait()?)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn receive_until(&mut self, deadline: Instant) -> Result<Value, ClientError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => Err(ClientError::Timeout(left)),
            Err(RecvTimeoutError::Disconnected) => Err(ClientError::Closed),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn is_answer_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

fn outcome(message: Value) -> Result<Value, ClientError> {
    if let Some(error) = message.get("error") {
        return Err(RpcError {
            code: error["code"].as_i64().unwrap_or_default(),
            message: error["message"].as_str().unwrap_or_default().to_string(),
            data: error.get("data").cloned(),
        }
        .into());
    }
    Ok(message.get("result").cloned().unwrap_or(Value::Null))
}

/// One `Content-Length` frame; `None` at the end of the stream.
pub fn read_frame(reader: &mut impl BufRead) -> io::Result<Option<Value>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.ok_or_else(|| io::Error::other("a frame without Content-Length"))?;
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::other(format!("a frame that is not JSON: {e}")))
}
