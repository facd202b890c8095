//! Hostile workspaces, the integrity half (issue 13): a state write that
//! fails mid-command, damaged layouts, reads in a workspace that has no
//! state, a state directory that would be the workspace itself, and files
//! handed over as evidence. Each through the real binary.

mod support;

use debug_sidecar::rpc::client::{ClientError, Connection};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

fn session_dir(root: &Path) -> PathBuf {
    root.join(".debug-sidecar/sessions/default")
}

fn read_state(root: &Path) -> Value {
    let text = fs::read_to_string(session_dir(root).join("state.json")).expect("a state file");
    serde_json::from_str(&text).expect("the state parses")
}

/// The rpc error of a request that must fail.
fn refused(server: &mut Connection, method: &str, params: Value) -> (i64, String, Value) {
    match server.request(method, params) {
        Err(ClientError::Rpc(error)) => (error.code, error.message, error.data.unwrap_or_default()),
        other => panic!("{method} was not refused: {other:?}"),
    }
}

fn chmod(mode: &str, path: &Path) {
    let status = Command::new("chmod")
        .args([mode, path.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Appends a line through `active.jsonl`, as a probe does.
fn append_through_link(runs: &Path, line: &str) {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(runs.join("active.jsonl"))
        .expect("active.jsonl opens");
    writeln!(file, "{line}").unwrap();
}

fn lines_of(runs: &Path, run: &str) -> String {
    fs::read_to_string(runs.join(format!("{run}.jsonl"))).unwrap_or_default()
}

#[test]
fn a_proceed_whose_state_write_fails_leaves_the_link_on_the_run_the_state_names() {
    let workspace = Workspace::new("integrity-proceed");
    let mut server = spawn_bound_by_modes(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let session = session_dir(&workspace.root);
    let runs = session.join("runs");
    // The session's directory refuses the state's temporary file; runs/
    // stays writable, so only the state write fails.
    chmod("a-w", &session);
    let (code, message, _) = refused(&mut server, "debug/proceed", json!({}));
    chmod("u+w", &session);
    assert_eq!(code, -32051, "{message}");
    let named = read_state(&workspace.root)["rounds"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_string();
    append_through_link(&runs, "{\"probeId\":\"p1\",\"after\":\"refused\"}");
    assert!(
        lines_of(&runs, &named).contains("refused"),
        "the line did not land in the run state.json names ({named}): {:?}",
        fs::read_link(runs.join("active.jsonl"))
    );
    let run_files: Vec<String> = fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Run files: not the link, nor the counts kept beside a run.
        .filter(|name| name.ends_with(".jsonl") && name != "active.jsonl")
        .collect();
    assert_eq!(
        run_files,
        [format!("{named}.jsonl")],
        "an unnamed run was left"
    );
    // The person presses Proceed again, and the next run takes the lines.
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    let next = proceeded["runId"].as_str().unwrap().to_string();
    append_through_link(&runs, "{\"probeId\":\"p1\",\"after\":\"proceed\"}");
    assert!(lines_of(&runs, &next).contains("proceed"));
}

#[test]
fn a_link_left_on_an_older_run_is_repaired_to_the_run_the_state_names() {
    let workspace = Workspace::new("integrity-relink");
    let mut server = initialized(&workspace.root);
    let first = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let second = server.request("debug/proceed", json!({})).unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_string();
    drop(server);
    // A process killed after the state was renamed into place and before
    // the link was switched leaves it on the closed run.
    let runs = session_dir(&workspace.root).join("runs");
    let staged = runs.join("relink.tmp");
    std::os::unix::fs::symlink(format!("{first}.jsonl"), &staged).unwrap();
    fs::rename(&staged, runs.join("active.jsonl")).unwrap();

    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["runId"], second.as_str());
    append_through_link(&runs, "{\"probeId\":\"p1\"}");
    assert!(lines_of(&runs, &second).contains("p1"), "not repaired");
    assert!(!lines_of(&runs, &first).contains("p1"));
}

/// The layouts a hostile or broken checkout can bring instead of files.
#[test]
fn a_state_that_is_a_directory_is_moved_aside_and_the_session_starts_afresh() {
    let workspace = Workspace::new("integrity-state-dir");
    fs::create_dir_all(session_dir(&workspace.root).join("state.json/inner")).unwrap();
    let status = Command::new(BIN)
        .arg("status")
        .current_dir(&workspace.root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "status: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut server = initialized(&workspace.root);
    let snapshot = server.request("debug/status", json!({})).unwrap();
    assert_eq!(snapshot["active"], false);
    let warning = snapshot["warning"].as_str().expect("a warning");
    assert!(warning.contains("moved to"), "{warning}");
    let started = server
        .request("debug/start", json!({"problem": "afresh"}))
        .unwrap();
    assert_eq!(started["stage"], "investigating");
    assert_eq!(read_state(&workspace.root)["problem"], "afresh");
    let aside: Vec<String> = fs::read_dir(session_dir(&workspace.root))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(session_dir(&workspace.root)
        .join(&aside[0])
        .join("inner")
        .is_dir());
}

#[test]
fn a_session_that_is_a_file_is_moved_aside_and_the_session_starts_afresh() {
    let workspace = Workspace::new("integrity-session-file");
    let sessions = workspace.root.join(".debug-sidecar/sessions");
    fs::create_dir_all(&sessions).unwrap();
    fs::write(sessions.join("default"), "not a directory").unwrap();
    let status = Command::new(BIN)
        .args(["status", "--json"])
        .current_dir(&workspace.root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "status: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut server = initialized(&workspace.root);
    let snapshot = server
        .request("debug/status", json!({"sessionId": "default"}))
        .unwrap();
    assert_eq!(snapshot["active"], false);
    assert!(
        snapshot["warning"]
            .as_str()
            .is_some_and(|w| w.contains("moved to")),
        "{snapshot}"
    );
    server
        .request(
            "debug/start",
            json!({"sessionId": "default", "problem": "afresh"}),
        )
        .unwrap();
    assert_eq!(read_state(&workspace.root)["problem"], "afresh");
    let aside = fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("default.corrupt-")
        })
        .expect("the file moved aside");
    assert_eq!(
        fs::read_to_string(aside.path()).unwrap(),
        "not a directory",
        "what was there is kept"
    );
}

#[test]
fn a_fifo_a_lock_directory_and_files_where_directories_should_be_are_moved_aside() {
    let workspace = Workspace::new("integrity-layouts");
    let session = session_dir(&workspace.root);
    fs::create_dir_all(session.join(".lock/inner")).unwrap();
    fs::create_dir_all(session.join("activity.json/inner")).unwrap();
    fs::write(session.join("runs"), "not a directory").unwrap();
    let fifo = Command::new("mkfifo")
        .arg(session.join("state.json"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let status = output_within_10s(
        Command::new(BIN)
            .arg("status")
            .current_dir(&workspace.root)
            .env_remove("DEBUG_SIDECAR_DIR"),
    );
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({"problem": "afresh"}))
        .unwrap();
    assert_eq!(started["stage"], "investigating");
    server
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .unwrap();
    let turn = server.request("turn/state", json!({})).unwrap();
    assert_eq!(turn["state"], "connecting");
    let runs = session.join("runs");
    append_through_link(&runs, "{\"probeId\":\"p1\"}");
    let run = started["runId"].as_str().unwrap();
    assert!(lines_of(&runs, run).contains("p1"));
    let mut aside: Vec<String> = fs::read_dir(&session)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|name| Some(name.split_once(".corrupt-")?.0.to_string()))
        .collect();
    aside.sort();
    assert_eq!(aside, [".lock", "activity.json", "runs", "state.json"]);
}

#[test]
fn reads_and_refused_commands_leave_a_fresh_workspace_untouched() {
    let workspace = Workspace::new("integrity-untouched");
    let state_dir = workspace.root.join(".debug-sidecar");
    let mut server = initialized(&workspace.root);
    server.request("debug/stop", json!({})).unwrap();
    server.request("debug/probes", json!({})).unwrap();
    server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    for method in ["debug/done", "debug/proceed", "debug/abort"] {
        let (code, message, _) = refused(&mut server, method, json!({}));
        assert_eq!(code, -32050, "{method}: {message}");
    }
    let (code, _, _) = refused(
        &mut server,
        "debug/handOff",
        json!({"mode": "reproduce", "steps": ["x"]}),
    );
    assert_eq!(code, -32050);
    assert!(
        !state_dir.exists(),
        "the server made {}",
        state_dir.display()
    );
}

#[test]
fn a_stop_hook_with_no_session_leaves_a_fresh_workspace_untouched() {
    let workspace = Workspace::new("integrity-untouched-hook");
    let state_dir = workspace.root.join(".debug-sidecar");
    let input = json!({"cwd": workspace.root, "hook_event_name": "Stop", "session_id": "c1"});
    let output = run_hook("claude", "Stop", &input.to_string(), None);
    assert!(output.status.success());
    assert!(
        !state_dir.exists(),
        "the Stop hook made {}: {}",
        state_dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `serve` in `root` with `DEBUG_SIDECAR_DIR` set to `state_dir`.
fn spawn_with_state_env(root: &Path, state_dir: &str) -> Connection {
    let mut command = Command::new(BIN);
    command
        .arg("serve")
        .current_dir(root)
        .env("DEBUG_SIDECAR_DIR", state_dir)
        .stderr(Stdio::null());
    Connection::start(command).expect("the binary starts")
}

#[test]
fn a_state_dir_that_is_the_workspace_or_above_it_is_refused() {
    let workspace = Workspace::new("integrity-state-root");
    let parent = workspace
        .root
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for state_dir in ["", ".", "./", "..", parent.as_str()] {
        let mut server = spawn(&workspace.root);
        let error = match server.initialize(&workspace.root, json!({"stateDir": state_dir})) {
            Err(ClientError::Rpc(error)) => error,
            other => panic!("stateDir {state_dir:?} was taken: {other:?}"),
        };
        assert_eq!(error.code, -32602, "{state_dir:?}: {error:?}");
        assert!(error.message.contains("`stateDir`"), "{}", error.message);
        assert_eq!(error.data.unwrap()["field"], "stateDir");
    }
    // From the environment: refused by serve, the CLI and the hooks alike.
    let mut server = spawn_with_state_env(&workspace.root, ".");
    match server.initialize(&workspace.root, json!({})) {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code, -32051, "{error:?}");
            assert!(
                error.message.contains("DEBUG_SIDECAR_DIR"),
                "{}",
                error.message
            );
        }
        other => panic!("DEBUG_SIDECAR_DIR=. was taken: {other:?}"),
    }
    let output = Command::new(BIN)
        .arg("status")
        .current_dir(&workspace.root)
        .env("DEBUG_SIDECAR_DIR", ".")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("DEBUG_SIDECAR_DIR"), "{stderr}");
    let mut hook = Command::new(BIN);
    hook.args(["hook", "claude", "UserPromptSubmit"])
        .env("DEBUG_SIDECAR_DIR", ".")
        .stdin(Stdio::piped());
    let mut child = hook
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let input = json!({"cwd": workspace.root, "prompt": "hi", "session_id": "c1"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "a hook never fails the agent");
    assert!(String::from_utf8_lossy(&output.stderr).contains("DEBUG_SIDECAR_DIR"));
    assert!(!workspace.root.join(".gitignore").exists());

    // An empty variable counts as unset (as `DEBUG_SIDECAR_DIR= cmd` means).
    let mut server = spawn_with_state_env(&workspace.root, "");
    server.initialize(&workspace.root, json!({})).unwrap();
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    assert!(!workspace.root.join(".gitignore").exists());
    assert!(workspace.root.join(".debug-sidecar/.gitignore").exists());
}

/// `serve` in `root` with `HOME` set to `home`.
fn spawn_with_home(root: &Path, home: &Path) -> Connection {
    let mut command = Command::new(BIN);
    command
        .arg("serve")
        .current_dir(root)
        .env("HOME", home)
        .env_remove("DEBUG_SIDECAR_DIR")
        .stderr(Stdio::null());
    let mut server = Connection::start(command).expect("the binary starts");
    server.initialize(root, json!({})).expect("initialize");
    server
}

fn refused_path(server: &mut Connection, method: &str, params: Value) -> String {
    let (code, message, data) = refused(server, method, params);
    assert_eq!(code, -32602, "{method}: {message}");
    assert!(
        data["field"].as_str().is_some_and(|f| f.ends_with("path")),
        "{data}"
    );
    message
}

#[test]
fn attach_takes_only_files_a_person_could_hand_over() {
    let workspace = Workspace::new("integrity-artifacts");
    // HOME=/ made the whole file system "the user's home".
    let mut server = spawn_with_home(&workspace.root, Path::new("/"));
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    for path in ["/etc/passwd", "/proc/self/environ", "/etc/hostname"] {
        let message = refused_path(&mut server, "debug/attach", json!({"path": path}));
        assert!(message.contains("path"), "{message}");
    }
    // A link inside the workspace to a file outside it.
    std::os::unix::fs::symlink("/etc/passwd", workspace.root.join("innocent.png")).unwrap();
    refused_path(&mut server, "debug/attach", json!({"path": "innocent.png"}));
    // Not a regular file.
    fs::create_dir(workspace.root.join("shots")).unwrap();
    refused_path(&mut server, "debug/attach", json!({"path": "shots"}));
    // Over the size cap: a sparse file, so the test writes nothing big.
    let big = fs::File::create(workspace.root.join("huge.har")).unwrap();
    big.set_len(64 * 1024 * 1024).unwrap();
    let message = refused_path(&mut server, "debug/attach", json!({"path": "huge.har"}));
    assert!(message.contains("MiB"), "{message}");
    let artifacts = session_dir(&workspace.root).join("artifacts");
    assert!(
        fs::read_dir(&artifacts).map_or(true, |mut d| d.next().is_none()),
        "a refused file was copied"
    );
    // A file in the workspace is taken.
    fs::write(workspace.root.join("shot.png"), b"png").unwrap();
    server
        .request("debug/attach", json!({"path": "shot.png"}))
        .unwrap();
}

#[test]
fn proceed_artifacts_pass_the_check_attach_applies() {
    let workspace = Workspace::new("integrity-proceed-artifacts");
    let mut server = spawn_with_home(&workspace.root, Path::new("/"));
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let artifacts = session_dir(&workspace.root).join("artifacts");
    fs::write(workspace.root.join("shot.png"), b"png").unwrap();
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let message = refused_path(
        &mut server,
        "debug/proceed",
        json!({"artifacts": [{"path": "/etc/shadow"}]}),
    );
    assert!(message.contains("artifacts[0].path"), "{message}");
    // One refused, none taken.
    let message = refused_path(
        &mut server,
        "debug/proceed",
        json!({"artifacts": [{"path": "shot.png"}, {"path": "/proc/self/environ"}]}),
    );
    assert!(message.contains("artifacts[1].path"), "{message}");
    assert!(
        !artifacts.exists(),
        "a file of a refused proceed was copied"
    );
    assert_eq!(read_state(&workspace.root)["stage"], "user_turn");
    let proceeded = server
        .request(
            "debug/proceed",
            json!({"artifacts": [{"path": "shot.png", "kind": "screenshot"}]}),
        )
        .unwrap();
    assert_eq!(proceeded["stage"], "investigating");
    let recorded = read_state(&workspace.root)["artifacts"].clone();
    let paths: Vec<&str> = recorded
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 1, "{recorded}");
    assert!(
        paths
            .iter()
            .all(|p| p.starts_with(artifacts.to_str().unwrap())),
        "artifacts are kept as copies: {paths:?}"
    );
}

#[test]
fn a_state_at_the_largest_revision_still_takes_commands_and_is_announced() {
    let workspace = Workspace::new("integrity-revision");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    drop(server);
    let path = session_dir(&workspace.root).join("state.json");
    let mut saved = read_state(&workspace.root);
    saved["revision"] = u64::MAX.into();
    fs::write(&path, saved.to_string()).unwrap();
    let mut server = initialized(&workspace.root);
    let mut watcher = initialized(&workspace.root);
    let recorded = server
        .request(
            "debug/recordHypotheses",
            json!({"hypotheses": [{"id": "H1", "statement": "t", "status": "open"}]}),
        )
        .unwrap();
    assert_eq!(recorded["hypotheses"][0]["id"], "H1");
    let revision = recorded["revision"].as_u64().unwrap();
    assert!(
        revision < 1 << 53,
        "a revision every JSON client reads: {revision}"
    );
    watcher
        .wait_for(
            "debug/stateChanged",
            std::time::Duration::from_secs(10),
            |s| s["hypotheses"].as_array().is_some_and(|h| h.len() == 1),
        )
        .expect("the other server hears the write");
}

/// Every file under `dir` with its length and modification time.
fn files_under(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                out.push((entry.path(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn listing_sessions_writes_nothing() {
    let workspace = Workspace::new("integrity-listing");
    // Sessions started in a terminal, where no ingest server runs: none has
    // an ingest token yet.
    for id in ["s1", "s2", "s3"] {
        let out = output_within_10s(
            Command::new(BIN)
                .args(["start", "--session", id, "the total is wrong"])
                .current_dir(&workspace.root)
                .env_remove("DEBUG_SIDECAR_DIR")
                .env_remove("DEBUG_SIDECAR_SESSION"),
        );
        assert!(out.status.success(), "{out:?}");
    }
    let state_dir = workspace.root.join(".debug-sidecar");
    let before = files_under(&state_dir);
    let mut server = initialized(&workspace.root);
    let listed = server.request("debug/sessions", json!({})).unwrap();
    assert_eq!(
        listed["sessions"].as_array().map(Vec::len),
        Some(3),
        "{listed}"
    );
    let after: Vec<_> = files_under(&state_dir)
        .into_iter()
        // The workspace's own serve records its ingest address: not a
        // session's file.
        .filter(|(path, _, _)| path.parent() != Some(state_dir.as_path()))
        .collect();
    let before: Vec<_> = before
        .into_iter()
        .filter(|(path, _, _)| path.parent() != Some(state_dir.as_path()))
        .collect();
    assert_eq!(before, after, "debug/sessions wrote into the sessions");
}
