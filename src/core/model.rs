//! The debug session model (DESIGN section 3): who holds the turn, the rounds,
//! the probe ledger, the evidence plan, hypotheses and runs. Plain data with
//! derived views; transitions live in `machine`.

use super::findings::FindingKind;
use serde::{Deserialize, Serialize};

/// Current shape of the persisted state. Bump it when the shape changes and
/// teach `revival` the old one.
pub const STATE_VERSION: u32 = 3;

/// Whose move it is, and nothing else. Command legality depends only on this,
/// never on how well the agent followed the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Investigating,
    UserTurn,
    CleaningUp,
}

impl Stage {
    pub const ALL: [Stage; 3] = [Stage::Investigating, Stage::UserTurn, Stage::CleaningUp];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Investigating => "investigating",
            Stage::UserTurn => "user_turn",
            Stage::CleaningUp => "cleaning_up",
        }
    }
}

/// How the round was handed to the user. Wording only: every mode is the same
/// `user_turn` stage with the same legal commands, so a mode the agent got
/// wrong can never make a legitimate user command illegal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoffMode {
    /// Run the reproduction steps so the probes record what happens.
    Reproduce,
    /// Capture something only the user can (a screenshot, a report).
    Capture,
    /// The agent needs an answer before it can go on.
    Question,
    /// The agent stopped without closing the round; the sidecar closed it.
    Incomplete,
}

impl HandoffMode {
    pub const ALL: [HandoffMode; 4] = [
        HandoffMode::Reproduce,
        HandoffMode::Capture,
        HandoffMode::Question,
        HandoffMode::Incomplete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HandoffMode::Reproduce => "reproduce",
            HandoffMode::Capture => "capture",
            HandoffMode::Question => "question",
            HandoffMode::Incomplete => "incomplete",
        }
    }
}

/// The hand-off modes an agent may choose: every mode but `incomplete`,
/// which only the sidecar sets (when it closes a round the agent left open).
/// The hand-off's params use this type, so their schema and the parse error
/// of a wrong mode list exactly these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentHandoffMode {
    /// Run the reproduction steps so the probes record what happens.
    Reproduce,
    /// Capture something only the user can (a screenshot, a report).
    Capture,
    /// The agent needs an answer before it can go on (put it in `message`).
    Question,
}

impl From<AgentHandoffMode> for HandoffMode {
    fn from(mode: AgentHandoffMode) -> Self {
        match mode {
            AgentHandoffMode::Reproduce => HandoffMode::Reproduce,
            AgentHandoffMode::Capture => HandoffMode::Capture,
            AgentHandoffMode::Question => HandoffMode::Question,
        }
    }
}

/// How a piece of evidence is obtained, cheapest for the user first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceMethod {
    AgentInspection,
    RuntimeProbe,
    UserReport,
    UserArtifact,
}

impl EvidenceMethod {
    pub const PRIORITY: [EvidenceMethod; 4] = [
        EvidenceMethod::AgentInspection,
        EvidenceMethod::RuntimeProbe,
        EvidenceMethod::UserReport,
        EvidenceMethod::UserArtifact,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceMethod::AgentInspection => "agent_inspection",
            EvidenceMethod::RuntimeProbe => "runtime_probe",
            EvidenceMethod::UserReport => "user_report",
            EvidenceMethod::UserArtifact => "user_artifact",
        }
    }

    /// Methods the agent satisfies alone never create work for the user.
    pub fn needs_user(self) -> bool {
        matches!(
            self,
            EvidenceMethod::UserReport | EvidenceMethod::UserArtifact
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceRequest {
    /// Model-authored id, unique within a plan.
    pub id: String,
    pub method: EvidenceMethod,
    #[serde(default)]
    pub instructions: Vec<String>,
    /// Expected file kind for `user_artifact` (for example "screenshot").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_hint: Option<String>,
}

/// Something the user reported in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub text: String,
    #[serde(default)]
    pub request_ids: Vec<String>,
    pub round: u32,
    pub added_at: u64,
}

/// A file the user supplied (screenshot, crash dump, HAR).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub round: u32,
    pub added_at: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HypothesisStatus {
    Open,
    Confirmed,
    Rejected,
    Inconclusive,
}

impl HypothesisStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            HypothesisStatus::Open => "open",
            HypothesisStatus::Confirmed => "confirmed",
            HypothesisStatus::Rejected => "rejected",
            HypothesisStatus::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hypothesis {
    pub id: String,
    pub statement: String,
    pub status: HypothesisStatus,
    /// Free-form references: probe ids, run ids, request ids, file:line.
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// Where the ledger believes a probe is. The ledger is ground truth about the
/// disk because only a scan moves a probe to `Live` or `Missing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeState {
    /// A snippet was issued; no scan has seen it in a file yet.
    Issued,
    /// The last scan found it on disk.
    Live,
    /// It was seen on disk before and the last scan no longer finds it.
    Missing,
}

impl ProbeState {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeState::Issued => "issued",
            ProbeState::Live => "live",
            ProbeState::Missing => "missing",
        }
    }

    /// The word a person reads in a listing: a probe no longer on disk was
    /// removed (by the agent, by hand, or by a revert).
    pub fn for_person(self) -> &'static str {
        match self {
            ProbeState::Missing => "removed",
            other => other.as_str(),
        }
    }
}

