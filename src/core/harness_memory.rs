//! What the hook face remembers between its one-shot processes (each hook
//! is a new process): which blackboard each harness conversation was last
//! given, Claude Code's task list as its task tools built it, and the
//! person's last command, whose echo a harness may send right after.
//! Pure: the engine keeps it in the session's activity.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Harness conversations remembered per session; the oldest goes first.
pub const MAX_CONVERSATIONS: usize = 16;
/// Tasks kept from a harness's task tools.
pub const MAX_TASKS: usize = 64;
/// How long a person's command answers its own echo (Claude Code expands
/// an MCP prompt after its UserPromptSubmit hook already applied it).
pub const ECHO_WINDOW_MS: u64 = 120_000;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HarnessMemory {
    pub injected: Vec<Injected>,
    pub tasks: Vec<HarnessTask>,
    pub last_command: Option<AppliedCommand>,
    /// The last nudge sent back to a conversation: Gemini CLI hands it to
    /// the model as a new prompt, and fires its prompt hook for it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_nudge: Option<SentNudge>,
    /// The person's receipt for a form they answered, until the face that
    /// can show it to them takes it (Claude Code's hook after the tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<PendingReceipt>,
}

/// A receipt waiting for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingReceipt {
    pub text: String,
    pub at: u64,
}

/// A nudge as it was sent, by digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SentNudge {
    pub conversation: String,
    pub digest: u64,
    pub at: u64,
}

/// What one harness conversation holds of the blackboard: the digest of
/// each section as it last received it (its board, then its updates).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Injected {
    pub conversation: String,
    pub sections: Vec<(String, u64)>,
}

/// The board's sections (blocks between blank lines), each keyed by its
/// heading: the first line up to a colon, or `header` for the first block.
fn sections(board: &str) -> Vec<(String, &str)> {
    board
        .split("\n\n")
        .enumerate()
        .map(|(i, block)| {
            let first = block.lines().next().unwrap_or_default();
            let key = if i == 0 {
                "header".to_string()
            } else {
                first.split(':').next().unwrap_or(first).trim().to_string()
            };
            (key, block)
        })
        .collect()
}

fn digests(board: &str) -> Vec<(String, u64)> {
    sections(board)
        .into_iter()
        .map(|(key, block)| (key, digest(block)))
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarnessTask {
    pub id: String,
    pub subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// pending, in_progress or completed (deleted tasks are dropped).
    pub status: String,
}

/// A person's command as it was applied, and the text it gave the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedCommand {
    pub kind: PersonCommandKind,
    pub at: u64,
    /// The problem or note it came with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<String>,
    pub text: String,
    /// Where it left the session (`SessionMark`): a repeat is its echo only
    /// while the session is still there. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PersonCommandKind {
    Start,
    Proceed,
    Done,
    Abort,
}

impl PersonCommandKind {
    /// The kind as the protocol names it (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            PersonCommandKind::Start => "start",
            PersonCommandKind::Proceed => "proceed",
            PersonCommandKind::Done => "done",
            PersonCommandKind::Abort => "abort",
        }
    }
}

