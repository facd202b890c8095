//! Waking the agent (DESIGN section 9) against the built binary: a
//! Proceed or Mark fixed given away from the chat (an editor's `serve`, a
//! terminal) is taken by exactly one waker, only while no turn runs; the
//! person is told who wakes the agent or how to go on; Claude Code's waker
//! hook exits 2 with the kickoff.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const LONG: Duration = Duration::from_secs(10);

/// A session whose round 1 is the person's, handed off by the agent.
fn handed_off(root: &Path) -> Connection {
    let mut agent = initialized(root);
    agent
        .request("debug/start", json!({"problem": "the total is wrong"}))
        .unwrap();
    agent
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    agent
}

/// A `serve` client as a host's extension that can start the agent's turn.
fn waker(root: &Path, host: &str) -> Connection {
    let mut server = spawn(root);
    server
        .initialize(root, json!({"host": host, "wake": true}))
        .unwrap();
    server
}

fn editor(root: &Path) -> Connection {
    let mut server = spawn(root);
    server.initialize(root, json!({"host": "vscode"})).unwrap();
    server
}

fn cli(root: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_WAKE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_editors_proceed_is_taken_by_one_waker_and_the_editor_hears_of_it() {
    let workspace = Workspace::new("wake-serve");
    let root = &workspace.root;
    let _agent = handed_off(root);
    let mut pi = waker(root, "pi");
    let mut other = waker(root, "oh-my-pi");
    let mut vscode = editor(root);
    let proceeded = vscode
        .request("debug/proceed", json!({"note": "it printed 9"}))
        .unwrap();
    let wake = &proceeded["wake"];
    assert_eq!(wake["state"], "waiting", "{proceeded}");
    let mut wakers: Vec<&str> = wake["wakers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    wakers.sort();
    assert_eq!(wakers, ["oh-my-pi", "pi"]);
    let revision = wake["revision"].as_u64().unwrap();
    assert_eq!(revision, proceeded["revision"].as_u64().unwrap());
    // It names the hosts that may wake the agent, each of them.
    let named = wake["message"]
        .as_str()
        .unwrap()
        .strip_prefix("Waking the agent in ")
        .unwrap_or_else(|| panic!("{wake}"));
    assert!(named.contains("oh-my-pi"), "{wake}");
    assert!(named.replace("oh-my-pi", "").contains("pi"), "{wake}");
    // Both wakers hear of it; the first claim wins, the second gets nothing.
    for server in [&mut pi, &mut other] {
        let asked = server
            .wait_for("debug/wakeRequested", LONG, |p| p["revision"] == revision)
            .expect("the waker hears of the request");
        assert_eq!(asked["kind"], "proceed");
        assert_eq!(asked["round"], 1);
        assert!(asked["run"].as_str().unwrap().starts_with("r1-"), "{asked}");
    }
    let claimed = pi
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(claimed["granted"], true, "{claimed}");
    let kickoff = claimed["kickoff"].as_str().unwrap();
    assert!(kickoff.contains("pressed Proceed"), "{kickoff}");
    assert!(kickoff.contains("it printed 9"), "{kickoff}");
    assert!(
        claimed["said"]
            .as_str()
            .unwrap()
            .contains("you pressed Proceed outside the chat"),
        "{claimed}"
    );
    let again = other
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(
        again,
        json!({"granted": false, "kickoff": null, "said": null})
    );
    // The editor that pressed it is told the agent was woken, in pi.
    let changed = vscode
        .wait_for("debug/wakeChanged", LONG, |p| p["revision"] == revision)
        .expect("the editor hears the wake was delivered");
    assert_eq!(changed["state"], "delivered");
    assert_eq!(changed["by"], "pi");
    assert!(
        changed["message"]
            .as_str()
            .unwrap()
            .contains("(woken in pi)"),
        "{changed}"
    );
}

#[test]
fn no_wake_while_a_turn_runs_and_none_after_the_person_went_on_in_the_chat() {
    let workspace = Workspace::new("wake-busy");
    let root = &workspace.root;
    let mut agent = handed_off(root);
    // The agent's turn runs (the person typed in the chat meanwhile).
    agent
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .unwrap();
    agent
        .notify("turn/event", json!({"kind": "reasoning"}))
        .unwrap();
    std::thread::sleep(QUIET);
    let mut pi = waker(root, "pi");
    let mut vscode = editor(root);
    let done = vscode.request("debug/done", json!({})).unwrap();
    let revision = done["wake"]["revision"].as_u64().unwrap();
    assert!(
        pi.wait_for("debug/wakeRequested", QUIET * 3, |_| true)
            .is_none(),
        "a wake was announced while the agent's turn ran"
    );
    let refused = pi
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(refused["granted"], false, "claimed during a running turn");
    // The turn ends: now it is due, and Mark fixed's kickoff is the cleanup.
    agent
        .notify("turn/event", json!({"kind": "turnEnd"}))
        .unwrap();
    pi.wait_for("debug/wakeRequested", LONG, |p| p["revision"] == revision)
        .expect("announced once the turn ended");
    let claimed = pi
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(claimed["granted"], true);
    assert!(
        claimed["kickoff"]
            .as_str()
            .unwrap()
            .contains("marked the bug fixed"),
        "{claimed}"
    );

    // A second request that a turn started in the chat supersedes.
    let workspace = Workspace::new("wake-superseded");
    let root = &workspace.root;
    let mut agent = handed_off(root);
    let mut pi = waker(root, "pi");
    let proceeded = cli(root, &["proceed"]);
    assert!(proceeded.contains("Waking the agent in pi"), "{proceeded}");
    let revision = pi
        .wait_for("debug/wakeRequested", LONG, |_| true)
        .expect("announced")["revision"]
        .as_u64()
        .unwrap();
    // The person typed in the chat before pi took it (a turn started).
    agent
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .unwrap();
    std::thread::sleep(QUIET);
    let refused = pi
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(refused["granted"], false, "a wake after the chat went on");
    // That turn ends: the Proceed it carried is not announced again, nor
    // can it be claimed (the agent would read the same round twice).
    agent
        .notify("turn/event", json!({"kind": "turnEnd"}))
        .unwrap();
    assert!(
        pi.wait_for("debug/wakeRequested", QUIET * 3, |p| p["revision"]
            == revision)
            .is_none(),
        "a superseded wake was announced after the chat's turn ended"
    );
    let after = pi
        .request("debug/claimWake", json!({"revision": revision}))
        .unwrap();
    assert_eq!(after["granted"], false, "a superseded wake was claimed");
}

#[test]
fn a_terminals_proceed_says_nobody_can_wake_the_agent_when_no_waker_runs() {
    let workspace = Workspace::new("wake-nobody");
    let root = &workspace.root;
    let _agent = handed_off(root);
    let started = Instant::now();
    let out = cli(root, &["proceed", "it", "printed", "9"]);
    assert!(
        out.contains("Nothing here can wake the agent by itself: in its chat, close its hand-off form if one is open, or say \"go on\""),
        "{out}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the terminal waited for a waker that does not exist"
    );
    // A waker that died leaves a stale entry: still nobody.
    std::fs::create_dir_all(root.join(".debug-sidecar/wakers")).unwrap();
    let stale = root.join(".debug-sidecar/wakers/999999999.json");
    std::fs::write(&stale, r#"{"host":"pi","pid":999999999}"#).unwrap();
    let out = cli(root, &["done"]);
    assert!(out.contains("Nothing here can wake the agent"), "{out}");
    assert!(!stale.exists(), "the stale entry was not removed");
}

/// `debug-sidecar hook claude Wake` in `root`, as Claude Code starts it after
/// a turn (asyncRewake).
fn claude_waker(root: &Path, extra: &[(&str, &str)]) -> std::process::Child {
    let mut command = Command::new(BIN);
    command
        .args(["hook", "claude", "Wake"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env("CLAUDE_CODE_ENTRYPOINT", "cli")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.env_remove("DEBUG_SIDECAR_WAKE");
    for (name, value) in extra {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let input = json!({"session_id": "c1", "cwd": root, "hook_event_name": "Stop"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child
}

fn wait_exit(child: &mut std::process::Child, within: Duration) -> Option<i32> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn claude_codes_waker_exits_2_with_the_kickoff_once_and_0_otherwise() {
    let workspace = Workspace::new("wake-claude");
    let root = &workspace.root;
    let _agent = handed_off(root);
    let mut hook = claude_waker(root, &[]);
    // It waits while the agent is idle, listed as a waker.
    assert_eq!(wait_exit(&mut hook, QUIET * 2), None, "it did not wait");
    let out = cli(root, &["proceed", "it", "printed", "9"]);
    assert!(out.contains("(woken in Claude Code)"), "{out}");
    assert_eq!(wait_exit(&mut hook, LONG), Some(2));
    let output = hook.wait_with_output().unwrap();
    let kickoff = String::from_utf8(output.stderr).unwrap();
    assert!(kickoff.contains("pressed Proceed"), "{kickoff}");
    assert!(kickoff.contains("it printed 9"), "{kickoff}");
    assert!(
        kickoff.contains("mcp__debug-sidecar__"),
        "not named as Claude Code calls the tools: {kickoff}"
    );
    assert!(output.stdout.is_empty());

    // Turned off (DEBUG_SIDECAR_WAKE=off): it exits 0 at once.
    let mut off = claude_waker(root, &[("DEBUG_SIDECAR_WAKE", "off")]);
    assert_eq!(wait_exit(&mut off, LONG), Some(0));
    // Under `claude -p` (which waits for background hooks): never waits.
    let mut headless = claude_waker(root, &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")]);
    assert_eq!(wait_exit(&mut headless, LONG), Some(0));

    // A turn that runs (after its start grace) ends the wait, silently.
    let workspace = Workspace::new("wake-claude-busy");
    let root = &workspace.root;
    let mut agent = handed_off(root);
    agent
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .unwrap();
    std::thread::sleep(QUIET);
    let mut busy = claude_waker(root, &[]);
    assert_eq!(wait_exit(&mut busy, LONG), Some(0));
}

#[test]
fn in_a_host_nothing_wakes_the_next_prompt_starts_from_the_kickoff_once() {
    let workspace = Workspace::new("wake-by-hand");
    let root = &workspace.root;
    let _agent = handed_off(root);
    let out = cli(root, &["proceed", "it", "printed", "9"]);
    assert!(out.contains("say \"go on\""), "{out}");
    let prompt = json!({"session_id": "c1", "cwd": root, "hook_event_name": "UserPromptSubmit",
                        "prompt": "go on"})
    .to_string();
    let context = |output: std::process::Output| -> String {
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let first = context(run_hook("codex", "UserPromptSubmit", &prompt, None));
    assert!(first.contains("pressed Proceed"), "{first}");
    assert!(first.contains("it printed 9"), "{first}");
    let second = context(run_hook("codex", "UserPromptSubmit", &prompt, None));
    assert!(!second.contains("pressed Proceed"), "given twice: {second}");
}
