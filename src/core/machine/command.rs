//! The commands the debug session takes and what a transition produces:
//! their inputs, the effects the engine carries out, the stop decision, the
//! kickoff and notices the texts are written from.

use super::super::error::CommandName;
use super::super::findings::FindingKind;
use super::super::model::*;
use serde::{Deserialize, Serialize};

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
    pub(super) fn covers(&self, file: &str) -> bool {
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
    /// `debug-sidecar mark`: the person's mark, into the current run.
    Mark,
}
