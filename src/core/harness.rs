//! What a harness reports about the agent's turn (`turn/event`, hook events),
//! and what each report means to the turn-state reducer and to the debug
//! session. Faces only parse; the meaning lives here.

use super::harness_memory::PersonCommandKind;
use super::machine::{Command, TurnSource};
use super::progress::{tool_activity, ActivityLine};
use super::turn::TurnEvent;
use crate::core::host::Host;
use serde::{Deserialize, Serialize};

/// The kinds of `turn/event`: the turn-state events of DESIGN section 5 plus
/// `message`, a finished assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HarnessEventKind {
    TurnStart,
    Reasoning,
    ToolCall,
    Content,
    TurnEnd,
    Cancel,
    Error,
    /// A finished assistant message.
    Message,
}

/// One report from a harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessEvent {
    pub kind: HarnessEventKind,
    /// For `toolCall`: the tool's name, when the harness knows it.
    pub tool: Option<String>,
    /// For `turnStart`: who started the turn. A start without a source is
    /// taken as a continuation, so it never spends the user's budgets.
    pub source: Option<TurnSource>,
    /// For `toolCall`: the harness says whether the call edited files;
    /// None leaves it to the tool's name.
    pub edits: Option<bool>,
}

/// The edit tools known by name (Claude Code's, Codex's, pi's, oh-my-pi's,
/// OpenCode's, Copilot CLI's `edit` and `create`, Gemini CLI's `write_file`
/// and `replace`): their calls can add or remove probes, so a rescan follows.
pub fn is_edit_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Edit"
            | "Write"
            | "MultiEdit"
            | "NotebookEdit"
            | "apply_patch"
            | "edit"
            | "write"
            | "multiedit"
            | "patch"
            | "ast_edit"
            | "create"
            | "write_file"
            | "replace"
    )
}

impl HarnessEvent {
    /// The turn-state event; a finished message changes no turn state.
    pub fn turn_event(&self) -> Option<TurnEvent> {
        Some(match self.kind {
            HarnessEventKind::TurnStart => TurnEvent::TurnStart,
            HarnessEventKind::Reasoning => TurnEvent::Reasoning,
            HarnessEventKind::ToolCall => TurnEvent::ToolCall,
            HarnessEventKind::Content => TurnEvent::Content,
            HarnessEventKind::TurnEnd => TurnEvent::TurnEnd,
            HarnessEventKind::Cancel => TurnEvent::Cancel,
            HarnessEventKind::Error => TurnEvent::Error,
            HarnessEventKind::Message => return None,
        })
    }

    /// The debug-session command this report carries, if any: a turn start,
    /// a finished assistant message, or a tool call that names its tool.
    /// `edit_tools` are the client's own tools that edit files, beside the
    /// ones known by name; the event's own `edits` outranks both.
    pub fn session_command(&self, edit_tools: &[String]) -> Option<Command> {
        match self.kind {
            HarnessEventKind::TurnStart => Some(Command::TurnStarted(
                self.source.unwrap_or(TurnSource::Continuation),
            )),
            HarnessEventKind::Message => Some(Command::AssistantMessage),
            HarnessEventKind::ToolCall => self
                .tool
                .as_ref()
                .filter(|tool| !tool.trim().is_empty())
                .map(|tool| Command::ToolCall {
                    tool: tool.clone(),
                    edits: self.edits.unwrap_or_else(|| {
                        is_edit_tool(tool) || edit_tools.iter().any(|t| t == tool)
                    }),
                }),
            _ => None,
        }
    }

    /// The activity line this report gives an unmeasured session: a tool
    /// call that names its tool says `calling <name>`; a nameless one, and
    /// every other kind, says nothing.
    pub fn activity_line(&self) -> Option<ActivityLine> {
        match self.kind {
            HarnessEventKind::ToolCall => tool_activity(self.tool.as_deref()),
            _ => None,
        }
    }