/// A probe's kind: a block written into a file, or a logpoint that only
/// the ledger holds and `debug-sidecar run` sets through a debug adapter.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    #[default]
    Source,
    Logpoint,
}

impl ProbeKind {
    pub fn is_source(&self) -> bool {
        *self == ProbeKind::Source
    }
}

/// What a logpoint records, and the line it was placed on as it read then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogpointSpec {
    /// Expressions in the file's language, evaluated each time the line runs.
    pub variables: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A fingerprint of the line's text (trimmed) when it was placed: a line
    /// that reads otherwise now is not where the logpoint was meant to be.
    pub line_hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    pub id: String,
    /// `source` when absent: a block in a file; `logpoint`: no file is edited.
    #[serde(default, skip_serializing_if = "ProbeKind::is_source")]
    pub kind: ProbeKind,
    /// Workspace-relative path with `/` separators.
    pub file: String,
    /// 1-based line of the start marker, when a scan found it; a
    /// logpoint's line, always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypothesis_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub state: ProbeState,
    /// How the last scan recognised it on disk, when it was not a whole
    /// block (its markers deleted, one end gone, retagged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<FindingKind>,
    /// A logpoint's expressions and line fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logpoint: Option<LogpointSpec>,
}

impl Probe {
    pub fn is_logpoint(&self) -> bool {
        self.kind == ProbeKind::Logpoint
    }

    /// `file:line` for a reader; the file name made inert (it may hold a
    /// newline or an escape sequence).
    pub fn location(&self) -> String {
        let file = super::escape::inline(&self.file);
        match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file,
        }
    }

    /// How it sits on disk when its block is not whole: its code still
    /// runs, so cleanup must remove the code, not only markers.
    pub fn damage(&self) -> Option<&'static str> {
        if self.state != ProbeState::Live {
            return None;
        }
        Some(match self.trace? {
            FindingKind::Unmarked => "its markers are gone but its code is still there",
            FindingKind::MissingEnd => "its end marker is gone; its code may still be there",
            FindingKind::MissingStart => "its start marker is gone; its code may still be there",
            FindingKind::Retagged => "its markers name another session; it is still this session's",
            FindingKind::EmptyBlock => "its markers hold no probe code: it logs nothing",
            _ => return None,
        })
    }

    /// `file:line`, with what is wrong with the block when it is not whole;
    /// a logpoint says it is one (it is in no file).
    pub fn located(&self) -> String {
        if self.is_logpoint() {
            return format!("{} (logpoint)", self.location());
        }
        match self.damage() {
            Some(damage) => format!("{} ({damage})", self.location()),
            None => self.location(),
        }
    }
}

/// Separate budgets so a probe refusal never consumes the closing reminders.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct NudgeBudget {
    pub handoff: u32,
    pub probes: u32,
}

