//! The agent's `run_reproduction` through the real binary: the lines a
//! placed probe writes while it runs land in the agent's run, never in the
//! person's; the person's `run` of the same program writes into the
//! person's run again afterwards; a server killed mid-run leaves no link on
//! the agent's run once its lease is over; and the MCP server answers other
//! calls while the program runs.

mod support;

use debug_sidecar::rpc::client::Connection;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// The tests that time a running program take turns: on 2 loaded cores a
/// neighbour's programs would delay theirs past what they measure.
static TIMED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn sidecar(root: &Path, args: &[&str]) -> std::process::Output {
    output_within_10s(
        Command::new(BIN)
            .args(args)
            .current_dir(root)
            .env_remove("DEBUG_SIDECAR_DIR")
            .env_remove("DEBUG_SIDECAR_SESSION"),
    )
}

/// `prog.sh`: a real placed shell probe (from `debug/probeSnippet`) that
/// records `$who`, then a sleep of `sleep` seconds.
fn probed_program(server: &mut Connection, root: &Path, sleep: &str) {
    std::fs::write(root.join("prog.sh"), "").unwrap();
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": "prog.sh", "hypothesisId": "H1", "variables": ["who"]}),
        )
        .unwrap();
    let snippet = placed["snippet"].as_str().unwrap();
    let body = format!("#!/bin/sh\nwho=${{1-nobody}}\n{snippet}\necho done\nsleep {sleep}\n");
    std::fs::write(root.join("prog.sh"), body).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = root.join("prog.sh");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The probe's records in a run file: the values of `who` it recorded.
fn probe_values(file: &Path) -> Vec<String> {
    if !file.exists() {
        return Vec::new();
    }
    records(file.to_str().unwrap())
        .iter()
        .filter(|r| r["probeId"].is_string() && r["source"].is_null())
        .map(|r| r["data"]["who"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The run files of `runs` other than `person_run`'s.
fn agent_runs(runs: &Path, person_run: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".jsonl") && name != "active.jsonl" && !name.starts_with(person_run)
        })
        .collect();
    found.sort();
    found
}

async fn tool(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments(args)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn probe_lines_of_the_agents_run_are_its_own_and_other_calls_are_answered_meanwhile() {
    let _turn = TIMED.lock().await;
    let workspace = Workspace::new("agent-run-probes");
    let root = workspace.root.clone();
    let (mut server, started) = started_session(&root);
    let person_run = started["runId"].as_str().unwrap().to_string();
    let person_file = PathBuf::from(started["logFile"].as_str().unwrap());
    let ingest = started["ingestUrl"].as_str().unwrap().to_string();
    let runs = person_file.parent().unwrap().to_path_buf();
    probed_program(&mut server, &root, "2");

    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").current_dir(&root);
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let client = std::sync::Arc::new(client);

    let began = Instant::now();
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            let result = tool(
                &client,
                "run_reproduction",
                json!({"command": ["./prog.sh", "agent"], "timeoutSec": 20}),
            )
            .await;
            (result, began.elapsed())
        })
    };
    // Once the probe has written (it runs before the sleep): the status,
    // and the person's run, meanwhile.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let status = tool(&client, "debug_status", json!({})).await;
    let status_at = began.elapsed();
    assert_ne!(status.is_error, Some(true), "{}", text(&status));
    let person = sidecar(&root, &["run", "--", "./prog.sh", "person-meanwhile"]);
    // A browser probe meanwhile (the agent's reproduction drives one).
    post(&ingest, "browser-agent");
    let (result, run_took) = running.await.unwrap();
    eprintln!("debug_status answered after {status_at:?}; run_reproduction took {run_took:?}");
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(run_took >= Duration::from_secs(2), "{run_took:?}");
    assert!(
        status_at < Duration::from_millis(1500),
        "debug_status waited for the run: answered after {status_at:?}, the run took {run_took:?}"
    );
    assert_ne!(
        person.status.code(),
        Some(0),
        "refused while the agent runs"
    );
    let said = String::from_utf8_lossy(&person.stderr);
    assert!(
        said.contains("the agent is running the reproduction itself"),
        "{said}"
    );
    assert!(
        text(&result).contains("are in this run too, not in the person's"),
        "{}",
        text(&result)
    );

    let agent = agent_runs(&runs, &person_run);
    assert_eq!(agent.len(), 1, "{agent:?}");
    assert_eq!(
        probe_values(&agent[0]),
        ["agent", "browser-agent"],
        "the probes' lines are the agent's"
    );
    assert!(records(agent[0].to_str().unwrap())
        .iter()
        .any(|r| r["source"] == "exit" && r["agentRun"] == true));
    assert_eq!(
        std::fs::metadata(&person_file).unwrap().len(),
        0,
        "nothing went into the person's run"
    );
    assert_eq!(
        std::fs::read_link(runs.join("active.jsonl")).unwrap(),
        PathBuf::from(format!("{person_run}.jsonl")),
        "the link is back on the person's run"
    );

    // The person's run of the same program writes into the person's run.
    let person = sidecar(&root, &["run", "--", "./prog.sh", "person"]);
    assert_eq!(person.status.code(), Some(0), "{person:?}");
    post(&ingest, "browser-person");
    assert_eq!(probe_values(&person_file), ["person", "browser-person"]);
    assert_eq!(
        probe_values(&agent[0]),
        ["agent", "browser-agent"],
        "the agent's run is untouched"
    );
    std::sync::Arc::into_inner(client)
        .expect("the only client")
        .cancel()
        .await
        .unwrap();
}