    /// Whether the progress bubble's turn begins or ends here.
    pub fn progress_edge(&self) -> Option<bool> {
        match self.kind {
            HarnessEventKind::TurnStart => Some(true),
            HarnessEventKind::TurnEnd | HarnessEventKind::Cancel | HarnessEventKind::Error => {
                Some(false)
            }
            _ => None,
        }
    }
}

/// How the harness names our MCP tools to its model, so the texts can say
/// how to reach them (both harnesses may defer them behind a tool search).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolNaming {
    /// Unknown client: the tools by their own names.
    #[default]
    Bare,
    /// `mcp__debug-sidecar__<tool>`, found with ToolSearch.
    ClaudeCode,
    /// The `mcp__debug_sidecar` namespace, found with `tool_search`.
    Codex,
    /// `mcp_debug-sidecar_<tool>` (Gemini CLI 0.61).
    Gemini,
    /// `debug-sidecar-<tool>` (Copilot CLI 1.0).
    Copilot,
    /// `debug-sidecar_<tool>` (OpenCode 1.18).
    OpenCode,
}

impl ToolNaming {
    /// From an MCP client's `clientInfo.name`.
    pub fn of_client(name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        if name.starts_with("claude") {
            ToolNaming::ClaudeCode
        } else if name.starts_with("codex") {
            ToolNaming::Codex
        } else if name.starts_with("gemini") {
            ToolNaming::Gemini
        } else if name.contains("copilot") {
            ToolNaming::Copilot
        } else if name.starts_with("opencode") {
            ToolNaming::OpenCode
        } else {
            ToolNaming::Bare
        }
    }

    /// One line saying how this harness calls the tools the texts name.
    /// No angle brackets: Gemini CLI HTML-escapes hook context (`&lt;`).
    pub fn tools_line(self) -> Option<&'static str> {
        match self {
            ToolNaming::Bare => None,
            ToolNaming::ClaudeCode => Some(
                "Tools named here are debug-sidecar's MCP tools: call them as \
                 mcp__debug-sidecar__<name> (mcp__debug-sidecar__hand_off_to_user); one not \
                 loaded yet loads with ToolSearch \"select:mcp__debug-sidecar__<name>\".",
            ),
            ToolNaming::Codex => Some(
                "Tools named here are debug-sidecar's MCP tools, in the mcp__debug_sidecar \
                 namespace; if they are not loaded, find them with tool_search \"debug sidecar\".",
            ),
            ToolNaming::Gemini => Some(
                "Tools named here are debug-sidecar's MCP tools: call each with the prefix \
                 mcp_debug-sidecar_ (mcp_debug-sidecar_hand_off_to_user).",
            ),
            ToolNaming::Copilot => Some(
                "Tools named here are debug-sidecar's MCP tools: call each with the prefix \
                 debug-sidecar- (debug-sidecar-hand_off_to_user).",
            ),
            ToolNaming::OpenCode => Some(
                "Tools named here are debug-sidecar's MCP tools: call each with the prefix \
                 debug-sidecar_ (debug-sidecar_hand_off_to_user).",
            ),
        }
    }
}

/// One of the person's commands as every face offers it: MCP prompts,
/// ACP slash commands. The name is the slash command without its `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PersonCommandInfo {
    pub kind: PersonCommandKind,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The free text after the command: its name, what it is, and whether
    /// the command needs it.
    pub argument: Option<CommandArgument>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandArgument {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
}

