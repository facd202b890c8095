//! The hook dialects of Gemini CLI and Copilot CLI, fed the JSON their
//! hooks send (captured from Gemini CLI 0.61.0 and Copilot CLI 1.0.102 in
//! the lab), `install gemini|copilot`, and what differs for Claude Code.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

use support::*;

fn answer(dialect: &str, event: &str, root: &Path, conversation: &str, extra: Value) -> Value {
    let mut input = json!({
        "session_id": conversation,
        "transcript_path": "/tmp/transcript.json",
        "cwd": root,
        "hook_event_name": event,
        "timestamp": "2026-12-01T18:25:03.890Z",
    });
    for (key, field) in extra.as_object().unwrap() {
        input[key] = field.clone();
    }
    let output = run_hook(dialect, event, &input.to_string(), None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr.is_empty(), "{dialect} {event}: {stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

fn context(answer: &Value) -> Option<&str> {
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or_else(|| answer["additionalContext"].as_str())
}

fn stage(root: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_debug-sidecar"))
        .args(["status", "--json"])
        .current_dir(root)
        .output()
        .unwrap();
    let sessions: Value = serde_json::from_slice(&output.stdout).unwrap();
    sessions[0]["stage"].as_str().unwrap_or("none").to_string()
}

#[test]
fn gemini_sends_back_with_a_deny_and_its_echo_is_no_turn_of_the_person() {
    let workspace = Workspace::new("gemini-dialect");
    let root = &workspace.root;
    let chat = "gemini-chat-1";
    // `/debug` typed before Gemini CLI loaded our MCP prompts reaches the
    // hook as it was typed, after the context another hook prepended.
    let started = answer(
        "gemini",
        "BeforeAgent",
        root,
        chat,
        json!({"prompt": "<hook_context>other</hook_context>\n\n/debug total is 9, not 12"}),
    );
    let given = context(&started).expect("a board and the kickoff");
    assert!(given.contains("Debug Mode is on"), "{given}");
    assert!(given.contains("[DEBUG MODE · round 1 · stage investigating]"));
    assert!(given.contains("mcp_debug-sidecar_hand_off_to_user"));
    assert!(!given.contains('<') && !given.contains('>'), "{given}");
    // The stop: `prompt_response` is the agent's last message.
    let stop = answer(
        "gemini",
        "AfterAgent",
        root,
        chat,
        json!({"prompt": "/debug total is 9", "prompt_response": "It is the slice.",
               "stop_hook_active": false}),
    );
    assert_eq!(stop["decision"], "deny", "{stop}");
    let nudge = stop["reason"].as_str().unwrap().to_string();
    assert!(nudge.contains("is still yours"));
    // Gemini CLI runs the prompt hook for the nudge: no new board, no
    // person's turn, no second nudge budget.
    let echo = answer(
        "gemini",
        "BeforeAgent",
        root,
        chat,
        json!({"prompt": nudge}),
    );
    assert_eq!(echo, Value::Null, "the nudge's echo got {echo}");
    let stop = answer(
        "gemini",
        "AfterAgent",
        root,
        chat,
        json!({"prompt": "/debug total is 9", "prompt_response": "Still the slice.",
               "stop_hook_active": true}),
    );
    let notice = stop["systemMessage"].as_str().unwrap();
    assert!(
        notice.starts_with("The agent stopped without handing"),
        "{notice}"
    );
    assert_eq!(stage(root), "user_turn");
}

#[test]
fn gemini_takes_only_a_manual_compression_and_a_resume_as_lost_context() {
    let workspace = Workspace::new("gemini-compress");
    let root = &workspace.root;
    let chat = "gemini-chat-2";
    answer(
        "gemini",
        "BeforeAgent",
        root,
        chat,
        json!({"prompt": "/debug login fails"}),
    );
    // SessionStart never carries the board: in `-p` it would go before the
    // person's prompt and hide a slash command.
    let start = answer(
        "gemini",
        "SessionStart",
        root,
        "other",
        json!({"source": "startup"}),
    );
    assert_eq!(start, Value::Null);
    let again = json!({"prompt": "and?"});
    assert_eq!(
        answer("gemini", "BeforeAgent", root, chat, again.clone()),
        Value::Null
    );
    // Fired before every turn, compressing or not: the board stays given.
    answer(
        "gemini",
        "PreCompress",
        root,
        chat,
        json!({"trigger": "auto"}),
    );
    assert_eq!(
        answer("gemini", "BeforeAgent", root, chat, again.clone()),
        Value::Null
    );
    answer(
        "gemini",
        "PreCompress",
        root,
        chat,
        json!({"trigger": "manual"}),
    );
    let after = answer("gemini", "BeforeAgent", root, chat, again.clone());
    assert!(context(&after).is_some_and(|c| c.starts_with("[DEBUG MODE")));
    // `--resume` drops what prompt hooks appended (0.61.0).
    answer(
        "gemini",
        "SessionStart",
        root,
        chat,
        json!({"source": "resume"}),
    );
    let resumed = answer("gemini", "BeforeAgent", root, chat, again);
    assert!(context(&resumed).is_some_and(|c| c.starts_with("[DEBUG MODE")));
}

#[test]
fn gemini_todos_become_progress_and_its_edits_rescan() {
    let workspace = Workspace::new("gemini-todos");
    let root = &workspace.root;
    answer(
        "gemini",
        "BeforeAgent",
        root,
        "c",
        json!({"prompt": "/debug x is wrong"}),
    );
    let todos = json!({"todos": [
        {"description": "Read total()", "status": "completed"},
        {"description": "Probe the prices", "status": "in_progress"},
        {"description": "Dropped idea", "status": "cancelled"},
    ]});
    answer(
        "gemini",
        "AfterTool",
        root,
        "c",
        json!({"tool_name": "write_todos", "tool_input": todos,
               "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}}),
    );
    let activity =
        std::fs::read_to_string(root.join(".debug-sidecar/sessions/default/activity.json"))
            .unwrap();
    assert!(activity.contains("Probe the prices"), "{activity}");
    assert!(!activity.contains("Dropped idea"), "{activity}");
}

#[test]
fn copilot_reads_context_at_the_top_level_and_gets_the_kickoff_for_a_typed_command() {
    let workspace = Workspace::new("copilot-dialect");
    let root = &workspace.root;
    let chat = "copilot-1";
    // `-p "/debug ..."` is not expanded by Copilot CLI: the hook applies it
    // and gives the kickoff with the board, at the top level.
    let started = answer(
        "copilot",
        "UserPromptSubmit",
        root,
        chat,
        json!({"prompt": "/debug the total is wrong"}),
    );
    assert!(started.get("hookSpecificOutput").is_none(), "{started}");
    let given = started["additionalContext"].as_str().unwrap();
    assert!(given.contains("Debug Mode is on"), "{given}");
    assert!(given.contains("debug-sidecar-hand_off_to_user"), "{given}");
    // Its tool results are `tool_result`; its edit tool is `edit`.
    std::fs::write(root.join("app.py"), "x = 1\n").unwrap();
    let after = answer(
        "copilot",
        "PostToolUse",
        root,
        chat,
        json!({"tool_name": "edit", "tool_input": {"path": root.join("app.py")},
               "tool_result": {"result_type": "success", "text_result_for_llm": "ok"}}),
    );
    assert_eq!(
        after,
        Value::Null,
        "nothing changed, nothing is said: {after}"
    );
    // The stop reports no last message: the notice must not claim silence.
    let stop = answer(
        "copilot",
        "Stop",
        root,
        chat,
        json!({"stop_reason": "end_turn", "stop_hook_active": false}),
    );
    assert_eq!(stop["decision"], "block", "{stop}");
    let stop = answer(
        "copilot",
        "Stop",
        root,
        chat,
        json!({"stop_reason": "end_turn", "stop_hook_active": true}),
    );
    let notice = stop["systemMessage"].as_str().unwrap();
    assert!(!notice.contains("without a word"), "{notice}");
}

#[test]
fn install_writes_and_checks_gemini_and_copilot() {
    let workspace = Workspace::new("install-reach");
    let root = &workspace.root;
    let sidecar = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_debug-sidecar"))
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
    };
    for agent in ["gemini", "copilot"] {
        assert_eq!(
            sidecar(&["install", agent, "--check"]).status.code(),
            Some(1)
        );
        let wrote = sidecar(&["install", agent, "--write"]);
        assert!(wrote.status.success(), "{wrote:?}");
        let check = sidecar(&["install", agent, "--check"]);
        assert_eq!(check.status.code(), Some(0), "{check:?}");
    }
    let gemini: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        gemini["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        "debug-sidecar hook gemini AfterAgent"
    );
    assert_eq!(
        gemini["mcpServers"]["debug-sidecar"]["args"],
        json!(["mcp"])
    );
    let copilot: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".github/hooks/debug-sidecar.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(copilot["version"], 1);
    assert_eq!(
        copilot["hooks"]["Stop"][0]["hooks"][0]["command"],
        "debug-sidecar hook copilot Stop"
    );
    // Written twice, nothing is doubled.
    sidecar(&["install", "gemini", "--write"]);
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(again, gemini);
}

/// In Claude Code `/debug` is its own debug skill: `/debug <problem>` starts
/// nothing of ours; the prompt is kept from the model and the person gets
/// the line naming `/mcp__debug-sidecar__debug`. A bare `/debug` stays
/// Claude Code's. Elsewhere `/debug <problem>` is ours.
#[test]
fn claude_codes_own_debug_is_answered_with_the_name_of_ours() {
    let workspace = Workspace::new("claude-bare-debug");
    let root = &workspace.root;
    let refused = answer(
        "claude",
        "UserPromptSubmit",
        root,
        "c1",
        json!({"prompt": "/debug the total is wrong"}),
    );
    assert_eq!(refused["decision"], "block", "{refused}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains("/mcp__debug-sidecar__debug [the problem]"),
        "{reason}"
    );
    assert_eq!(reason.lines().count(), 1, "{reason}");
    assert_eq!(stage(root), "none");
    let bare = answer(
        "claude",
        "UserPromptSubmit",
        root,
        "c1",
        json!({"prompt": "/debug"}),
    );
    assert_eq!(bare, Value::Null);
    answer(
        "codex",
        "UserPromptSubmit",
        root,
        "x1",
        json!({"prompt": "/debug the total is wrong"}),
    );
    assert_eq!(stage(root), "investigating");
}

/// A resumed conversation gets no board at its start: the prompt that
/// follows may be a command that changes it (`--continue` with a typed
/// Proceed), and its hook gives the board after applying it. A compacted
/// one does: its turn may go on without a prompt.
#[test]
fn the_board_waits_for_the_prompt_after_a_resume() {
    let workspace = Workspace::new("claude-resume");
    let root = &workspace.root;
    let chat = "c1";
    let start = json!({"prompt": "/mcp__debug-sidecar__debug the total is wrong"});
    answer("claude", "UserPromptSubmit", root, chat, start);
    let resumed = answer(
        "claude",
        "SessionStart",
        root,
        chat,
        json!({"source": "resume"}),
    );
    assert_eq!(resumed, Value::Null);
    let proceed = json!({"prompt": "/mcp__debug-sidecar__debug-proceed it printed 9"});
    let after = answer("claude", "UserPromptSubmit", root, chat, proceed);
    let board = context(&after).unwrap_or_default();
    assert!(
        board.contains("[DEBUG MODE · round 2 · stage investigating]"),
        "{after}"
    );
    assert!(!board.contains("round 1 · stage"), "{board}");
    let compacted = answer(
        "claude",
        "SessionStart",
        root,
        chat,
        json!({"source": "compact"}),
    );
    assert!(context(&compacted).is_some_and(|c| c.starts_with("[DEBUG MODE · round 2")));
}

/// `install claude --write` approves its own MCP server as Claude Code
/// records an approval (so the interactive CLI does not ask, "continue
/// without" preselected), and `--check` names a decline and its undo.
#[test]
fn install_claude_approves_its_server_and_check_reports_a_decline() {
    let workspace = Workspace::new("install-claude");
    let root = &workspace.root;
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let key = root.to_string_lossy().into_owned();
    std::fs::write(
        home.join(".claude.json"),
        json!({"projects": {key: {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();
    let sidecar = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_debug-sidecar"))
            .args(args)
            .current_dir(root)
            .env("HOME", &home)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    sidecar(&["install", "claude", "--write"]);
    let local = root.join(".claude/settings.local.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(settings["enabledMcpjsonServers"], json!(["debug-sidecar"]));
    let (code, said) = sidecar(&["install", "claude", "--check"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("ok       the debug-sidecar MCP server approved"),
        "{said}"
    );
    // The person chose "Continue without using this MCP server".
    let mut declined = settings.clone();
    declined["enabledMcpjsonServers"] = json!([]);
    declined["disabledMcpjsonServers"] = json!(["debug-sidecar"]);
    std::fs::write(&local, declined.to_string()).unwrap();
    let (code, said) = sidecar(&["install", "claude", "--check"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("MISSING  the debug-sidecar MCP server declined"),
        "{said}"
    );
    assert!(said.contains("claude mcp reset-project-choices"), "{said}");
}
