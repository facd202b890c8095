//! `debug-sidecar run` and the agent's `run_reproduction`, through the real
//! binary: records in order, the exit record and status, pass-through
//! unchanged, the caps, the refusals, and the agent's run of its own.

mod support;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};
use support::*;

fn sidecar(root: &Path, args: &[&str]) -> Output {
    output_within_10s(
        Command::new(BIN)
            .args(args)
            .current_dir(root)
            .env_remove("DEBUG_SIDECAR_DIR")
            .env_remove("DEBUG_SIDECAR_SESSION"),
    )
}

fn script(root: &Path, name: &str, body: &str) {
    let file = root.join(name);
    std::fs::write(&file, format!("#!/bin/sh\n{body}")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn records(file: &str) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn run_records_both_streams_in_order_and_exits_as_the_program() {
    let workspace = Workspace::new("run");
    let root = &workspace.root;
    // Pauses between the streams: their order is the order they were read.
    script(
        root,
        "repro.sh",
        "echo one\nsleep 0.1\necho 'two \"quoted\"' >&2\nsleep 0.1\nprintf 'three\\r\\n'\n\
         sleep 0.1\nprintf 'no newline' >&2\nexit 3\n",
    );
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    let out = sidecar(root, &["run", "--", "./repro.sh"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    // Passed through unchanged, byte for byte.
    assert_eq!(out.stdout, b"one\nthree\r\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("two \"quoted\"\nno newline"), "{stderr}");
    assert!(
        stderr.contains("recorded 2 stdout and 2 stderr line(s) into run"),
        "{stderr}"
    );
    let lines = records(&log);
    let seen: Vec<(&str, &str)> = lines
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap(),
                r["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen[..4],
        [
            ("stdout", "one"),
            ("stderr", "two \"quoted\""),
            ("stdout", "three"),
            ("stderr", "no newline"),
        ]
    );
    assert_eq!(lines.len(), 5);
    let exit = &lines[4];
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["exitCode"], 3);
    assert_eq!(exit["status"], 3);
    assert_eq!(exit["command"], json!(["./repro.sh"]));
    assert!(exit["durationMs"].as_u64().unwrap() >= 300, "{exit}");
    for record in &lines {
        assert_eq!(record["sessionId"], "s1");
        assert_eq!(record["runId"], started["runId"]);
        assert!(record["timestamp"].as_u64().unwrap() > 0);
        assert!(record.get("agentRun").is_none(), "the person's run");
    }
    // The records read like probe lines: in `debug/logs`, counted by source
    // in the summary, and in the blackboard's line counts.
    let logs = server
        .request("debug/logs", json!({"contains": "quoted"}))
        .unwrap();
    assert_eq!(logs["entries"][0]["entry"]["source"], "stderr");
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        summary["sources"],
        json!({"stdout": 2, "stderr": 2, "exit": 1})
    );
    let context = server.request("debug/context", json!({})).unwrap();
    let board = context["content"].as_str().unwrap();
    let run = started["runId"].as_str().unwrap();
    assert!(board.contains(&format!("{run}: 5 (current)")), "{board}");
    // A signal is passed on as a shell reports it.
    script(root, "killed.sh", "kill -TERM $$\n");
    let out = sidecar(root, &["run", "--", "./killed.sh"]);
    assert_eq!(out.status.code(), Some(143), "{out:?}");
    let last = records(&log).pop().unwrap();
    assert_eq!(last["signal"], 15);
    assert_eq!(last["status"], 143);
}

#[test]
fn run_is_refused_without_an_active_session_and_runs_nothing() {
    let workspace = Workspace::new("run-none");
    let root = &workspace.root;
    script(root, "touch.sh", "touch ran\n");
    let out = sidecar(root, &["run", "--", "./touch.sh"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Cannot record this run: no debug session is active"),
        "{stderr}"
    );
    assert!(!root.join("ran").exists(), "the program did not run");
    assert!(!root.join(".debug-sidecar").exists(), "nothing was written");
    // A program that cannot start is said as a shell says it.
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let out = sidecar(root, &["run", "--", "./no-such-program"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not start `./no-such-program`"));
}

#[test]
fn a_flood_is_passed_through_whole_and_recorded_within_its_caps() {
    let workspace = Workspace::new("run-flood");
    let root = &workspace.root;
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    // A 100 KB line, then 400,000 lines: about 18 MB of records uncapped.
    script(
        root,
        "flood.sh",
        "head -c 100000 /dev/zero | tr '\\0' x; echo\nseq 1 400000\n",
    );
    // Read as it comes: megabytes would fill a pipe nobody drains.
    let out = Command::new(BIN)
        .args(["run", "--", "./flood.sh"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let expected: usize = 100_001
        + (1..=400_000)
            .map(|n: u32| n.to_string().len() + 1)
            .sum::<usize>();
    assert_eq!(out.stdout.len(), expected, "every byte passed through");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size <= 16 * 1024 * 1024 + 4096, "{size} bytes recorded");
    let lines = records(&log);
    let long = &lines[0];
    assert_eq!(long["truncatedFrom"], 100_000);
    // Cut at 8 KiB, less the end of the word it was cut in (at most 128
    // bytes: the start of a secret too short to be recognized).
    let kept = long["message"].as_str().unwrap().len();
    assert!((8 * 1024 - 128..=8 * 1024).contains(&kept), "{kept}");
    let exit = lines.last().unwrap();
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["stdoutLines"], 400_001);
    let unrecorded = exit["unrecordedLines"].as_u64().unwrap();
    assert!(unrecorded > 0, "{exit}");
    assert_eq!(lines.len() as u64 - 1 + unrecorded, 400_001);
}

async fn call(client: &RunningService<RoleClient, ()>, args: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new("run_reproduction").with_arguments(arguments(args)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_runs_the_reproduction_in_a_run_of_its_own_within_its_caps() {
    let workspace = Workspace::new("run-agent");
    let root = workspace.root.clone();
    script(
        &root,
        "check.sh",
        "echo \"args: $*\"\necho oops >&2\nsleep 0.2\nseq 1 100000\nexit 1\n",
    );
    script(&root, "hang.sh", "echo waiting\nsleep 30\necho never\n");
    let mut server = initialized(&root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let person_run = started["runId"].as_str().unwrap().to_string();
    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").current_dir(&root);
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();

    let result = call(&client, json!({"command": ["./check.sh", "a b", "c"]})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(result.structured_content.is_none(), "text only");
    let said = text(&result);
    assert!(said.contains("exited with status 1"), "{said}");
    assert!(said.contains("stdout | 100000"), "{said}");
    assert!(
        said.contains("not recorded: the run's records reached their cap of 1024 KiB"),
        "{said}"
    );
    assert!(
        said.contains("it does not replace the person's Proceed"),
        "{said}"
    );
    let snapshot = server.request("debug/status", json!({})).unwrap();
    assert_eq!(
        snapshot["runId"], person_run,
        "the round's run stays current"
    );
    let runs_dir = Path::new(started["logFile"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    let agent_runs: Vec<String> = std::fs::read_dir(&runs_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl") && n != "active.jsonl" && !n.starts_with(&person_run))
        .collect();
    assert_eq!(agent_runs.len(), 1, "{agent_runs:?}");
    let agent_file = runs_dir.join(&agent_runs[0]);
    let agent_records = records(agent_file.to_str().unwrap());
    // stdout and stderr are two pipes: which line is read first is a race.
    let first_out = agent_records.iter().find(|r| r["source"] == "stdout");
    assert_eq!(first_out.unwrap()["message"], "args: a b c");
    assert!(agent_records
        .iter()
        .any(|r| r["source"] == "stderr" && r["message"] == "oops"));
    assert!(agent_records.iter().all(|r| r["agentRun"] == true));
    assert!(std::fs::metadata(&agent_file).unwrap().len() <= 1024 * 1024 + 4096);
    let exit = agent_records.last().unwrap();
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["exitCode"], 1);
    assert_eq!(
        std::fs::metadata(started["logFile"].as_str().unwrap())
            .unwrap()
            .len(),
        0,
        "nothing went into the person's run"
    );
    let agent_run = agent_runs[0].trim_end_matches(".jsonl").to_string();
    let context = server.request("debug/context", json!({})).unwrap();
    let board = context["content"].as_str().unwrap();
    assert!(
        board.contains(&format!("{agent_run}: {} (agent run)", agent_records.len())),
        "{board}"
    );

    // The time cap kills it, and what it printed is kept.
    let result = call(&client, json!({"command": ["./hang.sh"], "timeoutSec": 1})).await;
    let said = text(&result);
    assert!(
        said.contains("was still running at its time cap of 1 s, so it was killed"),
        "{said}"
    );
    assert!(said.contains("stdout | waiting"), "{said}");
    let result = call(
        &client,
        json!({"command": ["./hang.sh"], "timeoutSec": 601}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("at most 600 seconds"));
    let result = call(&client, json!({"command": []})).await;
    assert_eq!(result.is_error, Some(true));

    // Never while the person holds the round.
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let result = call(&client, json!({"command": ["./check.sh"]})).await;
    assert_eq!(result.is_error, Some(true));
    let said = text(&result);
    assert!(said.contains("the person holds the round"), "{said}");
    client.cancel().await.unwrap();
}
