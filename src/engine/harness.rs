//! What the agent faces (hooks, MCP) need beyond the protocol's commands:
//! the blackboard offered once per harness conversation and again only when
//! it changed, the person's commands with an answer for their echo, and
//! Claude Code's task tools folded into progress.

use super::{Engine, EngineError, SessionIo};
use crate::core::harness_memory::{
    session_mark, snapshot_mark, Applied, HarnessMemory, PersonCommandKind,
};
use crate::core::machine::ProceedInput;
use crate::core::model::{DebugState, Stage};
use crate::core::text;
use serde_json::Value;

/// What a person's command did: a line for the person, and the text the
/// agent's next turn starts from (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonAnswer {
    /// The person's receipt, as a terminal or a harness's notice shows it.
    pub said: String,
    pub receipt: text::Receipt,
    pub kickoff: Option<String>,
    /// Whether this answered the echo of a command applied moments ago
    /// rather than applying it again.
    pub echoed: bool,
    /// The state's revision the command left (a wake it asked for is due at
    /// it, however far a quick agent took the state since).
    pub revision: Option<u64>,
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
        let (board, _) = self.context(session_id, None, now)?;
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

    /// The receipt of a form the person answered moments ago, once: for a
    /// face that shows the person a line after the hand-off tool returned.
    pub fn take_receipt(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        let mut taken = None;
        if self
            .store
            .load_activity(session_id)?
            .harness
            .receipt
            .is_some()
        {
            self.change_activity(session_id, now, &mut |activity| {
                taken = activity.harness.take_receipt(now);
            })?;
        }
        Ok(taken)
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
    /// face, applied once: the same command again within the echo window,
    /// while the session is where the first left it (or refused as illegal
    /// now), answers with the first one's text instead. Claude Code runs the
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
                let receipt = text::Receipt::Placeholder;
                return Ok(PersonAnswer {
                    said: text::receipt(&receipt, false, self.host()),
                    receipt,
                    kickoff: Some(text::start_template(placeholder.trim(), &env)),
                    echoed: false,
                    revision: None,
                });
            }
        }
        let given = words.clone();
        let mark = |engine: &mut Engine| -> Result<String, EngineError> {
            Ok(session_mark(&engine.load(session_id)?.state))
        };
        let before = mark(self)?;
        let echo = |engine: &mut Engine, mark: Option<&str>| -> Result<_, EngineError> {
            let activity = engine.store.load_activity(session_id)?;
            Ok(activity
                .harness
                .echo(kind, given.as_deref(), now, mark)
                .map(|said| {
                    let receipt = text::Receipt::Repeated { kind };
                    PersonAnswer {
                        said: text::receipt(&receipt, false, engine.host()),
                        receipt,
                        kickoff: Some(said.to_string()).filter(|t| !t.is_empty()),
                        echoed: true,
                        revision: None,
                    }
                }))
        };
        // The same command again while the session is where it left it:
        // the harness repeating the person's one command (a hook and a
        // prompt expansion of one typed line), applied once.
        if let Some(answer) = echo(self, Some(&before))? {
            return Ok(answer);
        }
        let applied = match kind {
            PersonCommandKind::Start => {
                let problem = words.ok_or_else(|| {
                    EngineError::Domain(crate::core::error::DomainError::invalid(
                        "problem",
                        "say what is wrong: the problem, in a few words",
                    ))
                })?;
                self.start(session_id, problem, now)
                    .map(|(snapshot, kickoff)| {
                        let receipt = text::Receipt::Started {
                            session: session_id.to_string(),
                        };
                        (
                            receipt,
                            kickoff,
                            snapshot_mark(&snapshot),
                            snapshot.revision,
                        )
                    })
            }
            PersonCommandKind::Proceed => {
                let input = ProceedInput {
                    note: words.clone(),
                    ..Default::default()
                };
                self.proceed(session_id, input, now)
                    .and_then(|(snapshot, kickoff)| {
                        let stored = self.load(session_id)?;
                        let session = stored.state.session();
                        let closed = session.and_then(|s| s.rounds.iter().rev().nth(1));
                        let run = closed.map(|r| r.run_id.clone()).unwrap_or_default();
                        let receipt = text::Receipt::Proceeded {
                            note: words,
                            lines: session.and_then(|s| s.run(&run)).map_or(0, |r| r.lines),
                            run,
                            round: snapshot.round.unwrap_or_default(),
                        };
                        Ok((
                            receipt,
                            kickoff,
                            snapshot_mark(&snapshot),
                            snapshot.revision,
                        ))
                    })
            }
            PersonCommandKind::Done => {
                self.done(session_id, words.clone(), false, now)
                    .map(|(snapshot, kickoff)| {
                        let receipt = text::Receipt::Fixed {
                            note: words,
                            probes: snapshot.probes.live,
                        };
                        (
                            receipt,
                            kickoff,
                            snapshot_mark(&snapshot),
                            snapshot.revision,
                        )
                    })
            }
            PersonCommandKind::Abort => self.abort(session_id, now).map(|(snapshot, leftover)| {
                let receipt = text::Receipt::Aborted {
                    leftover: leftover.len(),
                };
                let notice = Some(text::abort_notice(&leftover));
                (receipt, notice, snapshot_mark(&snapshot), snapshot.revision)
            }),
        };
        match applied {
            Ok((receipt, kickoff, left, revision)) => {
                let said = text::receipt(&receipt, false, self.host());
                let remembered = kickoff.clone().unwrap_or_default();
                self.change_activity(session_id, now, &mut |activity| {
                    let applied = Applied {
                        words: given.as_deref(),
                        at: now,
                        text: &remembered,
                        left: &left,
                    };
                    activity.harness.remember_command(kind, applied)
                })?;
                Ok(PersonAnswer {
                    said,
                    receipt,
                    kickoff,
                    echoed: false,
                    revision: Some(revision),
                })
            }
            // Refused, and the same command came moments ago: its echo,
            // wherever the session went since.
            Err(EngineError::Domain(error)) => match echo(self, None)? {
                Some(answer) => Ok(answer),
                None => Err(EngineError::Domain(error)),
            },
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
    /// The hand-off form for the round the person holds now, with its
    /// round index; None unless the stage is `user_turn`.
    pub fn hand_off_form(
        &mut self,
        session_id: &str,
    ) -> Result<Option<(u32, text::HandOffForm)>, EngineError> {
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
                // Proceed or Mark fixed came from elsewhere while the form was
                // open: this turn goes on from its kickoff.
                if let Some(kickoff) = self.wake_for_form(session_id, now)? {
                    return Ok(kickoff);
                }
                return Ok(text::form_too_late(answer.choice(), &now_is));
            }
            None => return Ok(text::form_too_late(answer.choice(), "no session is active")),
        };
        let host = self.host();
        let person = |engine: &mut Engine, kind, note| {
            engine
                .person_command(session_id, kind, note, now)
                .map(|answer| {
                    let said = text::receipt(&answer.receipt, true, host);
                    (said, answer.kickoff.unwrap_or(answer.said))
                })
        };
        let (said, model) = match answer {
            FormAnswer::Proceed(note) => person(self, PersonCommandKind::Proceed, note)?,
            FormAnswer::Fixed(note) => person(self, PersonCommandKind::Done, note)?,
            FormAnswer::Reply(reply) => {
                let receipt = text::Receipt::Replied {
                    note: reply.clone(),
                    round: current,
                };
                let said = text::receipt(&receipt, true, host);
                (said, text::form_reply(current, reply.as_deref()))
            }
            FormAnswer::Dismissed(how) => {
                let said = text::receipt(&text::Receipt::Closed { round: current }, true, host);
                (said, text::form_dismissed(current, how, host))
            }
        };
        self.change_activity(session_id, now, &mut |activity| {
            activity.harness.leave_receipt(&said, now)
        })?;
        Ok(model)
    }
}
