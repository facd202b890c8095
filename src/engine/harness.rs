//! What the agent faces (hooks, MCP) need beyond the protocol's commands:
//! the blackboard offered once per harness conversation and again only when
//! it changed, the person's commands with an answer for their echo, and
//! Claude Code's task tools folded into progress.

use super::{Engine, EngineError, SessionIo};
use crate::core::harness_memory::{HarnessMemory, PersonCommandKind};
use crate::core::machine::ProceedInput;
use crate::core::model::{DebugState, Stage};
use crate::core::text;
use serde_json::Value;

/// What a person's command did: a line for the person, and the text the
/// agent's next turn starts from (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonAnswer {
    pub said: String,
    pub kickoff: Option<String>,
    /// Whether this answered the echo of a command applied moments ago
    /// rather than applying it again.
    pub echoed: bool,
}

impl Engine {
    /// The state as the model should read it now: the current run's line
    /// count taken from its file (the stored count is the one the last
    /// command saw). Unchanged when the file cannot be counted.
    pub(super) fn with_current_lines(&self, session_id: &str, state: &DebugState) -> DebugState {
        SessionIo::new(
            &self.config,
            &self.counter,
            self.runs_dir(session_id),
            session_id,
        )
        .count_current_run(state, 0)
        .unwrap_or_else(|_| state.clone())
    }

    /// The blackboard for one harness conversation, when it has not been
    /// given this very text already; None when no session is active or it
    /// has. A harness cannot take back what it injected, so the one copy a
    /// conversation holds of each board is all it gets.
    pub fn board_for(
        &mut self,
        session_id: &str,
        conversation: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        self.offer_board(session_id, now, &mut |memory, board| {
            memory.offer(conversation, board).then(|| board.to_string())
        })
    }

    /// Within a turn (after a tool call): the sections of the board that
    /// changed since the conversation's last copy, or None.
    pub fn board_update_for(
        &mut self,
        session_id: &str,
        conversation: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        self.offer_board(session_id, now, &mut |memory, board| {
            memory.update(conversation, board)
        })
    }

    /// The current board through `pick`, which decides (and remembers in
    /// the activity) what of it a conversation is given.
    fn offer_board(
        &mut self,
        session_id: &str,
        now: u64,
        pick: &mut dyn FnMut(&mut HarnessMemory, &str) -> Option<String>,
    ) -> Result<Option<String>, EngineError> {
        let (board, _) = self.context(session_id, None)?;
        let Some(board) = board else {
            return Ok(None);
        };
        let mut given = None;
        self.change_activity(session_id, now, &mut |activity| {
            given = pick(&mut activity.harness, &board);
        })?;
        Ok(given)
    }

    /// A nudge went back to `conversation`, remembered so its echo as a
    /// prompt is known for what it is.
    pub fn nudge_sent(
        &mut self,
        session_id: &str,
        conversation: &str,
        text: &str,
        now: u64,
    ) -> Result<(), EngineError> {
        self.change_activity(session_id, now, &mut |activity| {
            activity.harness.nudged(conversation, text, now)
        })
    }

    /// Whether `prompt` is the nudge just sent to `conversation`, back as
    /// a prompt (the agent continuing, not the person speaking).
    pub fn is_nudge_echo(
        &mut self,
        session_id: &str,
        conversation: &str,
        prompt: &str,
        now: u64,
    ) -> Result<bool, EngineError> {
        let activity = self.store.load_activity(session_id)?;
        Ok(activity.harness.is_nudge_echo(conversation, prompt, now))
    }

    /// The conversation lost what it was given (compacted or cleared).
    pub fn conversation_reset(
        &mut self,
        session_id: &str,
        conversation: &str,
        now: u64,
    ) -> Result<(), EngineError> {
        self.change_activity(session_id, now, &mut |activity| {
            activity.harness.forget(conversation)
        })
    }

