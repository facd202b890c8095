//! Workspace state (DESIGN section 6): sessions survive restarts and crashes,
//! several processes share them without losing updates, and damaged or
//! unwritable state gives clear answers instead of failures.

mod support;

use debug_sidecar::core::machine::{apply, Command};
use debug_sidecar::core::model::{DebugState, Hypothesis, HypothesisStatus};
use debug_sidecar::rpc::client::{ClientError, Connection};
use debug_sidecar::workspace::store::{FileStore, Refused, Store};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::*;

fn state_file(root: &Path, session: &str) -> PathBuf {
    root.join(".debug-sidecar/sessions")
        .join(session)
        .join("state.json")
}

fn read_state(root: &Path, session: &str) -> Value {
    let text = std::fs::read_to_string(state_file(root, session)).expect("a state file");
    serde_json::from_str(&text).expect("the state file parses")
}

fn kill(server: &Connection) {
    let status = Process::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A small pseudo-random sequence (no crate needed for jitter).
struct Jitter(u64);

impl Jitter {
    fn new() -> Self {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("jitter seed {seed}");
        Jitter(seed | 1)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[test]
fn a_session_survives_a_killed_server() {
    let workspace = Workspace::new("restart");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "the total is wrong"}))
        .unwrap();
    server
        .request(
            "debug/probeSnippet",
            json!({"file": "cart.sh", "hypothesisId": "H1"}),
        )
        .unwrap();
    let handed = server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap()["snapshot"]
        .clone();
    kill(&server);
    drop(server);

    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    for key in [
        "stage", "round", "runId", "probes", "steps", "revision", "problem",
    ] {
        assert_eq!(status[key], handed[key], "{key} changed across the restart");
    }
    // And the restored session goes on.
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    assert_eq!(proceeded["round"], 2);
}

#[test]
fn a_writer_killed_at_any_moment_leaves_a_whole_state_file() {
    let workspace = Workspace::new("crash");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    drop(server);
    let mut jitter = Jitter::new();
    let kills = 200;
    for round in 0..kills {
        let mut server = initialized(&workspace.root);
        let mut acknowledged = read_state(&workspace.root, "default")["revision"]
            .as_u64()
            .unwrap();
        let pid = server.pid();
        let delay = Duration::from_micros(jitter.below(8_000));
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            let _ = Process::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        });
        loop {
            match server.request("debug/observe", json!({"text": format!("kill {round}")})) {
                Ok(snapshot) => acknowledged = snapshot["revision"].as_u64().unwrap(),
                // The write or the read meets the killed process.
                Err(ClientError::Closed | ClientError::Io(_)) => break,
                Err(other) => panic!("round {round}: {other}"),
            }
        }
        killer.join().unwrap();
        let data = read_state(&workspace.root, "default");
        let revision = data["revision"].as_u64().unwrap();
        assert!(
            revision == acknowledged || revision == acknowledged + 1,
            "round {round}: revision {revision} after acknowledging {acknowledged}"
        );
        let state = debug_sidecar::core::revival::load_live(&data);
        assert!(
            state.session().is_some(),
            "round {round}: the session was lost"
        );
    }
    let leftovers: Vec<_> =
        std::fs::read_dir(state_file(&workspace.root, "default").parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("corrupt"))
            .collect();
    assert!(
        leftovers.is_empty(),
        "a state file was damaged: {leftovers:?}"
    );
}

