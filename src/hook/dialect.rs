//! What differs between the harnesses whose command hooks we answer: the
//! names of their events, the fields they report, and the shape of the
//! answers they act on. Measured in the lab (Claude Code 2.1.332, Codex
//! 0.171.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102); the meaning of each
//! event lives in the hook face and the engine, not here.

use crate::core::harness::{is_mcp_prompt_spelling, ToolNaming};
use crate::core::host::Host;
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    Claude,
    Codex,
    /// Gemini CLI: its own event names (`BeforeAgent`, `AfterTool`,
    /// `AfterAgent`, ...), `prompt_response` for the last message.
    Gemini,
    /// Copilot CLI reading Claude-shaped hooks: the model's context only
    /// from a top-level `additionalContext`, no last message on `Stop`.
    Copilot,
}

/// What a harness event means to us, whatever the harness calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    SessionStart,
    PromptSubmit,
    ToolStart,
    ToolEnd,
    Stop,
    /// The conversation is about to be summarised.
    Compact,
    /// An event we take and do nothing with.
    Quiet,
}

impl Dialect {
    /// The event a hook named `name` reports; None for a name we do not know.
    pub fn event(self, name: &str) -> Option<Event> {
        Some(match (self, name) {
            (Dialect::Gemini, "SessionStart") => Event::SessionStart,
            (Dialect::Gemini, "BeforeAgent") => Event::PromptSubmit,
            (Dialect::Gemini, "BeforeTool") => Event::ToolStart,
            (Dialect::Gemini, "AfterTool") => Event::ToolEnd,
            (Dialect::Gemini, "AfterAgent") => Event::Stop,
            (Dialect::Gemini, "PreCompress") => Event::Compact,
            (
                Dialect::Gemini,
                "SessionEnd"
                | "Notification"
                | "BeforeModel"
                | "AfterModel"
                | "BeforeToolSelection",
            ) => Event::Quiet,
            (Dialect::Gemini, _) => return None,
            (_, "SessionStart") => Event::SessionStart,
            (_, "UserPromptSubmit") => Event::PromptSubmit,
            (_, "PreToolUse") => Event::ToolStart,
            (_, "PostToolUse") => Event::ToolEnd,
            (_, "Stop") => Event::Stop,
            (_, "PreCompact") => Event::Compact,
            (_, "SessionEnd" | "SubagentStop" | "Notification") => Event::Quiet,
            _ => return None,
        })
    }

    /// Where the person is: the harness itself.
    pub fn host(self) -> Host {
        match self {
            Dialect::Claude => Host::ClaudeCode,
            Dialect::Codex => Host::Codex,
            Dialect::Gemini => Host::Gemini,
            Dialect::Copilot => Host::Copilot,
        }
    }

    pub fn naming(self) -> ToolNaming {
        match self {
            Dialect::Claude => ToolNaming::ClaudeCode,
            Dialect::Codex => ToolNaming::Codex,
            Dialect::Gemini => ToolNaming::Gemini,
            Dialect::Copilot => ToolNaming::Copilot,
        }
    }

    /// The agent's last message as the stop event reports it. Outer None:
    /// this harness does not report it (Copilot CLI).
    pub fn last_message(self, input: &Value) -> Option<Option<&str>> {
        let field = match self {
            Dialect::Claude | Dialect::Codex => "last_assistant_message",
            Dialect::Gemini => "prompt_response",
            Dialect::Copilot => return None,
        };
        Some(input.get(field).and_then(Value::as_str))
    }

