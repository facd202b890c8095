//! Transitions of the debug session (DESIGN section 3). Every function is total
//! and pure: `(state, input, now) -> Result<Transition, DomainError>`. A
//! refused command leaves the caller's state untouched because it is never
//! mutated in place.

use super::error::{CommandName, DomainError};
use super::model::*;
use super::run_id::run_id;

mod command;
mod hand_off;
mod ledger;
pub use command::*;
use hand_off::{hand_off, record_inputs, required_text, upsert_hypotheses};
use ledger::{place_logpoint, reconcile, remove_logpoints};

/// Closing reminders per round before the sidecar closes the round itself.
pub const MAX_HANDOFF_NUDGES: u32 = 2;
/// Refusals of a hand-off that promised runtime probes while none is on disk.
pub const MAX_PROBE_REFUSALS: u32 = 1;
/// Times cleanup is sent back because probes are still on disk.
pub const MAX_CLEANUP_NUDGES: u32 = 3;

/// Whether a run of the program may be recorded now. The person may record
/// into the current run while a round is open (investigating or their own
/// turn); the agent only while it holds the round, never while the person
/// does. Neither once the session is cleaning up: its last run is closed.
pub fn check_recording(state: &DebugState, by: Recorder) -> Result<(), DomainError> {
    let legal = matches!(
        (state.stage(), by),
        (Some(Stage::Investigating), _)
            | (Some(Stage::UserTurn), Recorder::Person | Recorder::Mark)
    );
    if legal {
        return Ok(());
    }
    Err(DomainError::Illegal {
        command: match by {
            Recorder::Person => CommandName::Run,
            Recorder::Mark => CommandName::Mark,
            Recorder::Agent => CommandName::RunReproduction,
        },
        stage: state.stage(),
        legal: legal_commands(state),
    })
}

/// Every command legal in a state, user and agent alike, in a stable order.
pub fn legal_commands(state: &DebugState) -> Vec<CommandName> {
    use CommandName::*;
    match state.stage() {
        None => vec![Start],
        // The person's Proceed is legal here too: an explicit command wins
        // over a round the agent still holds (no agent may be left to close it).
        Some(Stage::Investigating) => vec![
            HandOff,
            Proceed,
            Done,
            Abort,
            Observe,
            Attach,
            RecordHypotheses,
            RegisterProbe,
        ],
        Some(Stage::UserTurn) => vec![
            Proceed,
            Done,
            Abort,
            HandOff,
            Observe,
            Attach,
            RecordHypotheses,
            RegisterProbe,
        ],
        Some(Stage::CleaningUp) => vec![Abort, RecordHypotheses],
    }
}

/// The commands a person can issue now; never empty, so no state strands the user.
pub fn user_commands(state: &DebugState) -> Vec<CommandName> {
    legal_commands(state)
        .into_iter()
        .filter(|c| c.is_user_command())
        .collect()
}

/// Whether the engine should reconcile the ledger with the disk before
/// applying `command`, because its outcome depends on what is on disk.
pub fn needs_fresh_scan(state: &DebugState, command: &Command) -> bool {
    if state.session().is_none() {
        return false;
    }
    match command {
        // Every decision that depends on the disk works from a fresh view:
        // the probes a hand-off promises, the count a Proceed hands the
        // user, what cleanup must remove. Done rescans through its own
        // effect, before its kickoff is rendered.
        Command::HandOff(_) | Command::Proceed(_) | Command::Stop | Command::Abort => true,
        _ => false,
    }
}

/// Refuses a command the state does not allow, saying what is possible.
pub fn check_legal(state: &DebugState, name: CommandName) -> Result<(), DomainError> {
    if legal_commands(state).contains(&name) {
        return Ok(());
    }
    Err(DomainError::Illegal {
        command: name,
        stage: state.stage(),
        legal: legal_commands(state),
    })
}

