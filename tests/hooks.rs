//! Claude Code and Codex command hooks, fed the JSON shapes the harnesses
//! send, alone and beside a `serve` on the same workspace.

mod support;

use serde_json::{json, Value};
use std::path::Path;

use support::*;

/// Run `debug-sidecar hook <dialect> <event>` with `input`; (stdout JSON, stderr, exit code).
fn hook(dialect: &str, event: &str, input: &str) -> (Option<Value>, String, Option<i32>) {
    hook_in_session(None, dialect, event, input)
}

/// `hook`, with `DEBUG_SIDECAR_SESSION` set to `session` when given.
fn hook_in_session(
    session: Option<&str>,
    dialect: &str,
    event: &str,
    input: &str,
) -> (Option<Value>, String, Option<i32>) {
    let output = run_hook(dialect, event, input, session);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let answer = (!stdout.trim().is_empty()).then(|| {
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
    });
    (
        answer,
        String::from_utf8(output.stderr).unwrap(),
        output.status.code(),
    )
}

fn input(root: &Path, session: &str, event: &str, extra: Value) -> String {
    let mut value = json!({
        "session_id": session,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": root,
        "hook_event_name": event,
    });
    for (key, field) in extra.as_object().unwrap() {
        value[key] = field.clone();
    }
    value.to_string()
}

#[test]
fn a_session_through_hooks_beside_an_editor() {
    let workspace = Workspace::new("hooks");
    let root = &workspace.root;
    // Claude Code's own session id: not the debug session's, which the
    // person starts in the editor.
    let session = "claude-7f3c";
    let mut editor = initialized(root);
    // Before a debug session, hooks add nothing.
    let (answer, _, code) = hook(
        "claude",
        "SessionStart",
        &input(root, session, "SessionStart", json!({"source": "startup"})),
    );
    assert_eq!((answer, code), (None, Some(0)));

    editor
        .request("debug/start", json!({"problem": "total is wrong"}))
        .unwrap();
    let (answer, _, _) = hook(
        "claude",
        "UserPromptSubmit",
        &input(root, session, "UserPromptSubmit", json!({"prompt": "go"})),
    );
    let answer = answer.expect("the blackboard");
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.starts_with("[DEBUG MODE · round 1 · stage investigating]"),
        "{context}"
    );
    // The editor hears the turn start the hook reported.
    let turn = editor.wait_for("turn/stateChanged", QUIET * 10, |p| {
        p["sessionId"] == "default"
    });
    assert_eq!(turn.expect("a turn state")["state"], "connecting");

    // The agent writes a file with a probe block: the hook rescans that file.
    let placed = editor
        .request(
            "debug/probeSnippet",
            json!({"file": "cart.sh", "variables": ["n"]}),
        )
        .unwrap();
    let text = format!("n=3\n{}echo $n\n", placed["snippet"].as_str().unwrap());
    std::fs::write(root.join("cart.sh"), &text).unwrap();
    let write = input(
        root,
        session,
        "PostToolUse",
        json!({
            "tool_name": "Write",
            "tool_input": {"file_path": root.join("cart.sh"), "content": text},
            "tool_response": {"success": true},
        }),
    );
    // The probe is live now: the model's board is refreshed where it changed.
    let refreshed = hook("claude", "PostToolUse", &write)
        .0
        .expect("a board update");
    let update = refreshed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(update.contains("Board update"), "{update}");
    assert!(update.contains("cart.sh"), "{update}");
    assert!(!update.contains("Problem:"), "only what changed: {update}");
    let status = editor.request("debug/status", json!({})).unwrap();
    assert_eq!(status["probes"]["live"], 1);
    // A todo list becomes the progress bubble.
    let todos = input(
        root,
        session,
        "PostToolUse",
        json!({
            "tool_name": "TodoWrite",
            "tool_input": {"todos": [{"content": "Add a probe", "status": "completed", "activeForm": "Adding a probe"},
                                     {"content": "Hand off", "status": "in_progress", "activeForm": "Handing off"}]},
        }),
    );
    hook("claude", "PostToolUse", &todos);
    let bubble = editor.request("progress/state", json!({})).unwrap();
    assert_eq!(bubble["title"], "Handing off");

    // Stopping without handing off is sent back, with the sidecar's own budget.
    let stop = input(
        root,
        session,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Added a probe."}),
    );
    let (answer, _, _) = hook("claude", "Stop", &stop);
    let answer = answer.expect("sent back");
    // As guidance the model reads, not a block Claude Code shows as an error.
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "Stop");
    assert!(answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("hand_off_to_user"));
    editor
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let (answer, _, code) = hook(
        "codex",
        "Stop",
        &input(root, session, "Stop", json!({"stop_hook_active": true})),
    );
    assert_eq!(
        (answer, code),
        (None, Some(0)),
        "a handed-off round lets the agent stop"
    );
}

