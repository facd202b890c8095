//! The `hook` face: one-shot processes for Claude Code and Codex command
//! hooks (DESIGN section 9). Each reads the hook's JSON on stdin, applies
//! it to the workspace's state, and prints the dialect's JSON answer.
//!
//! A hook must never trap the agent: whatever goes wrong (bad input, an
//! unknown event, an unreadable workspace) is one line on stderr, nothing
//! on stdout, and exit code 0.

use crate::core::harness::{person_command, HarnessEvent, HarnessEventKind, ToolNaming};
use crate::core::machine::{StopDecision, TurnSource};
use crate::core::text;
use crate::engine::owner::now_ms;
use crate::engine::{Engine, EngineConfig};
use crate::workspace::committed;
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;

/// The largest hook input read (a `PostToolUse` can carry a whole file).
const MAX_INPUT: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    Claude,
    Codex,
}

/// Run one hook: the answer to print, if any. Never fails, never panics.
pub fn run(dialect: Dialect, event: &str, input: &str) -> Option<Value> {
    let outcome = std::panic::catch_unwind(|| answer(dialect, event, input));
    match outcome {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => {
            eprintln!("debug-sidecar hook {event}: {error}");
            None
        }
        Err(panic) => {
            let message = crate::engine::owner::panic_message(&*panic);
            eprintln!("debug-sidecar hook {event}: internal error: {message}");
            None
        }
    }
}

/// `run` on this process's stdin and stdout.
pub fn run_stdio(dialect: Dialect, event: &str) {
    let mut input = String::new();
    let read = std::io::stdin().take(MAX_INPUT).read_to_string(&mut input);
    if let Err(error) = read {
        eprintln!("debug-sidecar hook {event}: stdin is not readable text: {error}");
        return;
    }
    if let Some(answer) = run(dialect, event, &input) {
        println!("{answer}");
    }
}

fn answer(dialect: Dialect, event: &str, input: &str) -> anyhow::Result<Option<Value>> {
    if input.trim().is_empty() {
        anyhow::bail!("no input on stdin");
    }
    let input: Value =
        serde_json::from_str(input).map_err(|e| anyhow::anyhow!("stdin is not JSON: {e}"))?;
    let cwd = input
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("the input has no `cwd`"))?;
    if !cwd.is_dir() {
        anyhow::bail!("`cwd` {} is not a directory", cwd.display());
    }
    // The harness's conversation: each one holds its own copies of the board.
    let conversation = input
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let config = EngineConfig::for_agent(crate::engine::workspace_root(&cwd))?;
    let store = committed::open_store(&config.root, &config.state_dir);
    let mut engine = Engine::new(config, store);
    engine.set_tool_naming(match dialect {
        Dialect::Claude => ToolNaming::ClaudeCode,
        Dialect::Codex => ToolNaming::Codex,
    });
    let session = engine.resolve(None)?;
    let now = now_ms();
    let harness = |kind, tool: Option<String>, source| HarnessEvent {
        kind,
        tool,
        source,
        edits: None,
    };
    // A state directory deleted under an active session: said once, on the
    // first event whose answer reaches both the person and the model.
    if matches!(
        event,
        "SessionStart" | "UserPromptSubmit" | "PostToolUse" | "Stop"
    ) {
        if let Some((person, model)) = engine.take_lost_notice() {
            return Ok(Some(if event == "Stop" {
                send_back(dialect, &model, &person)
            } else {
                context_answer(event, Some(&model), Some(&person))
            }));
        }
    }
    match event {
        "SessionStart" => {
            let source = input.get("source").and_then(Value::as_str);
            if matches!(source, Some("compact" | "clear")) {
                engine.conversation_reset(&session, &conversation, now)?;
            }
            let board = engine.board_for(&session, &conversation, now)?;
            Ok(board.map(|board| context_answer(event, Some(&board), None)))
        }
        "UserPromptSubmit" => {
            let event_kind = harness(HarnessEventKind::TurnStart, None, Some(TurnSource::User));
            engine.harness_event(&session, event_kind, now)?;
            // A slash command of ours is applied here, with the whole prompt,
            // so the board below already shows its outcome (Claude Code
            // expands the command only after this hook).
            let prompt = input.get("prompt").and_then(Value::as_str).unwrap_or("");
            let mut person = None;
            if let Some((kind, words)) = person_command(prompt) {
                person = Some(
                    match engine.person_command(&session, kind, Some(words), now) {
                        Ok(answer) => answer.said,
                        Err(error) => format!("debug-sidecar: {error}"),
                    },
                );
            }
            let board = engine.board_for(&session, &conversation, now)?;
            Ok((board.is_some() || person.is_some())
                .then(|| context_answer(event, board.as_deref(), person.as_deref())))
        }
        "PreToolUse" => {
            engine.harness_event(
                &session,
                harness(HarnessEventKind::ToolCall, None, None),
                now,
            )?;
            Ok(None)
        }
        "PostToolUse" => {
            let tool = input
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let tool_input = input.get("tool_input").cloned().unwrap_or(Value::Null);
            let response = input.get("tool_response").cloned().unwrap_or(Value::Null);
            engine.tool_used(&session, tool, &tool_input, &response, &cwd, now)?;
            // A call that changed the state (hypotheses, a probe on disk, a
            // hand-off) refreshes the sections of the board it changed.
            let board = engine.board_update_for(&session, &conversation, now)?;
            Ok(board.map(|board| context_answer(event, Some(&board), None)))
        }
        "Stop" => {
            let last = input.get("last_assistant_message").and_then(Value::as_str);
            let stop = engine.agent_stopped(&session, last, now)?;
            Ok(match (stop.decision, stop.reason) {
                (StopDecision::Block { .. }, Some(reason)) => {
                    Some(send_back(dialect, &reason, text::NUDGE_NOTICE))
                }
                _ => stop.notice.map(|notice| json!({ "systemMessage": notice })),
            })
        }
        "PreCompact" => {
            // What the conversation was given is about to be summarised away.
            engine.conversation_reset(&session, &conversation, now)?;
            Ok(None)
        }
        "SessionEnd" | "SubagentStop" | "Notification" => Ok(None),
        other => anyhow::bail!("unknown hook event `{other}`; nothing was done"),
    }
}

/// Text for the model (`additionalContext`) and a line for the person
/// (`systemMessage`), as both harnesses take them on these events.
fn context_answer(event: &str, model: Option<&str>, person: Option<&str>) -> Value {
    let mut answer = json!({});
    if let Some(model) = model {
        answer["hookSpecificOutput"] =
            json!({ "hookEventName": event, "additionalContext": model });
    }
    if let Some(person) = person {
        answer["systemMessage"] = json!(person);
    }
    answer
}

/// Send a model that stopped back to work. Claude Code takes a Stop hook's
/// `additionalContext` as guidance and runs the model again, where a
/// `decision: block` reads to the person as "stop hook problem" and to the
/// model as a blocking error, with the reason twice (measured in the lab
/// with 2.1.332). Codex continues only on a block.
fn send_back(dialect: Dialect, model: &str, person: &str) -> Value {
    match dialect {
        Dialect::Claude => json!({
            "hookSpecificOutput": { "hookEventName": "Stop", "additionalContext": model },
            "systemMessage": person,
        }),
        Dialect::Codex => json!({ "decision": "block", "reason": model, "systemMessage": person }),
    }
}
