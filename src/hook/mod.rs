//! The `hook` face: one-shot processes for Claude Code and Codex command
//! hooks (DESIGN section 9). Each reads the hook's JSON on stdin, applies
//! it to the workspace's state, and prints the dialect's JSON answer.
//!
//! A hook must never trap the agent: whatever goes wrong (bad input, an
//! unknown event, an unreadable workspace) is one line on stderr, nothing
//! on stdout, and exit code 0.

mod dialect;
pub mod wake;

pub use dialect::Dialect;
use dialect::Event;

use crate::core::harness::{typed, HarnessEvent, HarnessEventKind, Typed};
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

/// The longest member value kept from an input too large to read whole.
const MAX_SALVAGED_VALUE: usize = 1024 * 1024;

/// Run one hook: the answer to print, if any. Never fails, never panics.
pub fn run(dialect: Dialect, event: &str, input: &str) -> Option<Value> {
    run_with(event, || {
        if input.trim().is_empty() {
            anyhow::bail!("no input on stdin");
        }
        let input: Value =
            serde_json::from_str(input).map_err(|e| anyhow::anyhow!("stdin is not JSON: {e}"))?;
        answer(dialect, event, &input)
    })
}

/// Run one hook on an input larger than the read limit, of which only the
/// first `MAX_INPUT` bytes were read: its small top-level members (`cwd`,
/// `session_id`, ...) are read from that prefix and the event is applied
/// with them, so a Stop too large to read still gets its send-back.
fn run_too_large(dialect: Dialect, event: &str, prefix: &[u8]) -> Option<Value> {
    let (members, _) =
        crate::core::json_skim::top_level_members(prefix, |_| true, MAX_SALVAGED_VALUE);
    eprintln!(
        "debug-sidecar hook {event}: the input is larger than {} MiB; applied with its small \
         members only ({})",
        MAX_INPUT >> 20,
        members
            .iter()
            .map(|(key, _)| crate::core::escape::inline_cut(key, 40))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let input = Value::Object(members.into_iter().collect());
    run_with(event, || answer(dialect, event, &input))
}

fn run_with(event: &str, answer: impl FnOnce() -> anyhow::Result<Option<Value>>) -> Option<Value> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(answer));
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
    let mut input = Vec::new();
    let read = std::io::stdin().take(MAX_INPUT + 1).read_to_end(&mut input);
    if let Err(error) = read {
        eprintln!("debug-sidecar hook {event}: stdin is not readable: {error}");
        return;
    }
    let answer = if input.len() as u64 > MAX_INPUT {
        // The rest is drained, not kept, so the harness's write completes.
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        run_too_large(dialect, event, &input[..MAX_INPUT as usize])
    } else {
        match String::from_utf8(input) {
            Ok(input) => run(dialect, event, &input),
            Err(error) => {
                eprintln!("debug-sidecar hook {event}: stdin is not UTF-8 text: {error}");
                return;
            }
        }
    };
    if let Some(answer) = answer {
        println!("{answer}");
    }
}

/// The engine a hook acts through, speaking its host's names, and the
/// session it acts on.
fn open_engine(dialect: Dialect, config: EngineConfig) -> anyhow::Result<(Engine, String)> {
    let store = committed::open_store(&config.root, &config.state_dir);
    let mut engine = Engine::new(config, store);
    engine.set_tool_naming(dialect.naming());
    engine.set_host(dialect.host());
    let session = engine.resolve(None)?;
    Ok((engine, session))
}