#[test]
fn bad_input_never_traps_the_agent() {
    let workspace = Workspace::new("hooks-bad");
    let root = &workspace.root;
    let cases = [
        ("Stop", String::new(), "no input"),
        ("Stop", "{not json".to_string(), "not JSON"),
        (
            "Dance",
            input(root, "s1", "Dance", json!({})),
            "unknown hook event",
        ),
        ("Stop", json!({"session_id": "s1"}).to_string(), "cwd"),
        (
            "Stop",
            input(Path::new("/nonexistent/dir"), "s1", "Stop", json!({})),
            "not a directory",
        ),
    ];
    let bad_session = input(root, "s1", "Stop", json!({}));
    let cases = cases
        .into_iter()
        .map(|(event, stdin, words)| (None, event, stdin, words))
        .chain([(Some("../../etc"), "Stop", bad_session, "sessionId")]);
    for (session, event, stdin, words) in cases {
        let (answer, stderr, code) = hook_in_session(session, "claude", event, &stdin);
        assert_eq!(code, Some(0), "{words}");
        assert_eq!(answer, None, "{words}: nothing on stdout");
        assert!(stderr.contains(words), "{words}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one clear line: {stderr}");
    }
}

#[test]
fn hook_answers_in_each_dialect() {
    let workspace = Workspace::new("hooks-answers");
    let root = &workspace.root;
    let session = "codex-1";
    let mut editor = initialized(root);
    editor
        .request(
            "debug/start",
            json!({"problem": "Login fails after a reset."}),
        )
        .unwrap();
    let mut answers = Vec::new();
    for dialect in ["claude", "codex"] {
        for (event, extra) in [
            ("SessionStart", json!({"source": "resume"})),
            ("UserPromptSubmit", json!({"prompt": "why?"})),
            (
                "PreToolUse",
                json!({"tool_name": "Read", "tool_input": {"file_path": "a.py"}}),
            ),
            ("Stop", json!({"stop_hook_active": false})),
        ] {
            let (answer, stderr, code) = hook(dialect, event, &input(root, session, event, extra));
            assert_eq!(code, Some(0));
            assert!(stderr.is_empty(), "{stderr}");
            answers.push(json!({"dialect": dialect, "event": event, "answer": answer}));
        }
    }
    insta::assert_json_snapshot!("hook_answers", redact(&json!(answers), root));
}

#[test]
fn hooks_act_on_the_latest_session_or_the_one_named() {
    let workspace = Workspace::new("hooks-which");
    let root = &workspace.root;
    let mut editor = initialized(root);
    for (id, problem) in [("older", "first problem"), ("newer", "second problem")] {
        editor
            .request("debug/start", json!({"sessionId": id, "problem": problem}))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let prompt = input(
        root,
        "claude-1",
        "UserPromptSubmit",
        json!({"prompt": "go"}),
    );
    let blackboard = |answer: Option<Value>| {
        answer.expect("a blackboard")["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let latest = blackboard(hook("claude", "UserPromptSubmit", &prompt).0);
    assert!(latest.contains("second problem"), "{latest}");
    let named = blackboard(hook_in_session(Some("older"), "claude", "UserPromptSubmit", &prompt).0);
    assert!(named.contains("first problem"), "{named}");
    assert!(
        !root.join(".debug-sidecar/sessions/claude-1").exists(),
        "the harness's session id names no debug session"
    );
}

#[test]
fn a_stop_too_large_to_read_still_gets_its_send_back() {
    let workspace = Workspace::new("hooks-huge");
    let root = &workspace.root;
    let mut editor = initialized(root);
    editor
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    // 50 MB: the model's last message, after the members the hook needs.
    let stop = input(
        root,
        "c1",
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "x".repeat(50 << 20)}),
    );
    let (answer, stderr, code) = hook("claude", "Stop", &stop);
    assert_eq!(code, Some(0));
    assert!(stderr.contains("larger than 16 MiB"), "{stderr}");
    let answer = answer.expect("a stop too large to read is still sent back");
    assert!(answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("hand_off_to_user"));
    // A prompt too large to read: the turn is still the person's, and the
    // model still gets the board.
    let prompt = input(
        root,
        "c1",
        "UserPromptSubmit",
        json!({"prompt": "y".repeat(50 << 20)}),
    );
    let (answer, stderr, code) = hook("claude", "UserPromptSubmit", &prompt);
    assert_eq!(code, Some(0));
    assert!(stderr.contains("larger than 16 MiB"), "{stderr}");
    assert!(answer.is_some(), "the board: {stderr}");
}
