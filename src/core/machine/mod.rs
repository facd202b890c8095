//! Transitions of the debug session (DESIGN section 3). Every function is total
//! and pure: `(state, input, now) -> Result<Transition, DomainError>`. A
//! refused command leaves the caller's state untouched because it is never
//! mutated in place.

use super::error::{CommandName, DomainError};
use super::findings::FindingKind;
use super::model::*;
use super::run_id::run_id;
use serde::{Deserialize, Serialize};

mod ledger;
use ledger::{place_logpoint, reconcile, remove_logpoints};

/// Closing reminders per round before the sidecar closes the round itself.
pub const MAX_HANDOFF_NUDGES: u32 = 2;
/// Refusals of a hand-off that promised runtime probes while none is on disk.
pub const MAX_PROBE_REFUSALS: u32 = 1;
/// Times cleanup is sent back because probes are still on disk.
pub const MAX_CLEANUP_NUDGES: u32 = 3;

/// What the agent hands to the user.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandOff {
    pub mode: Option<HandoffMode>,
    pub steps: Vec<String>,
    pub plan: Option<Vec<EvidenceRequest>>,
    pub hypotheses: Option<Vec<Hypothesis>>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationInput {
    pub text: String,
    #[serde(default)]
    pub request_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactInput {
    pub path: String,
    pub request_id: Option<String>,
    pub kind: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProceedInput {
    pub note: Option<String>,
    #[serde(default)]
    pub observations: Vec<ObservationInput>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeRequest {
    pub file: String,
    pub hypothesis_id: Option<String>,
    pub language: Option<String>,
}

/// A logpoint to place: the engine has checked the file and read its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogpointRequest {
    pub file: String,
    pub line: u32,
    pub hypothesis_id: Option<String>,
    pub language: Option<String>,
    pub variables: Vec<String>,
    pub message: Option<String>,
    /// `logpoint::line_hash` of the line's text now.
    pub line_hash: String,
}

/// Who started an agent turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnSource {
    User,
    Continuation,
}

/// Our markers of this session that a scan found on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FoundProbe {
    pub id: String,
    pub file: String,
    pub line: u32,
    pub language: Option<String>,
    /// How the scan recognised it (whole block, markers gone, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<FindingKind>,
}

/// Which part of the disk a scan covered: probes outside it keep their state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind", content = "files")]
pub enum ScanScope {
    Workspace,
    Files(Vec<String>),
}

impl ScanScope {
    fn covers(&self, file: &str) -> bool {
        match self {
            ScanScope::Workspace => true,
            ScanScope::Files(files) => files.iter().any(|f| f == file),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScanReport {
    pub scope: ScanScope,
    pub found: Vec<FoundProbe>,
    /// End markers that name no session: this session's when the ledger
    /// knows their probe id.
    #[serde(default)]
    pub orphans: Vec<FoundProbe>,
}

/// Inputs to the debug session: user and agent commands, and the harness's
/// reports of what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Start {
        problem: String,
    },
    HandOff(HandOff),
    Proceed(ProceedInput),
    Done {
        note: Option<String>,
    },
    Abort,
    Observe(ObservationInput),
    Attach(ArtifactInput),
    RecordHypotheses(Vec<Hypothesis>),
    RegisterProbe(ProbeRequest),
    /// A logpoint joins the ledger, live at once: only the ledger holds it.
    PlaceLogpoint(LogpointRequest),
    /// Logpoints leave the ledger (cleanup of a logpoint); legal whenever a
    /// session is active, cleanup included.
    RemoveLogpoints(Vec<String>),
    /// The agent's turn ended; the answer is the nudge decision.
    Stop,
    TurnStarted(TurnSource),
    AssistantMessage,
    /// A tool call; `edits` when it may have added or removed probes, so
    /// a rescan follows (the harness side decides: `harness::edits_files`).
    ToolCall {
        tool: String,
        edits: bool,
    },
    ProbeScan(ScanReport),
    LogLines {
        run_id: String,
        lines: u64,
    },
    /// The agent runs the reproduction itself: a run of its own, beside the
    /// round's (legal only while the agent holds the round).
    AgentRun,
}

impl Command {
    /// The command's name when it is one a client may be refused; harness
    /// events are legal in every state.
    pub fn name(&self) -> Option<CommandName> {
        Some(match self {
            Command::Start { .. } => CommandName::Start,
            Command::HandOff(_) => CommandName::HandOff,
            Command::Proceed(_) => CommandName::Proceed,
            Command::Done { .. } => CommandName::Done,
            Command::Abort => CommandName::Abort,
            Command::Observe(_) => CommandName::Observe,
            Command::Attach(_) => CommandName::Attach,
            Command::RecordHypotheses(_) => CommandName::RecordHypotheses,
            Command::RegisterProbe(_) | Command::PlaceLogpoint(_) => CommandName::RegisterProbe,
            _ => return None,
        })
    }
}

/// Why the agent is sent back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Nudge {
    /// The round is still the agent's and it stopped without handing off.
    Handoff { attempt: u32 },
    /// Cleanup stopped with probes still on disk.
    Cleanup { attempt: u32, remaining: Vec<Probe> },
}