/// One evidence round. Everything scoped to a round lives here, so starting a
/// round cannot forget to reset a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    pub index: u32,
    pub run_id: String,
    /// The evidence plan; None until the agent declares one.
    pub plan: Option<Vec<EvidenceRequest>>,
    pub steps: Vec<String>,
    /// Ledger ids of probes introduced while this round was current.
    pub probe_ids: Vec<String>,
    pub nudges: NudgeBudget,
    /// A reminder went out and no tool call has landed since: one reminder per
    /// round of visible progress, so prose answers cannot burn the budget.
    pub awaiting_progress: bool,
    /// Set while the user holds the round; None while the agent has it.
    pub handoff: Option<HandoffMode>,
    /// What the agent last told the user when it handed off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Round {
    pub fn new(index: u32, run_id: String) -> Self {
        Round {
            index,
            run_id,
            plan: None,
            steps: Vec::new(),
            probe_ids: Vec::new(),
            nudges: NudgeBudget::default(),
            awaiting_progress: false,
            handoff: None,
            message: None,
        }
    }

    pub fn declares(&self, method: EvidenceMethod) -> bool {
        self.plan
            .iter()
            .flatten()
            .any(|request| request.method == method)
    }
}

/// One run per round; its log file is named after the id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    pub round: u32,
    /// Lines seen in the run's log file, as last counted by the workspace.
    pub lines: u64,
    /// The agent ran the reproduction itself (`run_reproduction`): a run of
    /// its own beside the round's, never the person's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugSession {
    pub stage: Stage,
    pub problem: String,
    /// Every round in order; the last one is current. Never empty.
    pub rounds: Vec<Round>,
    /// Session-wide: a probe outlives its round so verification runs reuse it.
    pub probes: Vec<Probe>,
    /// Every run in creation order.
    pub runs: Vec<Run>,
    pub hypotheses: Vec<Hypothesis>,
    pub observations: Vec<Observation>,
    pub artifacts: Vec<Artifact>,
    /// Every file a probe was issued for or found in: always rescanned,
    /// whether ignored by git or behind a symlink.
    #[serde(default)]
    pub tracked_files: Vec<String>,
    /// Counter behind probe ids, so ids stay unique after probes are removed.
    pub next_probe: u32,
    /// How often cleanup was sent back to finish removing probes.
    pub cleanup_nudges: u32,
    /// An assistant message landed during the current agent turn (transient).
    pub turn_produced: bool,
    /// A user message started the current turn (transient).
    pub user_spoke: bool,
    pub started_at: u64,
    pub updated_at: u64,
}

/// Where a probe's file sits for the workspace walk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Placement {
    /// Walked like any file of the workspace (or not there yet).
    InTree,
    /// Skipped by the walk: ignored by git or an ignore file.
    Ignored,
    /// Reached through a symlink; `real` is where it really is.
    Linked { real: String },
}

/// Whether `path` is a workspace-relative path that stays inside it: not
/// absolute, no drive, no `..` or empty component.
pub fn is_inside_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path.as_bytes().get(1) != Some(&b':')
        && path.split('/').all(|part| !part.is_empty() && part != "..")
}

/// The whole debug state of one agent session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DebugState {
    #[default]
    Inactive,
    Active(Box<DebugSession>),
}

impl DebugState {
    pub fn session(&self) -> Option<&DebugSession> {
        match self {
            DebugState::Inactive => None,
            DebugState::Active(session) => Some(session),
        }
    }

    pub fn stage(&self) -> Option<Stage> {
        self.session().map(|session| session.stage)
    }
}

impl DebugSession {
    pub fn new(problem: String, run_id: String, now: u64) -> Self {
        DebugSession {
            stage: Stage::Investigating,
            problem,
            rounds: vec![Round::new(1, run_id.clone())],
            probes: Vec::new(),
            runs: vec![Run {
                id: run_id,
                round: 1,
                lines: 0,
                agent: false,
            }],
            hypotheses: Vec::new(),
            observations: Vec::new(),
            artifacts: Vec::new(),
            tracked_files: Vec::new(),
            next_probe: 1,
            cleanup_nudges: 0,
            turn_produced: false,
            user_spoke: false,
            started_at: now,
            updated_at: now,
        }
    }

    pub fn round(&self) -> &Round {
        // `rounds` is never empty: construction and revival both guarantee one.
        self.rounds.last().expect("a session always has a round")
    }

    pub fn round_mut(&mut self) -> &mut Round {
        self.rounds
            .last_mut()
            .expect("a session always has a round")
    }