pub fn apply(state: &DebugState, command: Command, now: u64) -> Result<Transition, DomainError> {
    if let Some(name) = command.name() {
        check_legal(state, name)?;
    }
    if command == Command::AgentRun {
        check_recording(state, Recorder::Agent)?;
    }
    let mut effects = Vec::new();
    let next = match (state, command) {
        (DebugState::Inactive, Command::Start { problem }) => {
            let problem = required_text("problem", &problem)?;
            effects.push(Effect::RunStarted {
                run_id: run_id(1, now),
            });
            effects.push(Effect::Kickoff(Kickoff::Start));
            DebugState::Active(Box::new(DebugSession::new(problem, run_id(1, now), now)))
        }
        // Harness events mean nothing without a session.
        (DebugState::Inactive, Command::Stop) => {
            effects.push(Effect::Stop(StopDecision::Allow { notice: None }));
            DebugState::Inactive
        }
        (DebugState::Inactive, _) => DebugState::Inactive,
        (DebugState::Active(session), command) => {
            let before = session.as_ref();
            match apply_active(before.clone(), command, now, &mut effects)? {
                // `updatedAt` moves only with a real change, so an event
                // that changes nothing costs no write and no notification.
                DebugState::Active(mut next) if *next != *before => {
                    next.updated_at = now;
                    DebugState::Active(next)
                }
                next => next,
            }
        }
    };
    Ok(Transition {
        state: next,
        effects,
    })
}

fn apply_active(
    mut s: DebugSession,
    command: Command,
    now: u64,
    effects: &mut Vec<Effect>,
) -> Result<DebugState, DomainError> {
    match command {
        Command::Start { .. } => return unreachable_legal(),
        Command::HandOff(handoff) => {
            let result = hand_off(&mut s, handoff)?;
            effects.push(Effect::HandOff(result));
        }
        Command::Proceed(input) => {
            if s.stage == Stage::Investigating {
                // The agent never handed the round over: close it as the
                // sidecar does when a stop spends the budget, then proceed.
                let round = s.round_mut();
                round.handoff = Some(HandoffMode::Incomplete);
                round.awaiting_progress = false;
            }
            let closed = s.round().index;
            record_inputs(&mut s, input.note, input.observations, input.artifacts, now)?;
            let index = closed.saturating_add(1);
            let run = run_id(index, now);
            s.rounds.push(Round::new(index, run.clone()));
            s.runs.push(Run {
                id: run.clone(),
                round: index,
                lines: 0,
                agent: false,
            });
            s.stage = Stage::Investigating;
            s.turn_produced = false;
            s.user_spoke = false;
            effects.push(Effect::RunStarted { run_id: run });
            effects.push(Effect::Kickoff(Kickoff::Proceed {
                closed_round: closed,
            }));
        }
        Command::Done { note } => {
            record_inputs(&mut s, note, Vec::new(), Vec::new(), now)?;
            s.stage = Stage::CleaningUp;
            s.cleanup_nudges = 0;
            let round = s.round_mut();
            round.handoff = None;
            round.awaiting_progress = false;
            effects.push(Effect::Rescan);
            effects.push(Effect::Kickoff(Kickoff::Done));
        }
        Command::Abort => {
            // Logpoints end with the ledger: only blocks in files are left over.
            let leftover = s
                .live_probes()
                .filter(|p| !p.is_logpoint())
                .cloned()
                .collect();
            effects.push(Effect::Aborted { leftover });
            return Ok(DebugState::Inactive);
        }
        Command::Observe(input) => {
            record_inputs(&mut s, None, vec![input], Vec::new(), now)?;
        }
        Command::Attach(input) => {
            record_inputs(&mut s, None, Vec::new(), vec![input], now)?;
        }
        Command::RecordHypotheses(hypotheses) => {
            upsert_hypotheses(&mut s, hypotheses)?;
        }
        Command::RegisterProbe(request) => {
            let file = required_text("file", &request.file)?;
            let id = format!("p{}", s.next_probe);
            s.next_probe = s.next_probe.saturating_add(1);
            let probe = Probe {
                id: id.clone(),
                kind: ProbeKind::Source,
                file,
                line: None,
                round: s.round().index,
                hypothesis_id: request.hypothesis_id.filter(|h| !h.trim().is_empty()),
                language: request.language,
                state: ProbeState::Issued,
                trace: None,
                logpoint: None,
            };
            s.track(&probe.file);
            s.probes.push(probe.clone());
            s.round_mut().probe_ids.push(id);
            effects.push(Effect::ProbeRegistered { probe });
        }
        Command::PlaceLogpoint(request) => {
            let probe = place_logpoint(&mut s, request)?;
            effects.push(Effect::ProbeRegistered { probe });
        }
        Command::RemoveLogpoints(ids) => {
            let removed = remove_logpoints(&mut s, &ids)?;
            effects.push(Effect::LogpointsRemoved { ids: removed });
        }
        Command::Stop => {
            let (next, decision) = stop(s);
            effects.push(Effect::Stop(decision));
            return Ok(next);
        }
        Command::TurnStarted(source) => {
            s.turn_produced = false;
            s.user_spoke = source == TurnSource::User;
        }
        Command::AssistantMessage => s.turn_produced = true,
        Command::ToolCall { edits, .. } => {
            // Any tool call is visible progress and re-arms the reminder.
            s.round_mut().awaiting_progress = false;
            if edits {
                effects.push(Effect::Rescan);
            }
        }
        Command::ProbeScan(report) => {
            let outcome = reconcile(&mut s, report);
            effects.push(Effect::Reconciled(outcome));
        }
        Command::LogLines { run_id, lines } => {
            if let Some(run) = s.runs.iter_mut().find(|r| r.id == run_id) {
                run.lines = lines;
            }
        }
        Command::AgentRun => {
            let round = s.round().index;
            // Unique even when two runs start within one millisecond.
            let mut stamp = now;
            while s.run(&run_id(round, stamp)).is_some() {
                stamp = stamp.saturating_add(1);
            }
            let run = run_id(round, stamp);
            s.runs.push(Run {
                id: run.clone(),
                round,
                lines: 0,
                agent: true,
            });
            effects.push(Effect::RunStarted { run_id: run });
        }
    }
    Ok(DebugState::Active(Box::new(s)))
}

