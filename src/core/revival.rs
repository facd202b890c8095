//! Persisted state and its revival (DESIGN section 3). Revival reads any shape
//! this project or its ancestors ever wrote, repairs what is damaged and never
//! fails: a user must always be able to act on a restored session. `revive`
//! is for a restart (no agent turn survives one); `load_live` is for handing
//! state between processes that serve the same running turn.

use super::model::*;
use super::run_id::{compare_run_ids, parse_run_id, run_id};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The persisted shape: `{version, active, ...session}`.
pub fn persist(state: &DebugState) -> Value {
    #[derive(Serialize)]
    struct Persisted<'a> {
        version: u32,
        active: bool,
        #[serde(flatten)]
        session: Option<&'a DebugSession>,
    }
    let persisted = Persisted {
        version: STATE_VERSION,
        active: state.session().is_some(),
        session: state.session(),
    };
    serde_json::to_value(persisted)
        .unwrap_or_else(|_| json!({"version": STATE_VERSION, "active": false}))
}

/// Load a state that a live process wrote, for the next command on the same
/// agent turn (another face, a hook call). The current shape decodes exactly,
/// latches included, because the agent turn they belong to is still running;
/// anything older or damaged goes through `revive`.
pub fn load_live(data: &Value) -> DebugState {
    let current = data.get("version").and_then(Value::as_u64) == Some(u64::from(STATE_VERSION));
    if !current || data.get("active").and_then(Value::as_bool) != Some(true) {
        return revive(data);
    }
    match serde_json::from_value::<DebugSession>(data.clone()) {
        Ok(session) if is_consistent(&session) => DebugState::Active(Box::new(session)),
        _ => revive(data),
    }
}

/// The invariants the machine relies on, which a hand-edited file may break.
fn is_consistent(session: &DebugSession) -> bool {
    let Some(round) = session.rounds.last() else {
        return false;
    };
    let mut ids = HashSet::new();
    session.probes.iter().all(|p| ids.insert(p.id.as_str()))
        && session
            .probes
            .iter()
            .all(|p| p.is_logpoint() == p.logpoint.is_some())
        && session.runs.iter().any(|r| r.id == round.run_id)
        && (session.stage == Stage::UserTurn) == round.handoff.is_some()
}

/// Legacy `stage` names and the hand-off each implied.
const LEGACY_STAGES: &[(&str, Option<HandoffMode>)] = &[
    ("open", None),
    ("awaiting_evidence", Some(HandoffMode::Reproduce)),
];

/// Legacy hand-off reasons mapped onto the mode that carries the same guidance.
const LEGACY_HANDOFFS: &[(&str, HandoffMode)] = &[
    ("awaiting_reply", HandoffMode::Question),
    ("probes_missing", HandoffMode::Incomplete),
    ("unclosed", HandoffMode::Incomplete),
];

/// Rebuild a state from whatever was on disk.
pub fn revive(data: &Value) -> DebugState {
    let record = obj(data);
    if record.get("active").and_then(Value::as_bool) != Some(true) {
        return DebugState::Inactive;
    }
    let (stage, implied_handoff) = revive_stage(record);
    let probes = revive_probes(record.get("probes"));
    let started_at = num(record.get("startedAt")).unwrap_or(0);

    let mut rounds: Vec<Round> = match record.get("rounds").and_then(Value::as_array) {
        Some(rounds) => rounds
            .iter()
            .enumerate()
            .map(|(i, r)| revive_round(r, i as u32 + 1, started_at))
            .collect(),
        None => vec![legacy_round(record, &probes, started_at)],
    };
    if rounds.is_empty() {
        rounds.push(Round::new(1, run_id(1, started_at)));
    }
    if let Some(last) = rounds.last_mut() {
        if stage == Stage::UserTurn && last.handoff.is_none() {
            last.handoff = Some(implied_handoff.unwrap_or(HandoffMode::Incomplete));
        }
        if stage != Stage::UserTurn {
            last.handoff = None;
        }
    }

    let runs = revive_runs(record, &rounds);
    let next_probe = num(record.get("nextProbe"))
        .map(|n| n as u32)
        .unwrap_or(1)
        .max(
            probes
                .iter()
                .filter_map(|p| p.id.strip_prefix('p')?.parse::<u32>().ok())
                .max()
                .map_or(1, |n| n.saturating_add(1)),
        );

    DebugState::Active(Box::new(DebugSession {
        stage,
        problem: text(record.get("problem")).unwrap_or_default(),
        rounds,
        probes,
        runs,
        hypotheses: revive_hypotheses(record.get("hypotheses")),
        observations: revive_observations(
            record
                .get("observations")
                .or_else(|| record.get("evidenceObservations")),
        ),
        artifacts: revive_artifacts(
            record
                .get("artifacts")
                .or_else(|| record.get("evidenceArtifacts")),
        ),
        tracked_files: {
            let mut files: Vec<String> = record
                .get("trackedFiles")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect();
            files.sort();
            files.dedup();
            files
        },
        next_probe,
        cleanup_nudges: num(record.get("cleanupNudges")).unwrap_or(0) as u32,
        // Transient latches: no agent turn survives a restart.
        turn_produced: false,
        user_spoke: false,
        started_at,
        updated_at: num(record.get("updatedAt")).unwrap_or(started_at),
    }))
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

fn obj(value: &Value) -> &Map<String, Value> {
    value
        .as_object()
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

fn num(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64)
    })
}