#[test]
fn two_servers_on_one_workspace_lose_no_update_and_hear_each_other() {
    let workspace = Workspace::new("two");
    let mut a = initialized(&workspace.root);
    let mut b = initialized(&workspace.root);
    a.request("debug/start", json!({"problem": "p"})).unwrap();
    let n = 20;
    let mut last = 0;
    for i in 0..n {
        let (writer, listener) = if i % 2 == 0 {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let snapshot = writer
            .request("debug/observe", json!({"text": format!("observation {i}")}))
            .unwrap();
        last = snapshot["revision"].as_u64().unwrap();
        let heard = listener.wait_for("debug/stateChanged", Duration::from_secs(5), |s| {
            s["revision"].as_u64() == Some(last)
        });
        assert!(
            heard.is_some(),
            "the other server did not announce revision {last}"
        );
    }
    let status = a.request("debug/status", json!({})).unwrap();
    assert_eq!(status["revision"].as_u64(), Some(last));
    let observations = read_state(&workspace.root, "default")["observations"].clone();
    let texts: Vec<String> = observations
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["text"].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = (0..n).map(|i| format!("observation {i}")).collect();
    assert_eq!(texts, expected, "an update was lost");
    // Each server announced its own writes once: no echo through the watcher.
    let echoes = a
        .drain(QUIET)
        .into_iter()
        .filter(|m| m["method"] == "debug/stateChanged")
        .count();
    assert_eq!(echoes, 0);
}

#[test]
fn eight_writers_of_500_commands_end_at_revision_4000() {
    let workspace = Workspace::new("threads");
    let dir = workspace.root.join(".debug-sidecar");
    let mut store = FileStore::new(&dir);
    let start = |state: &DebugState| -> Result<DebugState, Refused> {
        Ok(apply(
            state,
            Command::Start {
                problem: "p".into(),
            },
            1,
        )
        .unwrap()
        .state)
    };
    store.update("s", 1, &mut { start }).unwrap();
    let base = store.load("s").unwrap().revision;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut store = FileStore::new(&dir);
                for i in 0..500 {
                    let hypothesis = Hypothesis {
                        id: format!("H{t}"),
                        statement: format!("writer {t}, command {i}"),
                        status: HypothesisStatus::Open,
                        evidence: Vec::new(),
                    };
                    store
                        .update("s", 2, &mut |state| {
                            let command = Command::RecordHypotheses(vec![hypothesis.clone()]);
                            Ok(apply(state, command, 2).unwrap().state)
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let stored = store.load("s").unwrap();
    assert_eq!(stored.revision - base, 4000);
    let session = stored.state.session().unwrap();
    assert_eq!(session.hypotheses.len(), 8);
    for hypothesis in &session.hypotheses {
        assert!(
            hypothesis.statement.ends_with("command 499"),
            "{hypothesis:?}"
        );
    }
}

fn damaged(contents: &str) -> (Workspace, Value) {
    let workspace = Workspace::new("damage");
    let file = state_file(&workspace.root, "default");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, contents).unwrap();
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    (workspace, status)
}

#[test]
fn a_corrupt_or_truncated_file_is_moved_aside_and_reported() {
    let whole = r#"{"version": 3, "active": true, "stage": "investigating", "problem": "p"}"#;
    for contents in ["{ this is not json", &whole[..30], "[1, 2, 3]", ""] {
        let (workspace, status) = damaged(contents);
        assert_eq!(status["active"], false, "{contents:?}");
        let warning = status["warning"]
            .as_str()
            .unwrap_or_else(|| panic!("no warning for {contents:?}"));
        assert!(warning.contains("damaged"), "{warning}");
        let dir = state_file(&workspace.root, "default")
            .parent()
            .unwrap()
            .to_path_buf();
        let aside: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("state.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{contents:?}: {aside:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join(&aside[0])).unwrap(),
            contents,
            "the damaged file is kept as it was"
        );
        // Another process, which did not find the damage itself, tells too,
        // until the session is written again.
        let mut other = initialized(&workspace.root);
        let seen = other.request("debug/status", json!({})).unwrap();
        assert_eq!(seen["warning"], warning, "{contents:?}");
        other
            .request("debug/start", json!({"problem": "again"}))
            .unwrap();
        let seen = other.request("debug/status", json!({})).unwrap();
        assert_eq!(seen["warning"], Value::Null);
    }
}

#[test]
fn files_from_older_versions_are_revived() {
    let legacy = [
        json!({"active": true, "phase": "waiting", "problem": "Cart total wrong", "round": 2,
               "runId": "r2-lflr", "runHistory": ["r1-abc", "r2-lflr"],
               "probes": [{"id": "p1", "file": "cart.py", "round": 1}],
               "reproductionSteps": ["Open the cart"]}),
        json!({"active": true, "stage": "awaiting_evidence", "problem": "p",
               "rounds": [{"index": 1, "runId": "r1-a", "reproductionSteps": ["x"], "probeIds": []}],
               "probes": [], "runHistory": ["r1-a"]}),
        json!({"active": true, "stage": "open", "problem": "p",
               "rounds": [{"index": 1, "runId": "r1-a", "openReason": "awaiting_reply",
                           "reproductionSteps": [], "probeIds": []}],
               "probes": [], "runHistory": ["r1-a"]}),
        json!({"version": 2, "active": true, "stage": "cleaning_up", "problem": "p",
               "rounds": [{"index": 1, "runId": "r1-a", "probeIds": []}], "probes": [],
               "runs": [{"id": "r1-a", "round": 1, "lines": 3}]}),
    ];
    for data in legacy {
        let (_workspace, status) = damaged(&data.to_string());
        assert_eq!(status["active"], true, "{data}");
        assert_eq!(status["warning"], Value::Null, "{data}");
        assert_eq!(status["revision"], 0, "{data}");
        assert!(status["stage"].is_string(), "{data}: {status}");
    }
}

#[test]
fn a_deleted_state_directory_is_recreated_on_the_next_write() {
    let workspace = Workspace::new("missing");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    std::fs::remove_dir_all(workspace.root.join(".debug-sidecar")).unwrap();
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false);
    server
        .request("debug/start", json!({"problem": "again"}))
        .unwrap();
    assert_eq!(read_state(&workspace.root, "default")["problem"], "again");
    assert_eq!(
        std::fs::read_to_string(workspace.root.join(".debug-sidecar/.gitignore")).unwrap(),
        "*\n"
    );
}

/// Runs the server as an unprivileged user when the tests run as root, who
/// may write anywhere.
fn spawn_unprivileged(root: &Path) -> Connection {
    let is_root = Process::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut command = if is_root {
        let mut command = Process::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            BIN,
            "serve",
        ]);
        command
    } else {
        let mut command = Process::new(BIN);
        command.arg("serve");
        command
    };
    command.current_dir(root).stderr(Stdio::null());
    let mut server = Connection::start(command).unwrap();
    server.initialize(root, json!({})).unwrap();
    server
}