/// FNV-1a: stable across processes and builds (std's hasher is not).
pub fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl HarnessMemory {
    /// Whether `conversation` should be given `board` whole now: true (and
    /// remembered) unless every section is what it already holds.
    pub fn offer(&mut self, conversation: &str, board: &str) -> bool {
        let now = digests(board);
        if self.holding(conversation) == Some(&now) {
            return false;
        }
        self.remember(conversation, now);
        true
    }

    /// Within a turn: only what changed since the conversation's last copy,
    /// under the board's header line, so a refresh costs what changed and
    /// never repeats the whole board. None when nothing changed; the whole
    /// board when the conversation holds none.
    pub fn update(&mut self, conversation: &str, board: &str) -> Option<String> {
        let now = digests(board);
        let Some(held) = self.holding(conversation).cloned() else {
            self.remember(conversation, now);
            return Some(board.to_string());
        };
        if held == now {
            return None;
        }
        let blocks = sections(board);
        let header = board.lines().next().unwrap_or_default();
        let mut text = format!(
            "{header}\nBoard update: these sections replace the ones you were given earlier."
        );
        for ((key, block), (_, digest)) in blocks.iter().zip(&now).skip(1) {
            if !held.contains(&(key.clone(), *digest)) {
                text.push_str("\n\n");
                text.push_str(block);
            }
        }
        self.remember(conversation, now);
        // Everything changed: the board itself is shorter (and in budget).
        Some(if text.len() >= board.len() {
            board.to_string()
        } else {
            text
        })
    }

    fn holding(&self, conversation: &str) -> Option<&Vec<(String, u64)>> {
        self.injected
            .iter()
            .find(|i| i.conversation == conversation)
            .map(|i| &i.sections)
    }

    fn remember(&mut self, conversation: &str, sections: Vec<(String, u64)>) {
        self.injected.retain(|i| i.conversation != conversation);
        self.injected.push(Injected {
            conversation: conversation.to_string(),
            sections,
        });
        if self.injected.len() > MAX_CONVERSATIONS {
            self.injected.remove(0);
        }
    }

    /// A nudge was sent back to `conversation`.
    pub fn nudged(&mut self, conversation: &str, text: &str, at: u64) {
        self.last_nudge = Some(SentNudge {
            conversation: conversation.to_string(),
            digest: digest(text.trim()),
            at,
        });
    }

    /// Whether `prompt` is the nudge this conversation was just sent,
    /// coming back as a prompt (within the echo window): the agent's own
    /// continuation, not the person speaking.
    pub fn is_nudge_echo(&self, conversation: &str, prompt: &str, now: u64) -> bool {
        self.last_nudge.as_ref().is_some_and(|sent| {
            sent.conversation == conversation
                && sent.digest == digest(prompt.trim())
                && now.saturating_sub(sent.at) <= ECHO_WINDOW_MS
        })
    }

    /// The conversation lost what it was given (compacted, cleared).
    pub fn forget(&mut self, conversation: &str) {
        self.injected.retain(|i| i.conversation != conversation);
    }

    /// Fold one call of Claude Code's task tools into the list; whether it
    /// changed. `response` is the tool's result as the hook reports it.
    pub fn task_call(&mut self, tool: &str, input: &Value, response: &Value) -> bool {
        let text = |value: &Value, key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(|s| crate::core::escape::inline_cut(s, 200))
        };
        match tool {
            "TaskCreate" => {
                let Some(subject) = text(input, "subject") else {
                    return false;
                };
                let id = task_id(response).unwrap_or_else(|| (self.tasks.len() + 1).to_string());
                self.tasks.retain(|t| t.id != id);
                self.tasks.push(HarnessTask {
                    id,
                    subject,
                    active_form: text(input, "activeForm"),
                    status: "pending".into(),
                });
                if self.tasks.len() > MAX_TASKS {
                    self.tasks.remove(0);
                }
                true
            }
            "TaskUpdate" => {
                let Some(id) = input.get("taskId").and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                }) else {
                    return false;
                };
                let Some(at) = self.tasks.iter().position(|t| t.id == id) else {
                    return false;
                };
                let before = self.tasks[at].clone();
                match input.get("status").and_then(Value::as_str) {
                    Some("deleted") => {
                        self.tasks.remove(at);
                        return true;
                    }
                    Some(status @ ("pending" | "in_progress" | "completed")) => {
                        self.tasks[at].status = status.to_string();
                    }
                    _ => {}
                }
                if let Some(subject) = text(input, "subject") {
                    self.tasks[at].subject = subject;
                }
                if let Some(active) = text(input, "activeForm") {
                    self.tasks[at].active_form = Some(active);
                }
                self.tasks[at] != before
            }
            _ => false,
        }
    }

    /// The task list in the shape of a `TodoWrite` call, for progress.
    pub fn todos(&self) -> Vec<Value> {
        self.tasks
            .iter()
            .map(|t| {
                let mut todo = json!({ "content": t.subject, "status": t.status });
                if let Some(active) = &t.active_form {
                    todo["activeForm"] = json!(active);
                }
                todo
            })
            .collect()
    }

    pub fn leave_receipt(&mut self, text: &str, at: u64) {
        self.receipt = Some(PendingReceipt {
            text: text.to_string(),
            at,
        });
    }

    /// The receipt left within the echo window, once.
    pub fn take_receipt(&mut self, now: u64) -> Option<String> {
        self.receipt
            .take()
            .filter(|r| now.saturating_sub(r.at) <= ECHO_WINDOW_MS)
            .map(|r| r.text)
    }

    pub fn remember_command(&mut self, kind: PersonCommandKind, applied: Applied<'_>) {
        self.last_command = Some(AppliedCommand {
            kind,
            at: applied.at,
            words: applied
                .words
                .map(|w| crate::core::escape::inline_cut(w, 2048)),
            text: applied.text.to_string(),
            left: Some(applied.left.to_string()),
        });
    }

    /// The text a command of `kind` gave the model, if this is its echo:
    /// the same command, applied within the window before `now`, with the
    /// same words, a leading part of them (Claude Code hands the MCP prompt
    /// the first word of the problem) or none, while the session is still
    /// where that command left it (`mark`; None: wherever it is). A person's one command reaches
    /// several faces (Claude Code's prompt hook applies a typed command,
    /// then its MCP prompt asks for it again), and applying it twice would
    /// close a round nobody reproduced; a second command after the session
    /// moved on (the agent handed the next round over) is a new command.
    pub fn echo(
        &self,
        kind: PersonCommandKind,
        words: Option<&str>,
        now: u64,
        mark: Option<&str>,
    ) -> Option<&str> {
        let command = self.last_command.as_ref()?;
        let recent = command.kind == kind && now.saturating_sub(command.at) <= ECHO_WINDOW_MS;
        let same = match (words.map(str::trim), command.words.as_deref()) {
            (None | Some(""), _) => true,
            (Some(given), Some(applied)) => applied.trim().starts_with(given),
            (Some(_), None) => false,
        };
        let unmoved = match (command.left.as_deref(), mark) {
            (Some(left), Some(mark)) => left == mark,
            _ => true,
        };
        (recent && same && unmoved).then_some(command.text.as_str())
    }
}

