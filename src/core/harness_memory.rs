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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PersonCommandKind {
    Start,
    Proceed,
    Done,
    Abort,
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

    pub fn remember_command(
        &mut self,
        kind: PersonCommandKind,
        words: Option<&str>,
        at: u64,
        text: &str,
    ) {
        self.last_command = Some(AppliedCommand {
            kind,
            at,
            words: words.map(|w| crate::core::escape::inline_cut(w, 2048)),
            text: text.to_string(),
        });
    }

    /// The text a command of `kind` gave the model, if this is its echo:
    /// applied within the window before `now`, with the same words or a
    /// leading part of them (Claude Code hands the MCP prompt the first
    /// word of the problem). Another problem or note is a new command.
    pub fn echo(&self, kind: PersonCommandKind, words: Option<&str>, now: u64) -> Option<&str> {
        let command = self.last_command.as_ref()?;
        let recent = command.kind == kind && now.saturating_sub(command.at) <= ECHO_WINDOW_MS;
        let same = match (words.map(str::trim), command.words.as_deref()) {
            (None | Some(""), _) => true,
            (Some(given), Some(applied)) => applied.trim().starts_with(given),
            (Some(_), None) => false,
        };
        (recent && same).then_some(command.text.as_str())
    }
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

    #[test]
    fn a_command_answers_its_echo_for_a_while() {
        let mut memory = HarnessMemory::default();
        memory.remember_command(PersonCommandKind::Proceed, None, 1_000, "Round 2 is yours");
        assert_eq!(
            memory.echo(PersonCommandKind::Proceed, None, 5_000),
            Some("Round 2 is yours")
        );
        assert_eq!(memory.echo(PersonCommandKind::Done, None, 5_000), None);
        assert_eq!(
            memory.echo(PersonCommandKind::Proceed, None, 1_000 + ECHO_WINDOW_MS + 1),
            None
        );
        memory.remember_command(
            PersonCommandKind::Start,
            Some("the total is wrong"),
            1_000,
            "Debug Mode is on",
        );
        assert_eq!(
            memory.echo(PersonCommandKind::Start, Some("the"), 2_000),
            Some("Debug Mode is on")
        );
        assert_eq!(
            memory.echo(PersonCommandKind::Start, Some("another problem"), 2_000),
            None
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