#[test]
fn a_read_only_state_directory_refuses_writes_clearly_and_still_reads() {
    let workspace = Workspace::new("read-only");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    drop(server);
    let state_dir = workspace.root.join(".debug-sidecar");
    let chmod = |mode: &str| {
        assert!(Process::new("chmod")
            .args(["-R", mode, state_dir.to_str().unwrap()])
            .status()
            .unwrap()
            .success());
    };
    chmod("a-w");
    let mut server = spawn_unprivileged(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["stage"], "investigating");
    let refused = server.request(
        "debug/handOff",
        json!({"mode": "reproduce", "steps": ["x"]}),
    );
    chmod("u+w");
    match refused {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code, -32051, "{error:?}");
            assert!(
                error.message.contains("cannot write session state"),
                "{}",
                error.message
            );
            assert!(
                error.message.contains("ermission denied"),
                "{}",
                error.message
            );
        }
        other => panic!("a write into a read-only directory: {other:?}"),
    }
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["stage"], "investigating", "nothing was lost");
}

#[test]
fn status_lists_sessions_most_recent_first() {
    let workspace = Workspace::new("status");
    let mut server = initialized(&workspace.root);
    server
        .request(
            "debug/start",
            json!({"sessionId": "older", "problem": "first"}),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(5));
    server
        .request(
            "debug/start",
            json!({"sessionId": "newer", "problem": "second"}),
        )
        .unwrap();
    let output = Process::new(BIN)
        .args(["status", "--json"])
        .current_dir(&workspace.root)
        .output()
        .unwrap();
    assert!(output.status.success());
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["newer", "older"]);
    assert!(listed[0]["updatedAt"].as_u64().unwrap() > 0);
    assert_eq!(listed[0]["stage"], "investigating");
    let table = Process::new(BIN)
        .arg("status")
        .current_dir(&workspace.root)
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("SESSION"), "{text}");
    assert!(
        text.contains("newer") && text.contains("investigating"),
        "{text}"
    );
    // A request without a session id means the most recently active one.
    let mut fresh = initialized(&workspace.root);
    let status = fresh.request("debug/status", json!({})).unwrap();
    assert_eq!(status["sessionId"], "newer");
}