/// The person's four commands, in the order menus list them.
pub const PERSON_COMMANDS: [PersonCommandInfo; 4] = [
    PersonCommandInfo {
        kind: PersonCommandKind::Start,
        name: "debug",
        title: "Debug Mode: start",
        description: "Start Debug Mode on a problem",
        argument: Some(CommandArgument {
            name: "problem",
            description: "What is wrong, as the user sees it",
            required: true,
        }),
    },
    PersonCommandInfo {
        kind: PersonCommandKind::Proceed,
        name: "debug-proceed",
        title: "Debug Mode: Proceed",
        description: "I reproduced it: read the evidence and go on",
        argument: Some(CommandArgument {
            name: "note",
            description: "What you saw (optional)",
            required: false,
        }),
    },
    PersonCommandInfo {
        kind: PersonCommandKind::Done,
        name: "debug-done",
        title: "Debug Mode: Mark fixed",
        description: "It is fixed: remove every probe",
        argument: Some(CommandArgument {
            name: "note",
            description: "A note for the agent (optional)",
            required: false,
        }),
    },
    PersonCommandInfo {
        kind: PersonCommandKind::Abort,
        name: "debug-abort",
        title: "Debug Mode: abort",
        description: "Stop Debug Mode now",
        argument: None,
    },
];

/// Whether an MCP prompt's argument is a harness's template placeholder
/// rather than the person's words: OpenCode (1.18) asks for a prompt with
/// `$1`, `$2`, ... as the arguments and puts the person's words in their
/// place in the text it gets back, so the prompt never sees them.
pub fn is_template_placeholder(words: &str) -> bool {
    let words = words.trim();
    words == "$ARGUMENTS"
        || words
            .strip_prefix('$')
            .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The MCP prompts of ours a harness may show as slash commands: as Claude
/// Code spells them (`/mcp__<server>__<prompt>`), and by their own names
/// (`/debug`, as Gemini CLI offers them, and as a person types them where
/// the harness does not expand MCP prompts, like Copilot CLI's `-p`).
const PROMPT_COMMANDS: &[(&str, PersonCommandKind)] = &[
    (
        "/mcp__debug-sidecar__debug-proceed",
        PersonCommandKind::Proceed,
    ),
    ("/mcp__debug-sidecar__debug-done", PersonCommandKind::Done),
    ("/mcp__debug-sidecar__debug-abort", PersonCommandKind::Abort),
    ("/mcp__debug-sidecar__debug", PersonCommandKind::Start),
    ("/debug-proceed", PersonCommandKind::Proceed),
    ("/debug-done", PersonCommandKind::Done),
    ("/debug-abort", PersonCommandKind::Abort),
    ("/debug", PersonCommandKind::Start),
    // Without the slash, where the host takes every `/` for a command of
    // its own (Codex's TUI: "Unrecognized command").
    ("debug-proceed", PersonCommandKind::Proceed),
    ("debug-done", PersonCommandKind::Done),
    ("debug-abort", PersonCommandKind::Abort),
];

/// A person's command typed as one of our slash commands, with the whole
/// rest of the prompt (Claude Code hands an MCP prompt its arguments split
/// at whitespace, so only the prompt itself has the problem as written).
pub fn person_command(prompt: &str) -> Option<(PersonCommandKind, String)> {
    let prompt = prompt.trim_start();
    PROMPT_COMMANDS.iter().find_map(|(command, kind)| {
        let rest = prompt.strip_prefix(command)?;
        // `/debug` must not claim `/debug-proceed` or `/debugger`.
        if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
            return None;
        }
        Some((*kind, rest.trim().to_string()))
    })
}

/// The words after `/debug` when `prompt` is that command by its bare
/// name (empty when none follow). Where a host has a `/debug` of its own,
/// that is the host's command, and with a problem after it the person
/// reaching for ours under the wrong name.
pub fn bare_debug(prompt: &str) -> Option<&str> {
    let rest = prompt.trim_start().strip_prefix("/debug")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

/// What a prompt typed in `host` is to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// One of our commands, with the whole rest of the prompt.
    Ours(PersonCommandKind, String),
    /// The host's own `/debug` (Claude Code's debug skill) with a problem
    /// after it: the person reaching for ours under the host's name.
    HostsDebugWithWords,
    /// Anything else, the host's own bare `/debug` included.
    Other,
}