    pub fn run_id(&self) -> &str {
        &self.round().run_id
    }

    /// Probes a scan found on disk, in ledger order.
    /// Remembers a file a probe was issued for or found in.
    pub fn track(&mut self, file: &str) {
        if let Err(at) = self
            .tracked_files
            .binary_search_by(|f| f.as_str().cmp(file))
        {
            self.tracked_files.insert(at, file.to_string());
        }
    }

    /// The files every scan reads: the tracked ones and every probe's file.
    pub fn files_to_rescan(&self) -> Vec<String> {
        let mut files = self.tracked_files.clone();
        files.extend(self.probes.iter().map(|p| p.file.clone()));
        // A saved state may come from anywhere: only paths inside the
        // workspace are read.
        files.retain(|f| is_inside_path(f));
        files.sort();
        files.dedup();
        files
    }

    pub fn live_probes(&self) -> impl Iterator<Item = &Probe> {
        self.probes.iter().filter(|p| p.state == ProbeState::Live)
    }

    /// Live logpoints: what `debug-sidecar run` sets.
    pub fn live_logpoints(&self) -> impl Iterator<Item = &Probe> {
        self.live_probes().filter(|p| p.is_logpoint())
    }

    pub fn live_probe_count(&self) -> usize {
        self.live_probes().count()
    }

    /// Live probes introduced while the current round was current and
    /// able to log (not markers around nothing): what a plan that promises
    /// `runtime_probe` needs in its own round.
    pub fn live_probes_of_this_round(&self) -> impl Iterator<Item = &Probe> {
        let round = self.round();
        self.live_probes()
            .filter(|p| p.trace != Some(FindingKind::EmptyBlock))
            .filter(move |p| round.probe_ids.contains(&p.id))
    }

    /// Requests of the current round still waiting on the user: a
    /// `user_report` until an observation names it, a `user_artifact` until an
    /// artifact links it. Agent methods never create user work.
    pub fn pending_requests(&self) -> Vec<&EvidenceRequest> {
        self.round()
            .plan
            .iter()
            .flatten()
            .filter(|request| match request.method {
                EvidenceMethod::UserReport => !self
                    .observations
                    .iter()
                    .any(|o| o.request_ids.contains(&request.id)),
                EvidenceMethod::UserArtifact => !self
                    .artifacts
                    .iter()
                    .any(|a| a.request_id.as_deref() == Some(request.id.as_str())),
                EvidenceMethod::AgentInspection | EvidenceMethod::RuntimeProbe => false,
            })
            .collect()
    }

    /// One-line evidence status for messages and the UI.
    pub fn evidence_summary(&self) -> String {
        let round = self.round();
        let Some(plan) = round.plan.as_ref().filter(|plan| !plan.is_empty()) else {
            return format!("round {}: no evidence plan yet", round.index);
        };
        use crate::core::budget::{BOARD_ID, BOARD_REQUESTS};
        let mut methods: Vec<String> = plan
            .iter()
            .take(BOARD_REQUESTS)
            .map(|r| {
                let id = super::escape::inline_cut(&r.id, BOARD_ID);
                format!("{id}:{}", r.method.as_str())
            })
            .collect();
        if plan.len() > BOARD_REQUESTS {
            methods.push(format!("+{} more", plan.len() - BOARD_REQUESTS));
        }
        format!(
            "round {}: {} request(s) [{}], {} pending user action(s), {} observation(s), {} artifact(s)",
            round.index,
            plan.len(),
            methods.join(", "),
            self.pending_requests().len(),
            self.observations.len(),
            self.artifacts.len(),
        )
    }

    /// What closing the current round still needs, stated as observed facts.
    pub fn round_facts(&self) -> String {
        let round = self.round();
        let plan = match &round.plan {
            Some(plan) => format!("{} request(s)", plan.len()),
            None => "none".to_string(),
        };
        let steps = if round.steps.is_empty() {
            "none".to_string()
        } else {
            format!("{}", round.steps.len())
        };
        format!(
            "evidence plan: {plan}; reproduction steps: {steps}; live probes: {}",
            self.live_probe_count()
        )
    }

    pub fn run(&self, id: &str) -> Option<&Run> {
        self.runs.iter().find(|run| run.id == id)
    }
}