#[test]
fn turn_state_progress_and_subagents_reach_the_other_server() {
    let workspace = Workspace::new("activity");
    let mut hooks = initialized(&workspace.root);
    let mut editor = initialized(&workspace.root);
    let wait = Duration::from_secs(5);
    hooks
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .unwrap();
    let turn = editor
        .wait_for("turn/stateChanged", wait, |_| true)
        .expect("the turn start");
    assert_eq!(turn["state"], "connecting");
    hooks
        .notify(
            "progress/todos",
            json!({"todos": [{"content": "Fix it", "status": "in_progress"}]}),
        )
        .unwrap();
    let progress = editor
        .wait_for("progress/changed", wait, |_| true)
        .expect("the todo list");
    assert_eq!(progress["bubble"]["title"], "Fix it");
    hooks
        .notify(
            "agents/event",
            json!({"id": "a1", "kind": "running", "type": "explore"}),
        )
        .unwrap();
    let agent = editor
        .wait_for("agents/changed", wait, |_| true)
        .expect("the subagent");
    assert_eq!(agent["record"]["status"], "running");
    // Queries on the editor's server read the shared activity too.
    let state = editor.request("turn/state", json!({})).unwrap();
    assert_eq!(state["state"], "connecting");
    let agents = editor.request("agents/list", json!({})).unwrap();
    assert_eq!(agents["agents"][0]["id"], "a1");
    // A burst of identical deltas is one change for both.
    for _ in 0..200 {
        hooks
            .notify("turn/event", json!({"kind": "content"}))
            .unwrap();
    }
    hooks.request("turn/state", json!({})).unwrap();
    let heard: Vec<Value> = editor
        .drain(QUIET)
        .into_iter()
        .filter(|m| m["method"] == "turn/stateChanged")
        .collect();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0]["params"]["state"], "streaming");
}

#[test]
fn a_server_leaves_a_workspace_without_sessions_untouched_until_one_is_made() {
    let workspace = Workspace::new("untouched");
    let state_dir = workspace.root.join(".debug-sidecar");
    let mut editor = initialized(&workspace.root);
    let status = editor.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false);
    assert_eq!(
        editor.request("debug/probes", json!({})).unwrap()["live"],
        0
    );
    assert!(!state_dir.exists(), "reading made {}", state_dir.display());

    // Another process (an agent's MCP face, another editor) starts a session:
    // the idle server learns of it and records its ingest address.
    let mut agent = initialized(&workspace.root);
    agent
        .request("debug/start", json!({"problem": "from the agent"}))
        .unwrap();
    let heard = editor
        .wait_for("debug/stateChanged", Duration::from_secs(10), |s| {
            s["active"] == true
        })
        .expect("the editor hears of the new session");
    assert_eq!(heard["problem"], "from the agent");
    assert!(state_dir.join(".gitignore").exists());
    assert!(state_dir.join("ingest.json").exists());
    // And from then on, every write of the other's.
    assert_hears_a_hypothesis(&mut agent, &mut editor);
}

#[test]
fn a_server_started_after_the_state_directory_exists_hears_other_processes() {
    let workspace = Workspace::new("existing-dir");
    initialized(&workspace.root)
        .request("debug/start", json!({"problem": "earlier"}))
        .unwrap();
    let mut editor = initialized(&workspace.root);
    let mut agent = initialized(&workspace.root);
    assert_hears_a_hypothesis(&mut agent, &mut editor);
}

#[test]
fn a_deleted_and_remade_state_directory_is_watched_again() {
    let workspace = Workspace::new("remade-dir");
    let mut editor = initialized(&workspace.root);
    editor
        .request("debug/start", json!({"problem": "before"}))
        .unwrap();
    std::fs::remove_dir_all(workspace.root.join(".debug-sidecar")).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut agent = initialized(&workspace.root);
    agent
        .request("debug/start", json!({"problem": "after a git clean"}))
        .unwrap();
    editor
        .wait_for("debug/stateChanged", Duration::from_secs(10), |s| {
            s["problem"] == "after a git clean"
        })
        .expect("the new session is heard");
    assert_hears_a_hypothesis(&mut agent, &mut editor);
}

#[test]
fn a_server_that_starts_the_first_session_itself_watches_from_then_on() {
    let workspace = Workspace::new("first-session");
    let mut editor = initialized(&workspace.root);
    let started = editor
        .request("debug/start", json!({"problem": "from the editor"}))
        .unwrap();
    assert!(started["ingestUrl"].is_string(), "{started}");
    let mut agent = initialized(&workspace.root);
    assert_hears_a_hypothesis(&mut agent, &mut editor);
}

/// `agent` records a hypothesis; `editor` must be told.
fn assert_hears_a_hypothesis(agent: &mut Connection, editor: &mut Connection) {
    agent
        .request(
            "debug/recordHypotheses",
            json!({"hypotheses": [{"id": "H1", "statement": "t", "status": "open"}]}),
        )
        .unwrap();
    editor
        .wait_for("debug/stateChanged", Duration::from_secs(10), |s| {
            s["hypotheses"].as_array().is_some_and(|h| h.len() == 1)
        })
        .expect("the other process's write is heard");
}