fn small(value: Option<&Value>) -> Option<u32> {
    num(value).map(|n| n.min(u32::MAX as u64) as u32)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn items(value: Option<&Value>) -> impl Iterator<Item = &Map<String, Value>> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// A persisted `investigating` becomes `user_turn` (no agent turn survives a
/// restart), and so does anything unrecognised.
fn revive_stage(record: &Map<String, Value>) -> (Stage, Option<HandoffMode>) {
    let raw = match record.get("stage").and_then(Value::as_str) {
        Some(stage) => stage.to_string(),
        None => legacy_phase(record.get("phase")).to_string(),
    };
    if let Some((_, handoff)) = LEGACY_STAGES.iter().find(|(name, _)| *name == raw) {
        return (Stage::UserTurn, *handoff);
    }
    match raw.as_str() {
        "cleaning_up" => (Stage::CleaningUp, None),
        _ => (Stage::UserTurn, None),
    }
}

/// The original `phase` field, collapsed onto the stage name it became.
fn legacy_phase(phase: Option<&Value>) -> &'static str {
    match phase.and_then(Value::as_str) {
        Some("waiting") => "awaiting_evidence",
        Some("cleanup") => "cleaning_up",
        _ => "open",
    }
}

fn revive_handoff(value: Option<&Value>) -> Option<HandoffMode> {
    let raw = value?.as_str()?;
    HandoffMode::ALL
        .into_iter()
        .find(|m| m.as_str() == raw)
        .or_else(|| {
            LEGACY_HANDOFFS
                .iter()
                .find(|(name, _)| *name == raw)
                .map(|(_, mode)| *mode)
        })
}

fn revive_round(value: &Value, fallback_index: u32, started_at: u64) -> Round {
    let r = obj(value);
    let index = small(r.get("index"))
        .filter(|i| *i > 0)
        .unwrap_or(fallback_index);
    let nudges = obj(r.get("nudges").unwrap_or(&Value::Null));
    Round {
        index,
        run_id: text(r.get("runId")).unwrap_or_else(|| run_id(index, started_at)),
        plan: r
            .get("plan")
            .and_then(Value::as_array)
            .map(|_| revive_plan(r.get("plan"))),
        steps: strings(r.get("steps").or_else(|| r.get("reproductionSteps"))),
        probe_ids: strings(r.get("probeIds")),
        nudges: NudgeBudget {
            // `tags` is the budget's name from before the hand-off tool existed.
            handoff: small(nudges.get("handoff").or_else(|| nudges.get("tags"))).unwrap_or(0),
            probes: small(nudges.get("probes")).unwrap_or(0),
        },
        awaiting_progress: false,
        handoff: revive_handoff(r.get("handoff").or_else(|| r.get("openReason"))),
        message: text(r.get("message")),
    }
}