/// A browser probe's post to the ingest server, `who` as its data.
fn post(url: &str, who: &str) {
    let script = "import json, sys, urllib.request\n\
        body = json.dumps({'probeId': 'b1', 'data': {'who': sys.argv[2]}}).encode()\n\
        urllib.request.urlopen(urllib.request.Request(sys.argv[1], body, \
        {'Content-Type': 'application/json'}), timeout=5).read()\n";
    let posted = output_within_10s(Command::new("python3").args(["-c", script, url, who]));
    assert!(posted.status.success(), "{posted:?}");
}

/// A served workspace with a session started: the server and the start's answer.
fn started_session(root: &Path) -> (Connection, Value) {
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    (server, started)
}

/// A line of JSON-RPC to a raw `debug-sidecar mcp`.
fn send(stdin: &mut impl Write, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn a_server_killed_mid_run_leaves_the_link_to_the_persons_run_once_its_lease_is_over() {
    let _turn = TIMED.blocking_lock();
    let workspace = Workspace::new("agent-run-killed");
    let root = workspace.root.clone();
    let (mut server, started) = started_session(&root);
    let person_run = started["runId"].as_str().unwrap().to_string();
    let person_file = PathBuf::from(started["logFile"].as_str().unwrap());
    let runs = person_file.parent().unwrap().to_path_buf();
    probed_program(&mut server, &root, "6");

    let mut mcp = Command::new(BIN)
        .arg("mcp")
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    let mut stdout = BufReader::new(mcp.stdout.take().unwrap());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "kill-test", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_reproduction",
            // Long enough for a loaded machine to reach the probe's line.
            "arguments": {"command": ["./prog.sh", "agent"], "timeoutSec": 6}}}),
    );
    // The probe has written into the agent's run; the server dies mid-run.
    // Generous: a loaded machine (CI's two cores) starts processes slowly.
    let deadline = Instant::now() + Duration::from_secs(30);
    let agent = loop {
        let found = agent_runs(&runs, &person_run);
        if let Some(file) = found.first().filter(|f| !probe_values(f).is_empty()) {
            break file.clone();
        }
        if Instant::now() >= deadline {
            let listing: Vec<_> = std::fs::read_dir(&runs)
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            panic!("no agent run with the probe's line was recorded; runs: {listing:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    mcp.kill().unwrap();
    mcp.wait().unwrap();
    let linked = std::fs::read_link(runs.join("active.jsonl")).unwrap();
    assert_eq!(
        linked,
        PathBuf::from(agent.file_name().unwrap()),
        "the link was lent to the agent's run"
    );

    // While the lease lasts the person's run is refused, said plainly.
    let refused = sidecar(&root, &["run", "--", "./prog.sh", "too-early"]);
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("more second(s)"),
        "{refused:?}"
    );
    // The lease (the time cap of 6 s and its slack) runs out by itself.
    let deadline = Instant::now() + Duration::from_secs(30);
    let person = loop {
        let person = sidecar(&root, &["run", "--", "./prog.sh", "person"]);
        if person.status.code() == Some(0) {
            break person;
        }
        assert!(Instant::now() < deadline, "{person:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(String::from_utf8_lossy(&person.stdout).contains("done"));
    assert_eq!(
        std::fs::read_link(runs.join("active.jsonl")).unwrap(),
        PathBuf::from(format!("{person_run}.jsonl")),
        "the link is repaired"
    );
    assert_eq!(probe_values(&person_file), ["person"]);
    assert_eq!(probe_values(&agent), ["agent"]);
    assert!(!runs.join("agent-run.lease").exists(), "the lease is gone");
}

/// Claude Code moves a tool call still running after its limit to the
/// background and lets the model stop (seen with 2.1.332 and
/// `CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS`): while the agent's own run goes
/// on, that stop is allowed, closes nothing and sends nothing back, and the
/// person is told the agent waits for it. Once the run is over, a stop is
/// an early stop again.
#[tokio::test(flavor = "multi_thread")]
async fn a_stop_while_the_agents_run_goes_on_closes_nothing() {
    let _turn = TIMED.lock().await;
    let workspace = Workspace::new("agent-run-stop");
    let root = workspace.root.clone();
    let (_server, started) = started_session(&root);
    let runs = PathBuf::from(started["logFile"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(root.join("slow.sh"), "#!/bin/sh\nsleep 5\necho done\n").unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").current_dir(&root);
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let client = std::sync::Arc::new(client);
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            tool(
                &client,
                "run_reproduction",
                json!({"command": ["sh", "slow.sh"], "timeoutSec": 20}),
            )
            .await
        })
    };
    let stop = || {
        let input = json!({"session_id": "c1", "cwd": root, "hook_event_name": "Stop",
                           "stop_hook_active": false, "last_assistant_message": "waiting"});
        let out = run_hook("claude", "Stop", &input.to_string(), None);
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    // The stop must come while the run goes on: wait for its lease, not a
    // fixed time (a loaded machine takes seconds to start the server).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !runs.join("agent-run.lease").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let waiting = stop();
    assert!(
        waiting["hookSpecificOutput"].is_null(),
        "sent back: {waiting}"
    );
    let said = waiting["systemMessage"].as_str().unwrap_or_default();
    assert!(said.contains("waiting for its own run"), "{waiting}");
    let status: Value =
        serde_json::from_slice(&sidecar(&root, &["status", "--json"]).stdout).unwrap();
    assert_eq!(status[0]["stage"], "investigating", "{status}");
    let result = running.await.unwrap();
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let early = stop();
    assert!(
        early["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .is_some_and(|c| c.contains("is still yours")),
        "{early}"
    );
}