    /// A finished tool call's result.
    pub fn tool_response(self, input: &Value) -> Value {
        let field = match self {
            Dialect::Copilot => "tool_result",
            _ => "tool_response",
        };
        input
            .get(field)
            .or_else(|| input.get("tool_response"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Whether the harness turns this typed command into our MCP prompt,
    /// whose text (the kickoff) then reaches the model (Claude Code, for
    /// `/mcp__debug-sidecar__…`; not for the same command typed as words). Where it does not
    /// (Codex has no MCP prompts; Copilot CLI's `-p` sends the words as
    /// they are), the prompt hook gives the kickoff itself.
    /// Gemini CLI expands a slash command before its prompt hook runs, so
    /// a `/debug...` that reaches the hook was not expanded (its MCP
    /// prompts were not loaded yet).
    pub fn expands_prompts(self, prompt: &str) -> bool {
        self == Dialect::Claude && is_mcp_prompt_spelling(prompt)
    }

    /// Whether a conversation that starts again from `source` has lost the
    /// boards it was given: after a compaction or a clear, and in Gemini
    /// CLI after `--resume` too (0.61.0 resumes a conversation without the
    /// context its prompt hooks appended).
    pub fn session_start_forgets(self, source: Option<&str>) -> bool {
        match source {
            Some("compact" | "clear") => true,
            Some("resume") => self == Dialect::Gemini,
            _ => false,
        }
    }

    /// Whether the board may ride on `SessionStart` from `source`: only
    /// after a compaction, which a turn can go on from without a prompt.
    /// Elsewhere a prompt follows, and its hook gives the board after it
    /// applied any command the prompt is (a board at start or resume would
    /// be the one from before that command). Gemini CLI's `-p` prepends
    /// that context to the person's prompt, which then no longer starts
    /// with its slash command: there the prompt hook always gives it.
    pub fn board_at_session_start(self, source: Option<&str>) -> bool {
        self != Dialect::Gemini && source == Some("compact")
    }

    /// Whether this event's answer reaches the person as well as the model
    /// (a lost-state notice goes on the first such answer).
    pub fn reaches_person_at_session_start(self) -> bool {
        self != Dialect::Gemini
    }

    /// Keep a prompt from the model, with a line for the person (Claude
    /// Code erases a prompt its hook blocks and shows the reason).
    pub fn refuse_prompt(self, person: &str) -> Value {
        json!({ "decision": "block", "reason": person })
    }

    /// Whether a prompt is the host's own notice, not the person speaking:
    /// Claude Code starts a turn with a background task's result (a tool
    /// call it moved to the background finished) and runs this hook for it.
    pub fn is_host_notice(self, prompt: &str) -> bool {
        self == Dialect::Claude && prompt.contains("[SYSTEM NOTIFICATION - NOT USER INPUT]")
    }

    /// The person's prompt, without the context other hooks prepended to
    /// it (Gemini CLI wraps each in `<hook_context>`).
    pub fn prompt(self, input: &Value) -> &str {
        let mut prompt = input.get("prompt").and_then(Value::as_str).unwrap_or("");
        if self == Dialect::Gemini {
            while let Some(rest) = prompt.trim_start().strip_prefix("<hook_context>") {
                match rest.find("</hook_context>") {
                    Some(end) => prompt = &rest[end + "</hook_context>".len()..],
                    None => break,
                }
            }
        }
        prompt
    }

    /// Whether a `Compact` event means the conversation really loses what
    /// it held. Gemini CLI fires `PreCompress` with trigger `auto` before
    /// every turn, before it decides whether to compress at all, so only a
    /// `manual` one (the person's `/compress`) is sure to.
    pub fn compacts(self, input: &Value) -> bool {
        match self {
            Dialect::Gemini => input.get("trigger").and_then(Value::as_str) == Some("manual"),
            _ => true,
        }
    }

    /// Text for the model and a line for the person on a non-stop event.
    pub fn context_answer(self, event: &str, model: Option<&str>, person: Option<&str>) -> Value {
        let mut answer = json!({});
        if let Some(model) = model {
            if self == Dialect::Copilot {
                // Copilot CLI 1.0.102 ignores `hookSpecificOutput` here.
                answer["additionalContext"] = json!(model);
            } else {
                answer["hookSpecificOutput"] =
                    json!({ "hookEventName": event, "additionalContext": model });
            }
        }
        if let Some(person) = person {
            answer["systemMessage"] = json!(person);
        }
        answer
    }

    /// Send a model that stopped back to work. Claude Code takes a Stop
    /// hook's `additionalContext` as guidance and runs the model again,
    /// where a `decision: block` reads to the person as "stop hook problem"
    /// and to the model as a blocking error, with the reason twice
    /// (measured with 2.1.332). Codex and Copilot CLI continue only on a
    /// block; Gemini CLI on a `deny`, whose reason becomes the next prompt.
    pub fn send_back(self, model: &str, person: Option<&str>) -> Value {
        let mut answer = match self {
            Dialect::Claude => json!({
                "hookSpecificOutput": { "hookEventName": "Stop", "additionalContext": model },
            }),
            Dialect::Codex | Dialect::Copilot => json!({ "decision": "block", "reason": model }),
            Dialect::Gemini => json!({ "decision": "deny", "reason": model }),
        };
        if let Some(person) = person {
            answer["systemMessage"] = json!(person);
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_knows_its_own_event_names_only() {
        assert_eq!(Dialect::Gemini.event("AfterAgent"), Some(Event::Stop));
        assert_eq!(
            Dialect::Gemini.event("BeforeAgent"),
            Some(Event::PromptSubmit)
        );
        assert_eq!(Dialect::Gemini.event("Stop"), None);
        assert_eq!(Dialect::Claude.event("AfterAgent"), None);
        assert_eq!(Dialect::Copilot.event("Stop"), Some(Event::Stop));
        assert_eq!(Dialect::Codex.event("PreCompact"), Some(Event::Compact));
    }

    #[test]
    fn only_a_manual_gemini_compression_is_taken_as_one() {
        assert!(!Dialect::Gemini.compacts(&json!({"trigger": "auto"})));
        assert!(Dialect::Gemini.compacts(&json!({"trigger": "manual"})));
        assert!(Dialect::Claude.compacts(&json!({"trigger": "auto"})));
    }

    #[test]
    fn copilot_gets_the_context_at_the_top_level() {
        let answer = Dialect::Copilot.context_answer("UserPromptSubmit", Some("board"), None);
        assert_eq!(answer, json!({"additionalContext": "board"}));
        let answer = Dialect::Gemini.context_answer("BeforeAgent", Some("board"), Some("hi"));
        assert_eq!(answer["hookSpecificOutput"]["additionalContext"], "board");
        assert_eq!(answer["systemMessage"], "hi");
    }

    #[test]
    fn a_gemini_prompt_is_read_past_the_context_prepended_to_it() {
        let input = json!({"prompt": "<hook_context>board</hook_context>\n\n/debug-proceed ok"});
        assert_eq!(Dialect::Gemini.prompt(&input).trim(), "/debug-proceed ok");
        // Unclosed: left as it is.
        let input = json!({"prompt": "<hook_context>board /debug x"});
        assert_eq!(
            Dialect::Gemini.prompt(&input),
            "<hook_context>board /debug x"
        );
        let input = json!({"prompt": "<hook_context>b</hook_context>/debug x"});
        assert_eq!(
            Dialect::Claude.prompt(&input),
            "<hook_context>b</hook_context>/debug x"
        );
    }

    #[test]
    fn a_background_tasks_result_is_the_hosts_notice_not_the_person() {
        let notice = "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an \
                      automated background-task event\n<task-notification>…";
        assert!(Dialect::Claude.is_host_notice(notice));
        assert!(!Dialect::Claude.is_host_notice("it printed 9"));
        assert!(!Dialect::Codex.is_host_notice(notice));
    }

    #[test]
    fn the_last_message_comes_from_each_harness_field() {
        let input = json!({"last_assistant_message": "a", "prompt_response": "b"});
        assert_eq!(Dialect::Claude.last_message(&input), Some(Some("a")));
        assert_eq!(Dialect::Gemini.last_message(&input), Some(Some("b")));
        assert_eq!(Dialect::Copilot.last_message(&input), None);
    }
}
