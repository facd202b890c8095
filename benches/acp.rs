//! Benchmark of the ACP proxy: one prompt turn in which the agent streams
//! 20,000 message chunks, read by a client straight from the agent and
//! through `debug-sidecar acp` (no debug session, then an active one whose
//! turn states are recorded), in the same run. Prints each against the
//! direct read as a ratio; nothing here asserts a time.
//!
//! `cargo bench --bench acp`

use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
const CHUNKS: usize = 20_000;
const RUNS: usize = 5;

/// An agent that answers initialize and session/new, and streams CHUNKS
/// message chunks in each prompt turn.
const FLOOD: &str = r#"
import json, sys
chunks = int(sys.argv[1])
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    method, rid = m.get("method"), m.get("id")
    if method == "initialize":
        out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1}}) + "\n")
    elif method == "session/new":
        out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s"}}) + "\n")
    elif method == "session/prompt":
        chunk = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "word " * 8}}}}) + "\n"
        for _ in range(chunks):
            out.write(chunk)
        out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}) + "\n")
    out.flush()
"#;

/// One session: the time from the prompt to its answer, with every line
/// before it read.
fn turn(program: &str, args: &[&str], root: &Path) -> Duration {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |id: u64, method: &str, params: serde_json::Value| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{request}").unwrap();
        input.flush().unwrap();
        let started = Instant::now();
        let mut seen = 0;
        for line in lines.by_ref() {
            let message: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                break;
            }
            seen += 1;
        }
        (started.elapsed(), seen)
    };
    ask(1, "initialize", json!({"protocolVersion": 1}));
    let cwd = root.to_string_lossy();
    ask(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    let (took, seen) = ask(
        3,
        "session/prompt",
        json!({"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]}),
    );
    assert!(seen >= CHUNKS, "{seen} updates reached the client");
    drop(input);
    let _ = child.kill();
    let _ = child.wait();
    took
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let root = std::env::temp_dir().join(format!("ds-bench-acp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let flood = root.join(".git/flood.py");
    std::fs::write(&flood, FLOOD).unwrap();
    let flood = flood.to_string_lossy().into_owned();
    let chunks = CHUNKS.to_string();
    let direct = ["python3", flood.as_str(), chunks.as_str()];
    let mut proxied = vec!["acp", "--nudges", "0", "--"];
    proxied.extend(direct);

    let measure = |with_session: bool| {
        let mut direct_times = Vec::new();
        let mut proxy_times = Vec::new();
        for _ in 0..RUNS {
            let _ = std::fs::remove_dir_all(root.join(".debug-sidecar"));
            if with_session {
                let started = Command::new(BIN)
                    .args(["start", "the total is wrong"])
                    .current_dir(&root)
                    .output()
                    .unwrap();
                assert!(started.status.success());
            }
            direct_times.push(turn("python3", &direct[1..], &root));
            proxy_times.push(turn(BIN, &proxied, &root));
        }
        (median(direct_times), median(proxy_times))
    };
    println!("acp proxy: one turn of {CHUNKS} message chunks, median of {RUNS}");
    for (label, with_session) in [("no debug session", false), ("active session", true)] {
        let (direct, proxy) = measure(with_session);
        println!(
            "  {label:<18} direct {direct:7.1} ms   through the proxy {proxy:7.1} ms   ratio {:.2}x",
            proxy / direct
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
