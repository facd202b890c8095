//! The snapshot: the authoritative view of one session that every response and
//! `debug/stateChanged` notification carries (DESIGN section 8). Its shape is
//! stable: absent values are `null`, never missing keys.

use super::error::CommandName;
use super::machine::user_commands;
use super::model::{DebugState, EvidenceRequest, HandoffMode, Hypothesis, Probe, Stage};
use super::text::RenderEnv;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub session_id: String,
    pub active: bool,
    pub stage: Option<Stage>,
    pub round: Option<u32>,
    /// How the round was handed to the user; null while the agent holds it.
    pub handoff: Option<HandoffMode>,
    pub problem: Option<String>,
    pub run_id: Option<String>,
    /// The current run's log file, for tailing.
    pub log_file: Option<String>,
    pub ingest_url: Option<String>,
    pub probes: ProbeSummary,
    pub hypotheses: Vec<Hypothesis>,
    /// The reproduction steps of the current round.
    pub steps: Vec<String>,
    /// What the user still owes the current round's evidence plan.
    pub pending_user_actions: Vec<EvidenceRequest>,
    pub evidence_summary: Option<String>,
    /// The buttons a person may press now (never empty).
    pub user_commands: Vec<CommandName>,
    pub revision: u64,
    /// Something a person should know about the saved state, such as a
    /// damaged file that was moved aside; null normally.
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeSummary {
    /// Probes the last scan found on disk.
    pub live: usize,
    /// The whole ledger, in order, with each probe's state.
    pub list: Vec<Probe>,
}

pub fn snapshot(session_id: &str, state: &DebugState, env: &RenderEnv, revision: u64) -> Snapshot {
    let session = state.session();
    let round = session.map(|s| s.round());
    Snapshot {
        session_id: session_id.to_string(),
        active: session.is_some(),
        stage: state.stage(),
        round: round.map(|r| r.index),
        handoff: round
            .filter(|_| state.stage() == Some(Stage::UserTurn))
            .and_then(|r| r.handoff),
        problem: session.map(|s| s.problem.clone()),
        run_id: round.map(|r| r.run_id.clone()),
        log_file: round.and_then(|r| env.log_file(&r.run_id)),
        ingest_url: session.and(env.ingest_url.clone()),
        probes: ProbeSummary {
            live: session.map_or(0, |s| s.live_probe_count()),
            list: session.map(|s| s.probes.clone()).unwrap_or_default(),
        },
        hypotheses: session.map(|s| s.hypotheses.clone()).unwrap_or_default(),
        steps: round.map(|r| r.steps.clone()).unwrap_or_default(),
        pending_user_actions: session
            .map(|s| s.pending_requests().into_iter().cloned().collect())
            .unwrap_or_default(),
        evidence_summary: session.map(|s| s.evidence_summary()),
        user_commands: user_commands(state),
        revision,
        warning: None,
    }
}