/// The pre-rounds flat layout described exactly one round.
fn legacy_round(record: &Map<String, Value>, probes: &[Probe], started_at: u64) -> Round {
    let index = small(record.get("round")).filter(|i| *i > 0).unwrap_or(1);
    let requests: Vec<Value> = record
        .get("evidenceRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| small(r.get("round")).is_none_or(|round| round == index))
        .cloned()
        .collect();
    let plan = revive_plan(Some(&Value::Array(requests)));
    Round {
        index,
        run_id: text(record.get("runId")).unwrap_or_else(|| run_id(index, started_at)),
        plan: (!plan.is_empty()).then_some(plan),
        steps: strings(record.get("reproductionSteps")),
        probe_ids: probes
            .iter()
            .filter(|p| p.round == index)
            .map(|p| p.id.clone())
            .collect(),
        nudges: NudgeBudget {
            handoff: small(record.get("gateNudges")).unwrap_or(0),
            probes: 0,
        },
        awaiting_progress: false,
        handoff: None,
        message: None,
    }
}

fn revive_plan(value: Option<&Value>) -> Vec<EvidenceRequest> {
    let mut seen = HashSet::new();
    items(value)
        .filter_map(|r| {
            let id = text(r.get("id"))?;
            let method = match r.get("method").and_then(Value::as_str)? {
                "agent_inspection" => EvidenceMethod::AgentInspection,
                "runtime_probe" => EvidenceMethod::RuntimeProbe,
                "user_report" => EvidenceMethod::UserReport,
                "user_artifact" => EvidenceMethod::UserArtifact,
                _ => return None,
            };
            seen.insert(id.clone()).then(|| EvidenceRequest {
                id,
                method,
                instructions: strings(r.get("instructions")),
                artifact_hint: text(r.get("artifactHint")),
            })
        })
        .collect()
}

fn revive_probes(value: Option<&Value>) -> Vec<Probe> {
    let mut seen = HashSet::new();
    items(value)
        .filter_map(|p| {
            let id = text(p.get("id")).filter(|id| !id.is_empty())?;
            if !seen.insert(id.clone()) {
                return None;
            }
            let state = match p.get("state").and_then(Value::as_str) {
                Some("issued") => ProbeState::Issued,
                Some("missing") => ProbeState::Missing,
                // Older ledgers only held probes believed to be on disk.
                _ => ProbeState::Live,
            };
            let kind = match p.get("kind").and_then(Value::as_str) {
                Some("logpoint") => ProbeKind::Logpoint,
                _ => ProbeKind::Source,
            };
            // A logpoint is its spec: one without a usable spec, or with
            // more than `run` would set, is not revived.
            let logpoint = match kind {
                ProbeKind::Logpoint => Some(revive_logpoint(p.get("logpoint"))?),
                ProbeKind::Source => None,
            };
            let line = small(p.get("line"));
            if kind == ProbeKind::Logpoint && line.filter(|l| *l > 0).is_none() {
                return None;
            }
            Some(Probe {
                id,
                kind,
                logpoint,
                file: text(p.get("file")).unwrap_or_default(),
                line,
                round: small(p.get("round")).filter(|r| *r > 0).unwrap_or(1),
                hypothesis_id: text(p.get("hypothesisId")),
                language: text(p.get("language")),
                state,
                trace: p
                    .get("trace")
                    .and_then(|t| serde_json::from_value(t.clone()).ok()),
            })
        })
        .collect()
}

fn revive_logpoint(value: Option<&Value>) -> Option<LogpointSpec> {
    use super::logpoint::{checked_expressions, checked_message};
    let spec = value?;
    let variables: Vec<String> = spec
        .get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    Some(LogpointSpec {
        variables: checked_expressions(&variables).ok()?,
        message: checked_message(spec.get("message").and_then(Value::as_str)).ok()?,
        line_hash: text(spec.get("lineHash")).unwrap_or_default(),
    })
}

/// Runs from `runs`, or from the legacy `runHistory` + `logCounts`; every
/// round's run is present, in run order.
fn revive_runs(record: &Map<String, Value>, rounds: &[Round]) -> Vec<Run> {
    let counts = obj(record.get("logCounts").unwrap_or(&Value::Null));
    let mut runs: Vec<Run> = match record.get("runs").and_then(Value::as_array) {
        Some(_) => items(record.get("runs"))
            .filter_map(|r| {
                let id = text(r.get("id"))?;
                Some(Run {
                    round: small(r.get("round"))
                        .or_else(|| parse_run_id(&id).map(|(round, _)| round))
                        .unwrap_or(1),
                    lines: num(r.get("lines")).unwrap_or(0),
                    agent: r.get("agent").and_then(Value::as_bool).unwrap_or(false),
                    id,
                })
            })
            .collect(),
        None => strings(record.get("runHistory"))
            .into_iter()
            .map(|id| Run {
                round: parse_run_id(&id).map_or(1, |(round, _)| round),
                lines: num(counts.get(&id)).unwrap_or(0),
                agent: false,
                id,
            })
            .collect(),
    };
    for round in rounds {
        if !runs.iter().any(|r| r.id == round.run_id) {
            runs.push(Run {
                id: round.run_id.clone(),
                round: round.index,
                lines: num(counts.get(&round.run_id)).unwrap_or(0),
                agent: false,
            });
        }
    }
    let mut seen = HashSet::new();
    runs.retain(|r| seen.insert(r.id.clone()));
    runs.sort_by(|a, b| compare_run_ids(&a.id, &b.id));
    runs
}

fn revive_hypotheses(value: Option<&Value>) -> Vec<Hypothesis> {
    let mut seen = HashSet::new();
    items(value)
        .filter_map(|h| {
            let id = text(h.get("id"))?;
            let statement = text(h.get("statement"))?;
            let status = match h.get("status").and_then(Value::as_str) {
                Some("confirmed") => HypothesisStatus::Confirmed,
                Some("rejected") => HypothesisStatus::Rejected,
                Some("inconclusive") => HypothesisStatus::Inconclusive,
                _ => HypothesisStatus::Open,
            };
            seen.insert(id.clone()).then(|| Hypothesis {
                id,
                statement,
                status,
                evidence: strings(h.get("evidence")),
            })
        })
        .collect()
}

fn revive_observations(value: Option<&Value>) -> Vec<Observation> {
    items(value)
        .filter_map(|o| {
            Some(Observation {
                text: text(o.get("text"))?,
                request_ids: strings(o.get("requestIds")),
                round: small(o.get("round")).unwrap_or(1),
                added_at: num(o.get("addedAt")).unwrap_or(0),
            })
        })
        .collect()
}

fn revive_artifacts(value: Option<&Value>) -> Vec<Artifact> {
    items(value)
        .filter_map(|a| {
            Some(Artifact {
                path: text(a.get("path"))?,
                request_id: text(a.get("requestId")),
                kind: text(a.get("kind")),
                round: small(a.get("round")).unwrap_or(1),
                added_at: num(a.get("addedAt")).unwrap_or(0),
            })
        })
        .collect()
}
