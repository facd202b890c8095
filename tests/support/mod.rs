//! Shared by the tests that talk to a real server: temporary workspaces,
//! spawning the built binary, and redacting what differs between runs.
#![allow(dead_code)]

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
pub const QUIET: Duration = Duration::from_millis(300);

/// A workspace directory removed on drop.
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    pub fn new(name: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "ds-test-{name}-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // Canonical, so paths the server reports compare equal.
        let root = root.canonicalize().unwrap();
        Workspace { root }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `debug-sidecar serve` in `root` with the test hooks on; stderr is discarded.
pub fn spawn(root: &Path) -> Connection {
    let mut command = Command::new(BIN);
    command
        .arg("serve")
        .current_dir(root)
        .env("DEBUG_SIDECAR_TEST_HOOKS", "1")
        .env_remove("DEBUG_SIDECAR_DIR")
        .stderr(std::process::Stdio::null());
    Connection::start(command).expect("the binary starts")
}

/// A served and initialized workspace.
pub fn initialized(root: &Path) -> Connection {
    let mut server = spawn(root);
    server.initialize(root, json!({})).expect("initialize");
    server
}

/// Replace what differs between runs: the workspace path, run-id stamps,
/// times and durations.
pub fn redact(value: &Value, root: &Path) -> Value {
    let root = root.to_string_lossy();
    match value {
        Value::String(text) => Value::String(redact_text(text, &root)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact(v, Path::new(&*root))).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, v)| {
                    let timed = key.ends_with("At") || key.ends_with("Ms") || key == "timestamp";
                    let v = if timed && v.is_number() {
                        json!("<time>")
                    } else {
                        redact(v, Path::new(&*root))
                    };
                    (key.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn redact_text(text: &str, root: &str) -> String {
    let text = redact_ingest_urls(&text.replace(root, "<workspace>"));
    // Run ids are `r<round>-<base36 millis>`: keep the round, hide the stamp.
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary && bytes[i] == b'r' {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let dash = i + 1 + digits;
            if digits > 0 && bytes.get(dash) == Some(&b'-') {
                let stamp = bytes[dash + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
                    .count();
                if stamp >= 6 {
                    out.push_str(&text[i..=dash]);
                    out.push_str("<stamp>");
                    i = dash + 1 + stamp;
                    continue;
                }
            }
        }
        let c = text[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The ingest server's port and the session's token differ per run.
fn redact_ingest_urls(text: &str) -> String {
    const START: &str = "http://127.0.0.1:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(START) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ')')
            .unwrap_or(tail.len());
        if tail[..end].contains("/ingest/") {
            out.push_str("<ingest-url>");
        } else {
            out.push_str(&tail[..end]);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `debug-sidecar hook <dialect> <event>` fed `input` on stdin, with
/// `DEBUG_SIDECAR_SESSION` set to `session` when given: the process output.
pub fn run_hook(
    dialect: &str,
    event: &str,
    input: &str,
    session: Option<&str>,
) -> std::process::Output {
    use std::io::Write;
    let mut command = Command::new(BIN);
    command
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env_remove("DEBUG_SIDECAR_DIR");
    if let Some(session) = session {
        command.env("DEBUG_SIDECAR_SESSION", session);
    }
    let mut child = command
        .args(["hook", dialect, event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A raw HTTP/1.1 POST of `body` to `url` with extra header lines; the
/// status code.
pub fn post(url: &str, headers: &str, body: &str) -> u16 {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer[9..12].parse().unwrap()
}

pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().unwrap().stdout == b"0\n"
}

/// `serve` in `root` as a user that file modes bind: root may write
/// anywhere, so then as `nobody`, who is given the workspace.
pub fn spawn_bound_by_modes(root: &Path) -> Connection {
    let mut command = if is_root() {
        let owned = Command::new("chown")
            .args(["-R", "65534:65534", root.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(owned.success());
        let mut command = Command::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            BIN,
            "serve",
        ]);
        command
    } else {
        let mut command = Command::new(BIN);
        command.arg("serve");
        command
    };
    command
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .stderr(Stdio::null());
    let mut server = Connection::start(command).expect("the binary starts");
    server.initialize(root, json!({})).expect("initialize");
    server
}

/// `command` run to its end, killed when it takes over 10 s.
pub fn output_within_10s(command: &mut Command) -> std::process::Output {
    output_within_seconds(command, 10)
}

/// `command` run to its end, killed when it takes over `seconds`.
pub fn output_within_seconds(command: &mut Command, seconds: u64) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{command:?} still ran after {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[allow(dead_code)]
/// Whether `command` is an executable on PATH (not every tool has a
/// `--version`: `go`, `gofmt`); under CI a missing one fails the test
/// (`scripts/test` installs it), else the test says it is skipped.
pub fn has_command(command: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(command))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{command} is not installed"
        );
        eprintln!("skipped: {command} is not installed");
    }
    found
}

/// A test tool `scripts/test` installs and names in `var`; None (the test
/// is skipped, saying so) outside it. Under CI a missing one fails: CI must
/// not pass by skipping.
pub fn installed_tool(var: &str) -> Option<std::ffi::OsString> {
    let value = std::env::var_os(var);
    if value.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{var} is not set; run the tests through scripts/test"
        );
        eprintln!("skipped: {var} is not set (scripts/test sets it)");
    }
    value
}

/// An MCP call's arguments from a JSON object.
pub fn arguments(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// An MCP tool result's text blocks, joined.
pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The binary run in `root` (with `path` as PATH when given), within 10 s.
pub fn sidecar(root: &Path, args: &[&str], path: Option<&std::ffi::OsStr>) -> std::process::Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION");
    if let Some(path) = path {
        command.env("PATH", path);
    }
    output_within_10s(&mut command)
}

/// `debug-sidecar mcp` in `root` with piped stdin and stdout, for a test
/// that speaks raw JSON-RPC lines to it (stderr dropped).
pub fn spawn_mcp_raw(root: &Path) -> std::process::Child {
    Command::new(BIN)
        .arg("mcp")
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env_remove("DEBUG_SIDECAR_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts")
}

/// A run's records, parsed.
pub fn records(file: &str) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A logpoint placed on `file:line` for hypothesis H1: the answer.
pub fn place_logpoint(server: &mut Connection, file: &str, line: u32, variables: Value) -> Value {
    server
        .request(
            "debug/probeSnippet",
            json!({"file": file, "kind": "logpoint", "line": line,
                   "hypothesisId": "H1", "variables": variables}),
        )
        .unwrap()
}

/// The hits of one run, as (location, data).
pub fn hits_of(log: &str) -> Vec<(String, Value)> {
    records(log)
        .into_iter()
        .filter(|r| r["source"] == "logpoint")
        .map(|r| {
            (
                r["location"].as_str().unwrap().to_string(),
                r["data"].clone(),
            )
        })
        .collect()
}

/// The current run's log file.
pub fn current_log(server: &mut Connection) -> String {
    let status = server.request("debug/status", json!({})).unwrap();
    status["logFile"].as_str().unwrap().to_string()
}

/// A session with these logpoints (file, line, expressions) placed: the
/// server and the current run's log file.
pub fn with_logpoints(root: &Path, logpoints: &[(&str, u32, Value)]) -> (Connection, String) {
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    for (file, line, variables) in logpoints {
        place_logpoint(&mut server, file, *line, variables.clone());
    }
    let log = current_log(&mut server);
    (server, log)
}

/// `debug-sidecar mcp` in `root`: the text each tool call answered.
pub fn mcp_tool_texts(root: &Path, calls: &[(&str, Value)]) -> Vec<String> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = spawn_mcp_raw(root);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "corpus", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (i, (name, arguments)) in calls.iter().enumerate() {
        send(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": name, "arguments": arguments}}),
        );
    }
    // In the order of the calls: a run_reproduction is answered after the
    // calls that follow it.
    let mut texts = vec![String::new(); calls.len()];
    let mut answered = 0;
    while answered < calls.len() {
        let line = lines.next().expect("an answer").unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = answer["id"].as_u64().filter(|id| *id > 0) {
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(!text.is_empty(), "{answer}");
            texts[id as usize - 1] = text.to_string();
            answered += 1;
        }
    }
    drop(stdin);
    let _ = child.wait();
    texts
}