/// What the user should hear when the agent is allowed to stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Notice {
    /// The agent stopped without closing the round; the sidecar closed it.
    ClosedIncomplete { agent_spoke: bool },
    /// Every probe is gone and the session ended.
    CleanupVerified(CleanupSummary),
    /// Cleanup gave up with probes still on disk; the session stays open.
    CleanupUnfinished { remaining: Vec<Probe> },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CleanupSummary {
    pub problem: String,
    pub rounds: u32,
    pub runs: Vec<Run>,
    pub probes_removed: usize,
    pub hypotheses: Vec<Hypothesis>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "decision")]
pub enum StopDecision {
    Allow { notice: Option<Notice> },
    Block { nudge: Nudge },
}

/// How the hand-off tool call went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum HandOffResult {
    Accepted {
        mode: HandoffMode,
    },
    /// The plan promised runtime probes and the ledger has none on disk.
    RefusedNoProbes,
}

/// What the transport, the workspace and the model must learn from a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Effect {
    /// A run began: create its log file.
    RunStarted {
        run_id: String,
    },
    /// Reconcile the ledger with the disk.
    Rescan,
    /// Send the model the kickoff text of this step.
    Kickoff(Kickoff),
    HandOff(HandOffResult),
    Stop(StopDecision),
    ProbeRegistered {
        probe: Probe,
    },
    Reconciled(Reconciliation),
    /// These logpoints left the ledger.
    LogpointsRemoved {
        ids: Vec<String>,
    },
    /// The session was aborted; these probes are still on disk.
    Aborted {
        leftover: Vec<Probe>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Kickoff {
    Start,
    /// The user reproduced and pressed Proceed on the given round.
    Proceed {
        closed_round: u32,
    },
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reconciliation {
    pub live: Vec<String>,
    pub missing: Vec<String>,
    pub adopted: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub state: DebugState,
    pub effects: Vec<Effect>,
}

/// Who records a run of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Recorder {
    /// `debug-sidecar run`: the person's reproduction, into the current run.
    Person,
    /// `run_reproduction`: the agent's own check, into a run of its own.
    Agent,
}

/// Whether a run of the program may be recorded now. The person may record
/// into the current run while a round is open (investigating or their own
/// turn); the agent only while it holds the round, never while the person
/// does. Neither once the session is cleaning up: its last run is closed.
pub fn check_recording(state: &DebugState, by: Recorder) -> Result<(), DomainError> {
    let legal = matches!(
        (state.stage(), by),
        (Some(Stage::Investigating), _) | (Some(Stage::UserTurn), Recorder::Person)
    );
    if legal {
        return Ok(());
    }
    Err(DomainError::Illegal {
        command: match by {
            Recorder::Person => CommandName::Run,
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

fn hand_off(s: &mut DebugSession, input: HandOff) -> Result<HandOffResult, DomainError> {
    let mode = input.mode.unwrap_or(HandoffMode::Reproduce);
    if mode == HandoffMode::Incomplete {
        return Err(DomainError::invalid(
            "mode",
            "`incomplete` is set by the sidecar; use reproduce, capture or question",
        ));
    }
    let steps: Vec<String> = input
        .steps
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let message = input
        .message
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    match mode {
        HandoffMode::Reproduce | HandoffMode::Capture if steps.is_empty() => {
            return Err(DomainError::invalid(
                "steps",
                format!(
                    "a `{}` hand-off needs at least one step the user can follow",
                    mode.as_str()
                ),
            ))
        }
        HandoffMode::Question if message.is_none() && steps.is_empty() => {
            return Err(DomainError::invalid(
                "message",
                "a `question` hand-off needs the question in `message`",
            ))
        }
        _ => {}
    }
    if let Some(plan) = &input.plan {
        validate_plan(plan)?;
    }
    if let Some(hypotheses) = input.hypotheses {
        upsert_hypotheses(s, hypotheses)?;
    }

    let promises_probes = input
        .plan
        .iter()
        .flatten()
        .any(|r| r.method == EvidenceMethod::RuntimeProbe);
    // Session-wide on purpose: a verification round reuses the probes of the
    // round that found the bug, and refusing it would cost the user a turn.
    if promises_probes && s.live_probe_count() == 0 && s.round().nudges.probes < MAX_PROBE_REFUSALS
    {
        let round = s.round_mut();
        round.nudges.probes += 1;
        if input.plan.is_some() {
            round.plan = input.plan;
        }
        return Ok(HandOffResult::RefusedNoProbes);
    }

    let round = s.round_mut();
    if input.plan.is_some() {
        round.plan = input.plan;
    }
    round.steps = steps;
    round.message = message;
    round.handoff = Some(mode);
    round.awaiting_progress = false;
    s.stage = Stage::UserTurn;
    s.user_spoke = false;
    Ok(HandOffResult::Accepted { mode })
}

fn validate_plan(plan: &[EvidenceRequest]) -> Result<(), DomainError> {
    let mut seen = std::collections::HashSet::new();
    for (i, request) in plan.iter().enumerate() {
        if request.id.trim().is_empty() {
            return Err(DomainError::invalid(
                format!("plan[{i}].id"),
                "every request needs an id",
            ));
        }
        if !seen.insert(request.id.as_str()) {
            return Err(DomainError::invalid(
                format!("plan[{i}].id"),
                format!("`{}` appears twice in the plan", request.id),
            ));
        }
        if request.method.needs_user() && request.instructions.iter().all(|s| s.trim().is_empty()) {
            return Err(DomainError::invalid(
                format!("plan[{i}].instructions"),
                "a request the user must fulfil needs instructions",
            ));
        }
    }
    Ok(())
}

fn upsert_hypotheses(s: &mut DebugSession, hypotheses: Vec<Hypothesis>) -> Result<(), DomainError> {
    for (i, h) in hypotheses.iter().enumerate() {
        if h.id.trim().is_empty() {
            return Err(DomainError::invalid(
                format!("hypotheses[{i}].id"),
                "every hypothesis needs an id",
            ));
        }
        if h.statement.trim().is_empty() {
            return Err(DomainError::invalid(
                format!("hypotheses[{i}].statement"),
                "every hypothesis needs a statement",
            ));
        }
    }
    for h in hypotheses {
        match s.hypotheses.iter_mut().find(|existing| existing.id == h.id) {
            Some(existing) => *existing = h,
            None => s.hypotheses.push(h),
        }
    }
    Ok(())
}

fn record_inputs(
    s: &mut DebugSession,
    note: Option<String>,
    observations: Vec<ObservationInput>,
    artifacts: Vec<ArtifactInput>,
    now: u64,
) -> Result<(), DomainError> {
    for (i, a) in artifacts.iter().enumerate() {
        if a.path.trim().is_empty() {
            return Err(DomainError::invalid(
                format!("artifacts[{i}].path"),
                "an artifact needs a path",
            ));
        }
    }
    let round = s.round().index;
    let note = note
        .filter(|n| !n.trim().is_empty())
        .map(|text| ObservationInput {
            text,
            request_ids: Vec::new(),
        });
    for o in observations.into_iter().chain(note) {
        if o.text.trim().is_empty() {
            continue;
        }
        s.observations.push(Observation {
            text: o.text,
            request_ids: o.request_ids,
            round,
            added_at: now,
        });
    }
    for a in artifacts {
        s.artifacts.push(Artifact {
            path: a.path,
            request_id: a.request_id,
            kind: a.kind,
            round,
            added_at: now,
        });
    }
    Ok(())
}

fn required_text(field: &str, value: &str) -> Result<String, DomainError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    Ok(trimmed.to_string())
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