/// A typed prompt, read for the host it was typed in.
pub fn typed(host: Host, prompt: &str) -> Typed {
    if host.owns_bare_debug() {
        if let Some(words) = bare_debug(prompt) {
            return if words.is_empty() {
                Typed::Other
            } else {
                Typed::HostsDebugWithWords
            };
        }
    }
    person_command(prompt).map_or(Typed::Other, |(kind, words)| Typed::Ours(kind, words))
}

/// Whether `prompt` is one of our commands spelled as an MCP prompt of
/// Claude Code's (`/mcp__debug-sidecar__…`), which it expands after its
/// prompt hook; the same command typed as words is not expanded.
pub fn is_mcp_prompt_spelling(prompt: &str) -> bool {
    prompt.trim_start().starts_with("/mcp__debug-sidecar__")
}

/// The files an edit tool call touched, from the tool's input as the
/// harness reports it: `file_path`/`path`/`notebook_path` (Claude Code's
/// Edit, Write, MultiEdit, NotebookEdit) or the `*** Update/Add/Delete
/// File:` lines of a Codex `apply_patch`. None when the input names none,
/// so the caller falls back to scanning the whole workspace.
pub fn edited_files(tool_input: &serde_json::Value) -> Option<Vec<String>> {
    let mut files: Vec<String> = ["file_path", "path", "notebook_path"]
        .iter()
        .filter_map(|key| tool_input.get(*key).and_then(serde_json::Value::as_str))
        .map(str::to_string)
        .collect();
    let patch = tool_input
        .get("patch")
        .or_else(|| tool_input.get("input"))
        .or_else(|| tool_input.get("command"))
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(parts) => Some(
                parts
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        });
    if let Some(patch) = patch {
        for line in patch.lines() {
            for prefix in [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ] {
                if let Some(file) = line.strip_prefix(prefix) {
                    files.push(file.trim().to_string());
                }
            }
        }
    }
    files.dedup();
    (!files.is_empty()).then_some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: HarnessEventKind) -> HarnessEvent {
        HarnessEvent {
            kind,
            tool: None,
            source: None,
            edits: None,
        }
    }

    #[test]
    fn a_start_without_source_is_a_continuation() {
        assert_eq!(
            event(HarnessEventKind::TurnStart).session_command(&[]),
            Some(Command::TurnStarted(TurnSource::Continuation))
        );
    }

    #[test]
    fn whether_a_call_edits_is_the_events_word_then_the_declared_then_the_known_names() {
        let call = |tool: &str, edits: Option<bool>| HarnessEvent {
            kind: HarnessEventKind::ToolCall,
            tool: Some(tool.into()),
            source: None,
            edits,
        };
        let edits = |event: HarnessEvent, declared: &[String]| match event.session_command(declared)
        {
            Some(Command::ToolCall { edits, .. }) => edits,
            other => panic!("not a tool call: {other:?}"),
        };
        let declared = vec!["my_patch".to_string()];
        assert!(edits(call("Edit", None), &[]));
        assert!(edits(call("ast_edit", None), &[]));
        assert!(!edits(call("my_patch", None), &[]));
        assert!(edits(call("my_patch", None), &declared));
        assert!(!edits(call("bash", None), &declared));
        assert!(edits(call("bash", Some(true)), &declared));
        assert!(!edits(call("Edit", Some(false)), &declared));
    }

    #[test]
    fn a_tool_call_without_a_name_is_only_a_turn_state_event() {
        let mut call = event(HarnessEventKind::ToolCall);
        assert_eq!(call.session_command(&[]), None);
        assert_eq!(call.turn_event(), Some(TurnEvent::ToolCall));
        assert_eq!(call.activity_line(), None);
        call.tool = Some("  ".into());
        assert_eq!(call.activity_line(), None);
        call.tool = Some("Edit".into());
        assert_eq!(
            call.session_command(&[]),
            Some(Command::ToolCall {
                tool: "Edit".into(),
                edits: true,
            })
        );
        assert_eq!(
            call.activity_line().map(|line| line.text),
            Some("calling Edit".to_string())
        );
    }

    #[test]
    fn edited_files_come_from_either_harness() {
        use serde_json::json;
        assert_eq!(
            edited_files(&json!({"file_path": "/w/a.py", "old_string": "x"})),
            Some(vec!["/w/a.py".to_string()])
        );
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.txt\n+hi\n*** End Patch";
        assert_eq!(
            edited_files(&json!({"command": ["apply_patch", patch]})),
            Some(vec!["src/a.rs".to_string(), "b.txt".to_string()])
        );
        assert_eq!(edited_files(&json!({"content": "x"})), None);
    }

    #[test]
    fn only_bare_debug_with_a_problem_is_the_person_reaching_for_ours() {
        assert_eq!(
            bare_debug("/debug the total is wrong"),
            Some("the total is wrong")
        );
        assert_eq!(bare_debug("  /debug\tx"), Some("x"));
        assert_eq!(bare_debug("/debug"), Some(""));
        assert_eq!(bare_debug("/debug   "), Some(""));
        assert_eq!(bare_debug("/debug-proceed it printed 9"), None);
        assert_eq!(bare_debug("/debugger x"), None);
        assert_eq!(bare_debug("/mcp__debug-sidecar__debug x"), None);
        let claude = Host::ClaudeCode;
        assert_eq!(
            typed(claude, "/debug the total"),
            Typed::HostsDebugWithWords
        );
        assert_eq!(typed(claude, "/debug"), Typed::Other);
        assert_eq!(
            typed(Host::Codex, "/debug the total"),
            Typed::Ours(PersonCommandKind::Start, "the total".into())
        );
    }

    #[test]
    fn slash_commands_keep_the_whole_problem() {
        assert_eq!(
            person_command("/mcp__debug-sidecar__debug the total is wrong\nsee: 3 4 5"),
            Some((
                PersonCommandKind::Start,
                "the total is wrong\nsee: 3 4 5".to_string()
            ))
        );
        assert_eq!(
            person_command(" /mcp__debug-sidecar__debug-proceed"),
            Some((PersonCommandKind::Proceed, String::new()))
        );
        assert_eq!(
            person_command("/mcp__debug-sidecar__debug-done it prints 12 now"),
            Some((PersonCommandKind::Done, "it prints 12 now".to_string()))
        );
        assert_eq!(person_command("/mcp__debug-sidecar__debugger x"), None);
        assert_eq!(
            person_command("/debug-proceed it printed 9"),
            Some((PersonCommandKind::Proceed, "it printed 9".into()))
        );
        assert_eq!(
            person_command("/debug the total is wrong"),
            Some((PersonCommandKind::Start, "the total is wrong".into()))
        );
        assert_eq!(person_command("/debugger x"), None);
        assert_eq!(person_command("please /mcp__debug-sidecar__debug x"), None);
        // Typed without the slash where the host takes every `/` (Codex).
        assert_eq!(
            person_command("debug-proceed it printed 9"),
            Some((PersonCommandKind::Proceed, "it printed 9".into()))
        );
        assert_eq!(
            person_command("debug-done"),
            Some((PersonCommandKind::Done, String::new()))
        );
        assert_eq!(person_command("debug the login"), None);
        assert_eq!(person_command("debug-proceeding x"), None);
        assert_eq!(ToolNaming::of_client("claude-code"), ToolNaming::ClaudeCode);
        assert_eq!(ToolNaming::of_client("codex-mcp-client"), ToolNaming::Codex);
    }

    #[test]
    fn a_finished_message_moves_no_turn_state() {
        let message = event(HarnessEventKind::Message);
        assert_eq!(message.turn_event(), None);
        assert_eq!(
            message.session_command(&[]),
            Some(Command::AssistantMessage)
        );
        assert_eq!(message.progress_edge(), None);
    }
}