/// Where the session stands, as far as a person's command moves it: its
/// round and stage, or `inactive`.
pub fn session_mark(state: &crate::core::model::DebugState) -> String {
    match state.session() {
        Some(session) => format!("{}:{}", session.round().index, session.stage.as_str()),
        None => "inactive".to_string(),
    }
}

/// The same mark, from the snapshot a command answered with (the state it
/// wrote, not one another process wrote since).
pub fn snapshot_mark(snapshot: &crate::core::snapshot::Snapshot) -> String {
    match (snapshot.active, snapshot.round, snapshot.stage) {
        (true, Some(round), Some(stage)) => format!("{round}:{}", stage.as_str()),
        _ => "inactive".to_string(),
    }
}

/// A person's command as applied: what the memory keeps of it.
#[derive(Debug, Clone, Copy)]
pub struct Applied<'a> {
    pub words: Option<&'a str>,
    pub at: u64,
    /// The text it gave the model.
    pub text: &'a str,
    /// Where it left the session (`SessionMark`).
    pub left: &'a str,
}

/// The id Claude Code gave a new task: `{"task": {"id": "1"}}` in the
/// tool's response, or "Task #1 created" in its text.
fn task_id(response: &Value) -> Option<String> {
    let id = response
        .get("task")
        .and_then(|t| t.get("id"))
        .or_else(|| response.get("id"))
        .or_else(|| response.get("taskId"));
    match id {
        Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
        Some(Value::Number(n)) => return Some(n.to_string()),
        _ => {}
    }
    let text = match response {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let rest = &text[text.find("Task #")? + "Task #".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_gets_each_board_once() {
        let mut memory = HarnessMemory::default();
        assert!(memory.offer("c1", "board A"));
        assert!(!memory.offer("c1", "board A"));
        assert!(memory.offer("c2", "board A"));
        assert!(memory.offer("c1", "board B"));
        assert!(memory.offer("c1", "board A"));
        memory.forget("c1");
        assert!(memory.offer("c1", "board A"));
        let problem = format!("Problem:\n  {}", "the total is wrong ".repeat(10));
        let board = format!("[DEBUG MODE · round 1]\n\n{problem}\n\nHypotheses:\n  none");
        let after = format!("[DEBUG MODE · round 1]\n\n{problem}\n\nHypotheses:\n  H1 [open] x");
        let (board, after) = (board.as_str(), after.as_str());
        assert!(memory.offer("c3", board));
        assert_eq!(memory.update("c3", board), None);
        assert_eq!(
            memory.update("c3", after).as_deref(),
            Some(
                "[DEBUG MODE · round 1]\nBoard update: these sections replace the ones you \
                 were given earlier.\n\nHypotheses:\n  H1 [open] x"
            )
        );
        assert!(!memory.offer("c3", after));
        assert_eq!(memory.update("c4", after).as_deref(), Some(after));
        for n in 0..40 {
            memory.offer(&format!("x{n}"), "b");
        }
        assert_eq!(memory.injected.len(), MAX_CONVERSATIONS);
    }

    #[test]
    fn task_tools_become_todos() {
        let mut memory = HarnessMemory::default();
        let created = json!({"task": {"id": "1", "subject": "Find it"}});
        assert!(memory.task_call(
            "TaskCreate",
            &json!({"subject": "Find it", "description": "d", "activeForm": "Finding it"}),
            &created
        ));
        assert!(memory.task_call(
            "TaskCreate",
            &json!({"subject": "Fix it", "description": "d"}),
            &json!("Task #2 created successfully: Fix it")
        ));
        assert!(memory.task_call(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "completed"}),
            &Value::Null
        ));
        assert!(!memory.task_call(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "completed"}),
            &Value::Null
        ));
        assert!(!memory.task_call("TaskUpdate", &json!({"taskId": "9"}), &Value::Null));
        assert_eq!(
            memory.todos(),
            vec![
                json!({"content": "Find it", "status": "completed", "activeForm": "Finding it"}),
                json!({"content": "Fix it", "status": "pending"}),
            ]
        );
        assert!(memory.task_call(
            "TaskUpdate",
            &json!({"taskId": "2", "status": "deleted"}),
            &Value::Null
        ));
        assert_eq!(memory.tasks.len(), 1);
    }

    fn applied<'a>(words: Option<&'a str>, at: u64, text: &'a str, left: &'a str) -> Applied<'a> {
        Applied {
            words,
            at,
            text,
            left,
        }
    }

    #[test]
    fn a_command_answers_its_echo_for_a_while() {
        let mut memory = HarnessMemory::default();
        let proceed = PersonCommandKind::Proceed;
        memory.remember_command(proceed, applied(None, 1_000, "Round 2 is yours", "2:i"));
        assert_eq!(
            memory.echo(proceed, None, 5_000, Some("2:i")),
            Some("Round 2 is yours")
        );
        assert_eq!(
            memory.echo(PersonCommandKind::Done, None, 5_000, Some("2:i")),
            None
        );
        assert_eq!(
            memory.echo(proceed, None, 1_000 + ECHO_WINDOW_MS + 1, Some("2:i")),
            None
        );
        memory.remember_command(
            PersonCommandKind::Start,
            applied(Some("the total is wrong"), 1_000, "Debug Mode is on", "1:i"),
        );
        assert_eq!(
            memory.echo(PersonCommandKind::Start, Some("the"), 2_000, Some("1:i")),
            Some("Debug Mode is on")
        );
        assert_eq!(
            memory.echo(
                PersonCommandKind::Start,
                Some("another problem"),
                2_000,
                Some("1:i")
            ),
            None
        );
    }

    #[test]
    fn a_repeat_after_the_session_moved_on_is_a_new_command() {
        let mut memory = HarnessMemory::default();
        let proceed = PersonCommandKind::Proceed;
        memory.remember_command(
            proceed,
            applied(Some("it printed 9"), 1_000, "Round 2", "2:i"),
        );
        // The agent handed round 2 over: the person's next Proceed is theirs.
        assert_eq!(memory.echo(proceed, None, 2_000, Some("2:u")), None);
        assert_eq!(
            memory.echo(proceed, Some("it"), 2_000, Some("2:i")),
            Some("Round 2")
        );
    }

    #[test]
    fn a_command_remembered_by_an_older_version_echoes_by_time_alone() {
        let old: HarnessMemory = serde_json::from_value(json!({"lastCommand": {
            "kind": "proceed", "at": 1000, "text": "Round 2"}}))
        .unwrap();
        assert_eq!(
            old.echo(PersonCommandKind::Proceed, None, 2_000, Some("anything")),
            Some("Round 2")
        );
    }

    proptest::proptest! {
        /// Whatever the boards, an update is never longer than the board it
        /// stands for, and after it the conversation holds that board.
        #[test]
        fn an_update_costs_at_most_the_board(
            first in proptest::collection::vec("[a-z \n]{0,40}", 1..8),
            second in proptest::collection::vec("[a-z \n]{0,40}", 1..8),
        ) {
            let mut memory = HarnessMemory::default();
            let one = first.join("\n\n");
            let two = second.join("\n\n");
            memory.offer("c", &one);
            if let Some(update) = memory.update("c", &two) {
                proptest::prop_assert!(update.len() <= two.len());
            }
            proptest::prop_assert!(!memory.offer("c", &two));
            proptest::prop_assert_eq!(memory.update("c", &two), None);
        }
    }
}
