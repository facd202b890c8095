//! The `hook` face: one-shot processes for Claude Code and Codex command
//! hooks (DESIGN section 9). Each reads the hook's JSON on stdin, applies
//! it to the workspace's state, and prints the dialect's JSON answer.
//!
//! A hook must never trap the agent: whatever goes wrong (bad input, an
//! unknown event, an unreadable workspace) is one line on stderr, nothing
//! on stdout, and exit code 0.

use crate::core::harness::{HarnessEvent, HarnessEventKind};
use crate::core::machine::{StopDecision, TurnSource};
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
    let _ = dialect; // Both dialects share these shapes today.
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
    let config = EngineConfig::for_agent(crate::engine::workspace_root(&cwd))?;
    let store = committed::open_store(&config.root, &config.state_dir);
    let mut engine = Engine::new(config, store);
    let session = engine.resolve(None)?;
    let now = now_ms();
    let harness = |kind, tool: Option<String>, source| HarnessEvent { kind, tool, source };
    // A state directory deleted under an active session: said once, on the
    // first event whose answer reaches both the person and the model.
    if matches!(
        event,
        "SessionStart" | "UserPromptSubmit" | "PostToolUse" | "Stop"
    ) {
        if let Some((person, model)) = engine.take_lost_notice() {
            return Ok(Some(if event == "Stop" {
                json!({ "decision": "block", "reason": model, "systemMessage": person })
            } else {
                json!({
                    "systemMessage": person,
                    "hookSpecificOutput": { "hookEventName": event, "additionalContext": model },
                })
            }));
        }
    }
    match event {
        "SessionStart" => context(&mut engine, &session, event),
        "UserPromptSubmit" => {
            let event_kind = harness(HarnessEventKind::TurnStart, None, Some(TurnSource::User));
            engine.harness_event(&session, event_kind, now)?;
            context(&mut engine, &session, event)
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
            engine.tool_used(&session, tool, &tool_input, &cwd, now)?;
            Ok(None)
        }
        "Stop" => {
            let last = input.get("last_assistant_message").and_then(Value::as_str);
            let stop = engine.agent_stopped(&session, last, now)?;
            Ok(match (stop.decision, stop.reason) {
                (StopDecision::Block { .. }, Some(reason)) => {
                    Some(json!({ "decision": "block", "reason": reason }))
                }
                _ => stop.notice.map(|notice| json!({ "systemMessage": notice })),
            })
        }
        "SessionEnd" | "SubagentStop" | "Notification" | "PreCompact" => Ok(None),
        other => anyhow::bail!("unknown hook event `{other}`; nothing was done"),
    }
}

/// The blackboard as additional context, while a debug session is active.
fn context(engine: &mut Engine, session: &str, event: &str) -> anyhow::Result<Option<Value>> {
    let (content, _) = engine.context(session, None)?;
    Ok(content.map(|content| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event,
                "additionalContext": content,
            }
        })
    }))
}
