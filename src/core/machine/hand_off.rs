//! A round's hand-off and what the agent records into it: the plan checked,
//! hypotheses merged, observations and artifacts taken.

use super::super::error::DomainError;
use super::*;

pub(super) fn hand_off(s: &mut DebugSession, input: HandOff) -> Result<HandOffResult, DomainError> {
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
    // Per round (DESIGN section 3): an earlier round's probes still on disk
    // may not be what this round's plan needs. The refusal costs the agent
    // one call inside its own turn, never the person a turn: it is given
    // once per round, and a verification round that means to reuse the
    // earlier probes hands off again.
    if promises_probes
        && s.live_probes_of_this_round().next().is_none()
        && s.round().nudges.probes < MAX_PROBE_REFUSALS
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

pub(super) fn upsert_hypotheses(
    s: &mut DebugSession,
    hypotheses: Vec<Hypothesis>,
) -> Result<(), DomainError> {
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

pub(super) fn record_inputs(
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

pub(super) fn required_text(field: &str, value: &str) -> Result<String, DomainError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    Ok(trimmed.to_string())
}