    /// A person's command (start, Proceed, Mark fixed, abort), from any
    /// face. Refused as illegal right after the same command was applied,
    /// it answers with that command's text instead: Claude Code runs the
    /// UserPromptSubmit hook (which applies a typed slash command with the
    /// whole prompt) before it expands the MCP prompt of the same command.
    pub fn person_command(
        &mut self,
        session_id: &str,
        kind: PersonCommandKind,
        words: Option<String>,
        now: u64,
    ) -> Result<PersonAnswer, EngineError> {
        let words = words.filter(|w| !w.trim().is_empty());
        if let (PersonCommandKind::Start, Some(placeholder)) = (kind, words.as_deref()) {
            if crate::core::harness::is_template_placeholder(placeholder) {
                // The harness puts the person's words there after this answer:
                // nothing is started from a placeholder.
                let env = self.env(session_id, false);
                return Ok(PersonAnswer {
                    said: "Not started: the problem is still a placeholder.".to_string(),
                    kickoff: Some(text::start_template(placeholder.trim(), &env)),
                    echoed: false,
                });
            }
        }
        let given = words.clone();
        let applied = match kind {
            PersonCommandKind::Start => {
                let problem = words.ok_or_else(|| {
                    EngineError::Domain(crate::core::error::DomainError::invalid(
                        "problem",
                        "say what is wrong: the problem, in a few words",
                    ))
                })?;
                self.start(session_id, problem, now)
                    .map(|(_, kickoff)| (format!("Debug session {session_id} started."), kickoff))
            }
            PersonCommandKind::Proceed => {
                let input = ProceedInput {
                    note: words,
                    ..Default::default()
                };
                self.proceed(session_id, input, now)
                    .map(|(snapshot, kickoff)| {
                        let round = snapshot.round.unwrap_or_default();
                        (
                            format!("Round {round} is the agent's: it reads the evidence."),
                            kickoff,
                        )
                    })
            }
            PersonCommandKind::Done => self.done(session_id, words, now).map(|(_, kickoff)| {
                (
                    "Marked fixed: the agent removes every probe.".to_string(),
                    kickoff,
                )
            }),
            PersonCommandKind::Abort => self.abort(session_id, now).map(|(_, leftover)| {
                (
                    "Debug session aborted.".to_string(),
                    Some(text::abort_notice(&leftover)),
                )
            }),
        };
        match applied {
            Ok((said, kickoff)) => {
                let remembered = kickoff.clone().unwrap_or_default();
                self.change_activity(session_id, now, &mut |activity| {
                    activity
                        .harness
                        .remember_command(kind, given.as_deref(), now, &remembered)
                })?;
                Ok(PersonAnswer {
                    said,
                    kickoff,
                    echoed: false,
                })
            }
            Err(EngineError::Domain(error)) => {
                let activity = self.store.load_activity(session_id)?;
                match activity.harness.echo(kind, given.as_deref(), now) {
                    Some(text) => Ok(PersonAnswer {
                        said: "Already applied.".to_string(),
                        kickoff: Some(text.to_string()).filter(|t| !t.is_empty()),
                        echoed: true,
                    }),
                    None => Err(EngineError::Domain(error)),
                }
            }
            Err(other) => Err(other),
        }
    }

    /// Claude Code's task tools (`TaskCreate`, `TaskUpdate`) as progress:
    /// the list they build is the todo list a `TodoWrite` would have sent.
    pub(super) fn task_tool(
        &mut self,
        session_id: &str,
        tool: &str,
        input: &Value,
        response: &Value,
        now: u64,
    ) -> Result<(), EngineError> {
        let mut todos = None;
        self.change_activity(session_id, now, &mut |activity| {
            if activity.harness.task_call(tool, input, response) {
                todos = Some(Value::Array(activity.harness.todos()));
            }
        })?;
        if let Some(todos) = todos {
            self.change_activity(session_id, now, &mut |activity| {
                activity.progress.todos(session_id, &todos, now);
            })?;
        }
        Ok(())
    }
}

/// The person's answer in the hand-off form (MCP elicitation), as the face
/// read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormAnswer {
    /// Proceed, with what they saw.
    Proceed(Option<String>),
    /// Mark fixed, with an optional note.
    Fixed(Option<String>),
    /// A reply to the agent instead of a reproduction.
    Reply(Option<String>),
    /// No answer: declined, closed, or none came.
    Dismissed(text::FormDismissal),
}

impl FormAnswer {
    fn choice(&self) -> &'static str {
        match self {
            FormAnswer::Proceed(_) => text::CHOICE_PROCEED,
            FormAnswer::Fixed(_) => text::CHOICE_FIXED,
            FormAnswer::Reply(_) => text::CHOICE_REPLY,
            FormAnswer::Dismissed(_) => "closed",
        }
    }
}

impl Engine {
    /// The hand-off form for the round the person holds now: its round
    /// index and message; None unless the stage is `user_turn`.
    pub fn hand_off_form(
        &mut self,
        session_id: &str,
    ) -> Result<Option<(u32, String)>, EngineError> {
        let stored = self.load(session_id)?;
        Ok(stored
            .state
            .session()
            .filter(|s| s.stage == Stage::UserTurn)
            .map(|s| (s.round().index, text::hand_off_form(s))))
    }

    /// Applies the person's answer to the form of `round`, as the person's
    /// command the editor buttons send (Proceed with the note, Mark
    /// fixed), and answers the text the hand-off tool returns to the model.
    /// An answer for a round the person no longer holds (a button or a
    /// terminal command came first) changes nothing.
    pub fn answer_hand_off(
        &mut self,
        session_id: &str,
        round: u32,
        answer: FormAnswer,
        now: u64,
    ) -> Result<String, EngineError> {
        let stored = self.load(session_id)?;
        let current = match stored.state.session() {
            Some(s) if s.stage == Stage::UserTurn && s.round().index == round => s.round().index,
            Some(s) => {
                let now_is = format!("stage {}, round {}", s.stage.as_str(), s.round().index);
                return Ok(text::form_too_late(answer.choice(), &now_is));
            }
            None => return Ok(text::form_too_late(answer.choice(), "no session is active")),
        };
        let person = |engine: &mut Engine, kind, note| {
            engine
                .person_command(session_id, kind, note, now)
                .map(|a| a.kickoff.unwrap_or(a.said))
        };
        match answer {
            FormAnswer::Proceed(note) => person(self, PersonCommandKind::Proceed, note),
            FormAnswer::Fixed(note) => person(self, PersonCommandKind::Done, note),
            FormAnswer::Reply(reply) => Ok(text::form_reply(current, reply.as_deref())),
            FormAnswer::Dismissed(how) => Ok(text::form_dismissed(current, how)),
        }
    }
}
