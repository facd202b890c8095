//! The person's and the agent's session commands: start, hand-off, Proceed,
//! Mark fixed, abort, observations, the stop decision and the blackboard.

use super::*;
use crate::core::harness_memory::PersonCommandKind;
use crate::core::model::Stage;

impl Engine {
    /// Every session the store knows, most recently active first.
    pub fn sessions(&mut self) -> Result<Vec<SessionSummary>, EngineError> {
        let sessions = self.store.sessions()?;
        Ok(sessions
            .into_iter()
            .map(|(id, stored)| {
                // A listing is a read: each session's URL only if it has one.
                let mut env = self.env(&id, false);
                if stored.state.session().is_some() {
                    env.ingest_url = self.existing_ingest_url(&id);
                }
                SessionSummary {
                    snapshot: self.snapshot_with(&id, &stored, &env),
                    updated_at: stored.updated_at,
                }
            })
            .collect())
    }

    /// The session now, its probes as a fresh (decision) rescan sees them.
    pub fn status(&mut self, session_id: &str, now: u64) -> Result<Snapshot, EngineError> {
        let (stored, _) = self.fresh_view(session_id, false, now)?;
        Ok(self.snapshot_of(session_id, &stored))
    }

    /// The session with its ledger reconciled against a fresh scan (`full`:
    /// the whole walk), and what the scan found beside it. A read: what the
    /// scan found is shown, not written.
    pub(super) fn fresh_view(
        &mut self,
        session_id: &str,
        full: bool,
        now: u64,
    ) -> Result<(Stored, ScanExtras), EngineError> {
        let mut stored = self.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok((stored, self.scan_extras(session_id)));
        };
        let target = self.scan_target(session_id, session.files_to_rescan());
        let outcome = scan::rescan_session(&self.config.state_dir, &target, session_id, full);
        if let Ok(seen) = machine::apply(&stored.state, Command::ProbeScan(outcome.report), now) {
            stored.state = seen.state;
        }
        let extras = ScanExtras {
            half_removed: outcome.half_removed,
            foreign: outcome.foreign,
            files_read: outcome.files_read,
        };
        self.extras.insert(session_id.to_string(), extras.clone());
        Ok((stored, extras))
    }

    /// Starts a session; returns it with the kickoff message for the model.
    pub fn start(
        &mut self,
        session_id: &str,
        problem: String,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let applied = self.apply(
            session_id,
            Command::Start { problem },
            now,
            ScanTiming::Inline,
        )?;
        Ok(self.with_kickoff(session_id, applied))
    }

    /// The hand-off tool call: the new state and the text the tool returns.
    pub fn hand_off(
        &mut self,
        session_id: &str,
        hand_off: HandOff,
        now: u64,
    ) -> Result<(Snapshot, String), EngineError> {
        let applied = self.apply(
            session_id,
            Command::HandOff(hand_off),
            now,
            ScanTiming::Inline,
        )?;
        let result = applied.effects.iter().find_map(|effect| match effect {
            Effect::HandOff(result) => Some(result.clone()),
            _ => None,
        });
        let tool_result = match (applied.after.state.session(), result) {
            (Some(session), Some(result)) => text::hand_off_result(session, &result, self.host()),
            _ => String::new(),
        };
        Ok((self.snapshot_of(session_id, &applied.after), tool_result))
    }

    /// Proceed: the person's notes, observations and artifacts (admitted
    /// and copied as `attach` does) close the round, and the next begins.
    pub fn proceed(
        &mut self,
        session_id: &str,
        mut input: ProceedInput,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let mut copies = Vec::new();
        if !input.artifacts.is_empty() {
            // Refused before anything is copied when the stage forbids it.
            let state = self.store.load(session_id)?.state;
            machine::check_legal(&state, CommandName::Proceed)?;
            let given = std::mem::take(&mut input.artifacts);
            input.artifacts =
                self.take_artifacts(session_id, given, |i| format!("artifacts[{i}].path"))?;
            copies = input
                .artifacts
                .iter()
                .map(|a| PathBuf::from(&a.path))
                .collect();
        }
        let applied = self
            .apply(session_id, Command::Proceed(input), now, ScanTiming::Inline)
            .inspect_err(|_| artifacts::forget_copies(&copies))?;
        self.ask_wake(session_id, PersonCommandKind::Proceed, &applied, now)?;
        Ok(self.with_kickoff(session_id, applied))
    }

    /// Mark fixed. For a bug whose reproduction failed only some of the
    /// time it needs attempts since that are significantly better, or the
    /// person's word that it is fixed anyway (`anyway`, or a note starting
    /// with "fixed anyway"); the cleanup kickoff tells the agent which.
    pub fn done(
        &mut self,
        session_id: &str,
        note: Option<String>,
        anyway: bool,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let said = note.as_deref().is_some_and(text::says_fixed_anyway);
        // The person's word is kept in the session's record (the round's
        // notes, the fix certificate), however it was given.
        let note = match (anyway && !said, note) {
            (true, Some(note)) => Some(format!("{}: {note}", text::FIXED_ANYWAY)),
            (true, None) => Some(text::FIXED_ANYWAY.to_string()),
            (false, note) => note,
        };
        let anyway = anyway || said;
        let evidence = self.fix_evidence(session_id)?;
        if let (
            crate::core::rates::FixEvidence::Insufficient {
                before,
                after,
                p,
                needed,
            },
            false,
        ) = (&evidence, anyway)
        {
            return Err(EngineError::Domain(DomainError::Refused {
                command: CommandName::Done,
                reason: text::fix_refused(*before, *after, *p, *needed, self.host()),
            }));
        }
        let applied = self.apply(session_id, Command::Done { note }, now, ScanTiming::Inline)?;
        self.ask_wake(session_id, PersonCommandKind::Done, &applied, now)?;
        let backing = text::fix_backing(&evidence, anyway);
        Ok(self.with_kickoff_backed(session_id, applied, backing))
    }

    pub fn record_hypotheses(
        &mut self,
        session_id: &str,
        hypotheses: Vec<Hypothesis>,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        let command = Command::RecordHypotheses(hypotheses);
        let applied = self.apply(session_id, command, now, ScanTiming::Inline)?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    /// Ends the session; returns the probes still on disk.
    pub fn abort(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<(Snapshot, Vec<Probe>), EngineError> {
        // Every file a probe of the session was in: what removing its blocks
        // by hand later may leave (Go's imports) is still `check`'s to find.
        let files = self
            .load(session_id)?
            .state
            .session()
            .map(|s| s.files_to_rescan())
            .unwrap_or_default();
        let applied = self.apply(session_id, Command::Abort, now, ScanTiming::Inline)?;
        if !files.is_empty() {
            if let Err(error) = crate::workspace::ended::keep_aborted_files(
                &self.config.state_dir,
                session_id,
                &files,
            ) {
                tracing::warn!("could not keep the aborted session {session_id}'s files: {error}");
            }
        }
        let leftover = applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Aborted { leftover } => Some(leftover),
                _ => None,
            })
            .unwrap_or_default();
        Ok((self.snapshot_of(session_id, &applied.after), leftover))
    }

    pub fn observe(
        &mut self,
        session_id: &str,
        input: ObservationInput,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        let applied = self.apply(session_id, Command::Observe(input), now, ScanTiming::Inline)?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    /// The agent's turn ended: send it back, or let it stop. A last assistant
    /// message the harness passes along counts as the agent having spoken.
    pub fn stop(
        &mut self,
        session_id: &str,
        last_message: Option<&str>,
        now: u64,
    ) -> Result<StopAnswer, EngineError> {
        // Claude Code moves a tool call still running after 2 minutes to the
        // background and lets the model stop: while its own reproduction
        // runs, the agent waits for it, and the host hands it the result
        // when it ends. That stop closes nothing and sends nothing back.
        let investigating = self
            .load(session_id)?
            .state
            .session()
            .is_some_and(|s| s.stage == Stage::Investigating);
        if investigating {
            if let Some(run) = runlog::running_agent_run(&self.runs_dir(session_id)) {
                return Ok(StopAnswer {
                    decision: StopDecision::Allow { notice: None },
                    reason: None,
                    notice: Some(text::agent_run_pending(&run)),
                });
            }
        }
        // The message and the stop are one moment: one write, one revision.
        let spoke = last_message.is_some_and(|m| !m.trim().is_empty());
        let facts: &[Command] = if spoke {
            &[Command::AssistantMessage]
        } else {
            &[]
        };
        let applied =
            self.apply_with_facts(session_id, facts, Command::Stop, now, ScanTiming::Inline)?;
        let decision = applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Stop(decision) => Some(decision),
                _ => None,
            })
            .unwrap_or(StopDecision::Allow { notice: None });
        if let (
            StopDecision::Allow {
                notice: Some(machine::Notice::CleanupVerified(_)),
            },
            Some(session),
        ) = (&decision, applied.before.session())
        {
            self.keep_ended(session_id, session, now);
        }
        // Texts are rendered against the state they speak of: a nudge against
        // the session it sends back, a notice against the round just closed.
        let reason = text::stop_reason(applied.after.state.session(), &decision);
        let notice = match &decision {
            StopDecision::Allow {
                notice: Some(notice),
            } => {
                let round = applied
                    .before
                    .session()
                    .map_or(0, |session| session.round().index);
                Some(text::notice(notice, round, self.host()))
            }
            _ => None,
        };
        Ok(StopAnswer {
            decision,
            reason,
            notice,
        })
    }

    /// Where no stop will ever come (`Host::reports_stops`), a call in
    /// `cleaning_up` ends the session as a stop would once a fresh scan
    /// finds no probe left: the cleanup summary, or None. It never sends
    /// the agent back, so no cleanup reminder is spent.
    pub fn end_clean_cleanup(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        if self.host().reports_stops() {
            return Ok(None);
        }
        let cleaning = |state: &DebugState| {
            state
                .session()
                .is_some_and(|s| s.stage == Stage::CleaningUp)
        };
        if !cleaning(&self.load(session_id)?.state) {
            return Ok(None);
        }
        self.rescan_with(session_id, &[], false, now)?;
        let clean = self
            .load(session_id)?
            .state
            .session()
            .is_some_and(|s| s.stage == Stage::CleaningUp && s.live_probe_count() == 0);
        if !clean {
            return Ok(None);
        }
        Ok(self.stop(session_id, None, now)?.notice)
    }

    /// The blackboard an agent polls for (the MCP resource): the cleanup
    /// summary instead when this poll found the cleanup done and ended the
    /// session (`end_clean_cleanup`); None without a session.
    pub fn polled_board(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        if let Some(summary) = self.end_clean_cleanup(session_id, now)? {
            return Ok(Some(summary));
        }
        Ok(self.context(session_id, None, now)?.0)
    }

    /// The blackboard, and the harness's message list synced to it when given
    /// (`None` when the list needs no change).
    pub fn context(
        &mut self,
        session_id: &str,
        messages: Option<Vec<Value>>,
        now: u64,
    ) -> Result<(Option<String>, Option<Vec<Value>>), EngineError> {
        // The board's "Probes on disk" is ground truth: a block the shell
        // removed is not listed until the next decision.
        self.verify_instrumented(session_id, now)?;
        let stored = self.load(session_id)?;
        let mut env = self.env(session_id, stored.state.session().is_some());
        env.redacted = self.redacted_in_current_run(session_id, &stored.state);
        let state = self.with_current_lines(session_id, &stored.state);
        let content = state
            .session()
            .map(|session| text::blackboard(session, &env));
        let synced =
            messages.and_then(
                |messages| match sync_context(&messages, content.as_deref()) {
                    Synced::Unchanged => None,
                    Synced::Changed(list) => Some(list),
                },
            );
        Ok((content, synced))
    }

    /// The snapshot after a command, with the kickoff text its effects ask for.
    pub(super) fn with_kickoff(
        &self,
        session_id: &str,
        applied: Applied,
    ) -> (Snapshot, Option<String>) {
        self.with_kickoff_backed(session_id, applied, None)
    }

    /// `with_kickoff`, the cleanup kickoff ending with what the fix rests on.
    fn with_kickoff_backed(
        &self,
        session_id: &str,
        applied: Applied,
        fix_backing: Option<String>,
    ) -> (Snapshot, Option<String>) {
        let mut env = self.env(session_id, applied.after.state.session().is_some());
        env.fix_backing = fix_backing;
        let kickoff = applied.after.state.session().and_then(|session| {
            applied.effects.iter().find_map(|effect| match effect {
                Effect::Kickoff(kickoff) => {
                    if let crate::core::machine::Kickoff::Proceed { closed_round } = kickoff {
                        let closed = self.closed_run(session_id, session, *closed_round);
                        env.no_hits = closed.no_hits;
                        env.closed_attempts = closed.attempts;
                        env.closed_marks = closed.marks;
                        env.closed_marks_total = closed.marks_total;
                    }
                    Some(text::kickoff(session, *kickoff, &env))
                }
                _ => None,
            })
        });
        (self.snapshot_of(session_id, &applied.after), kickoff)
    }
}