/// `apply` checks legality first, so this arm cannot be reached; answering
/// with a state-preserving error keeps the function total anyway.
fn unreachable_legal() -> Result<DebugState, DomainError> {
    Err(DomainError::invalid(
        "command",
        "start is only legal while inactive",
    ))
}

/// The nudge decision when the agent's turn ends.
fn stop(mut s: DebugSession) -> (DebugState, StopDecision) {
    match s.stage {
        Stage::Investigating => {
            let agent_spoke = s.turn_produced;
            let round = s.round_mut();
            if round.nudges.handoff < MAX_HANDOFF_NUDGES && !round.awaiting_progress {
                round.nudges.handoff += 1;
                round.awaiting_progress = true;
                let attempt = round.nudges.handoff;
                let decision = StopDecision::Block {
                    nudge: Nudge::Handoff { attempt },
                };
                return (DebugState::Active(Box::new(s)), decision);
            }
            // Budget spent, or the last reminder produced no progress: close
            // the round for the agent so the user is never stranded.
            round.handoff = Some(HandoffMode::Incomplete);
            round.awaiting_progress = false;
            s.stage = Stage::UserTurn;
            let decision = StopDecision::Allow {
                notice: Some(Notice::ClosedIncomplete { agent_spoke }),
            };
            (DebugState::Active(Box::new(s)), decision)
        }
        Stage::UserTurn => (
            DebugState::Active(Box::new(s)),
            StopDecision::Allow { notice: None },
        ),
        Stage::CleaningUp => {
            let remaining: Vec<Probe> = s.live_probes().cloned().collect();
            if remaining.is_empty() {
                let summary = CleanupSummary {
                    problem: s.problem.clone(),
                    rounds: s.round().index,
                    runs: s.runs.clone(),
                    probes_removed: s
                        .probes
                        .iter()
                        .filter(|p| p.state == ProbeState::Missing)
                        .count(),
                    hypotheses: s.hypotheses.clone(),
                };
                let decision = StopDecision::Allow {
                    notice: Some(Notice::CleanupVerified(summary)),
                };
                return (DebugState::Inactive, decision);
            }
            if s.cleanup_nudges < MAX_CLEANUP_NUDGES {
                s.cleanup_nudges += 1;
                let decision = StopDecision::Block {
                    nudge: Nudge::Cleanup {
                        attempt: s.cleanup_nudges,
                        remaining,
                    },
                };
                return (DebugState::Active(Box::new(s)), decision);
            }
            let decision = StopDecision::Allow {
                notice: Some(Notice::CleanupUnfinished { remaining }),
            };
            (DebugState::Active(Box::new(s)), decision)
        }
    }
}