fn answer(dialect: Dialect, event_name: &str, input: &Value) -> anyhow::Result<Option<Value>> {
    let Some(event) = dialect.event(event_name) else {
        anyhow::bail!("unknown hook event `{event_name}`; nothing was done");
    };
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
    let (mut engine, session) = open_engine(dialect, config)?;
    let now = now_ms();
    let harness = |kind, tool: Option<String>, source| HarnessEvent {
        kind,
        tool,
        source,
        edits: None,
    };
    // A state directory deleted under an active session: said once, on the
    // first event whose answer reaches both the person and the model.
    let reaches_both = match event {
        Event::SessionStart => dialect.reaches_person_at_session_start(),
        Event::PromptSubmit | Event::ToolEnd | Event::Stop => true,
        _ => false,
    };
    if reaches_both {
        if let Some((person, model)) = engine.take_lost_notice() {
            return Ok(Some(if event == Event::Stop {
                dialect.send_back(&model, Some(&person))
            } else {
                dialect.context_answer(event_name, Some(&model), Some(&person))
            }));
        }
    }
    match event {
        Event::SessionStart => {
            let source = input.get("source").and_then(Value::as_str);
            if dialect.session_start_forgets(source) {
                engine.conversation_reset(&session, &conversation, now)?;
            }
            if !dialect.board_at_session_start(source) {
                return Ok(None);
            }
            let board = engine.board_for(&session, &conversation, now)?;
            Ok(board.map(|board| dialect.context_answer(event_name, Some(&board), None)))
        }
        Event::PromptSubmit => {
            let prompt = dialect.prompt(input);
            let typed = typed(dialect.host(), prompt);
            if typed == Typed::HostsDebugWithWords {
                if let Some(line) = text::bare_debug_line(dialect.host()) {
                    return Ok(Some(dialect.refuse_prompt(&line)));
                }
            }
            // Gemini CLI hands a nudge to the model as a new prompt and runs
            // this hook for it: the agent goes on, the person said nothing.
            let source = if dialect.is_host_notice(prompt)
                || engine.is_nudge_echo(&session, &conversation, prompt, now)?
            {
                None
            } else {
                Some(TurnSource::User)
            };
            // The person goes on in the chat after a Proceed given elsewhere
            // that nothing woke the agent for: this turn starts from its
            // kickoff (taken before the turn's start would supersede it).
            let waiting = match (&typed, source) {
                (Typed::Other, Some(_)) => engine.wake_in_chat(&session, now)?,
                _ => None,
            };
            let event_kind = harness(HarnessEventKind::TurnStart, None, source);
            engine.harness_event(&session, event_kind, now)?;
            // A slash command of ours is applied here, with the whole prompt,
            // so the board below already shows its outcome (Claude Code
            // expands the command only after this hook).
            let mut person = None;
            let mut kickoff = waiting;
            if let (Typed::Ours(kind, words), Some(_)) = (typed, source) {
                person = Some(
                    match engine.person_command(&session, kind, Some(words), now) {
                        Ok(answer) => {
                            // An echo's kickoff was given with the first;
                            // an expanded prompt gives its own.
                            kickoff = answer
                                .kickoff
                                .filter(|_| !answer.echoed && !dialect.expands_prompts(prompt));
                            answer.said
                        }
                        Err(error) => format!("debug-sidecar: {error}"),
                    },
                );
            }
            let board = engine.board_for(&session, &conversation, now)?;
            let model = match (kickoff, board) {
                (Some(kickoff), Some(board)) => Some(format!("{kickoff}\n\n{board}")),
                (kickoff, board) => kickoff.or(board),
            };
            Ok((model.is_some() || person.is_some())
                .then(|| dialect.context_answer(event_name, model.as_deref(), person.as_deref())))
        }
        Event::ToolStart => {
            engine.harness_event(
                &session,
                harness(HarnessEventKind::ToolCall, None, None),
                now,
            )?;
            Ok(None)
        }
        Event::ToolEnd => {
            let tool = input
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let tool_input = input.get("tool_input").cloned().unwrap_or(Value::Null);
            let response = dialect.tool_response(input);
            engine.tool_used(&session, tool, &tool_input, &response, &cwd, now)?;
            // A call that changed the state (hypotheses, a probe on disk, a
            // hand-off) refreshes the sections of the board it changed.
            let board = engine.board_update_for(&session, &conversation, now)?;
            // The person answered the hand-off form: their receipt (Claude
            // Code shows the tool call itself only as "Called debug-sidecar").
            let receipt = if tool.ends_with(text::HAND_OFF_TOOL) {
                engine.take_receipt(&session, now)?
            } else {
                None
            };
            Ok((board.is_some() || receipt.is_some())
                .then(|| dialect.context_answer(event_name, board.as_deref(), receipt.as_deref())))
        }
        Event::Stop => {
            let last = match dialect.last_message(input) {
                Some(last) => last,
                None => {
                    // Not reported (Copilot CLI): the notice must not say
                    // the agent stopped without a word.
                    let said = harness(HarnessEventKind::Message, None, None);
                    engine.harness_event(&session, said, now)?;
                    None
                }
            };
            let stop = engine.agent_stopped(&session, last, now)?;
            Ok(match (stop.decision, stop.reason) {
                (StopDecision::Block { .. }, Some(reason)) => {
                    // Where the person reads it too, it says whom it is for,
                    // and is all they need to read.
                    let (reason, person) = if dialect.host().shows_send_back() {
                        (format!("{}{reason}", text::SEND_BACK_ADDRESS), None)
                    } else {
                        (reason, Some(text::NUDGE_NOTICE))
                    };
                    engine.nudge_sent(&session, &conversation, &reason, now)?;
                    Some(dialect.send_back(&reason, person))
                }
                _ => stop.notice.map(|notice| json!({ "systemMessage": notice })),
            })
        }
        Event::Compact => {
            // What the conversation was given is about to be summarised away.
            if dialect.compacts(input) {
                engine.conversation_reset(&session, &conversation, now)?;
            }
            Ok(None)
        }
        Event::Quiet => Ok(None),
    }
}
