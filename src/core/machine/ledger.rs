//! The ledger's transitions: a scan reconciled into the probes the
//! session knows, and logpoints placed and removed (they are in no file,
//! so no scan touches them).

use super::*;

/// Reconcile the ledger with a scan, both ways: ledger probes found on disk are
/// live (with their current line and how they were found), ledger probes no
/// longer found are missing, and probes of this session the ledger did not
/// know are adopted. A lone end marker naming no session counts when the
/// ledger knows its id.
pub(super) fn reconcile(s: &mut DebugSession, report: ScanReport) -> Reconciliation {
    let mut outcome = Reconciliation::default();
    let mut seen = std::collections::HashSet::new();
    let round_index = s.round().index;
    let known: std::collections::HashSet<String> = s.probes.iter().map(|p| p.id.clone()).collect();
    let orphans = report
        .orphans
        .iter()
        .filter(|o| known.contains(&o.id) && !report.found.iter().any(|f| f.id == o.id));
    for found in report.found.iter().chain(orphans) {
        if !seen.insert(found.id.clone()) {
            continue; // a pasted duplicate: the first occurrence locates it
        }
        if s.probes.iter().any(|p| p.id == found.id && p.is_logpoint()) {
            // A block carrying a logpoint's id is not that logpoint; `check`
            // still finds the block by its markers.
            continue;
        }
        s.track(&found.file);
        let trace = found.trace.filter(|t| !t.is_whole());
        match s.probes.iter_mut().find(|p| p.id == found.id) {
            Some(probe) => {
                probe.file = found.file.clone();
                probe.line = Some(found.line);
                probe.state = ProbeState::Live;
                probe.trace = trace;
                if probe.language.is_none() {
                    probe.language = found.language.clone();
                }
            }
            None => {
                s.probes.push(Probe {
                    id: found.id.clone(),
                    kind: ProbeKind::Source,
                    logpoint: None,
                    file: found.file.clone(),
                    line: Some(found.line),
                    round: round_index,
                    hypothesis_id: None,
                    language: found.language.clone(),
                    state: ProbeState::Live,
                    trace,
                });
                s.round_mut().probe_ids.push(found.id.clone());
                outcome.adopted.push(found.id.clone());
                // Keep issued ids unique even when a marker was written by hand.
                if let Some(n) = found
                    .id
                    .strip_prefix('p')
                    .and_then(|n| n.parse::<u32>().ok())
                {
                    s.next_probe = s.next_probe.max(n.saturating_add(1));
                }
            }
        }
    }
    for probe in s.probes.iter_mut().filter(|p| !p.is_logpoint()) {
        if seen.contains(&probe.id) {
            outcome.live.push(probe.id.clone());
        } else if probe.state == ProbeState::Live && report.scope.covers(&probe.file) {
            probe.state = ProbeState::Missing;
            probe.line = None;
            probe.trace = None;
            outcome.missing.push(probe.id.clone());
        }
    }
    outcome
}

/// A logpoint joins the ledger, bounded: its expressions and message are
/// checked, and a session holds at most `MAX_LOGPOINTS` live ones.
pub(super) fn place_logpoint(
    s: &mut DebugSession,
    request: LogpointRequest,
) -> Result<Probe, DomainError> {
    use crate::core::logpoint;
    let file = required_text("file", &request.file)?;
    if request.line == 0 {
        return Err(DomainError::invalid("line", "lines count from 1"));
    }
    let variables = logpoint::checked_expressions(&request.variables)?;
    let message = logpoint::checked_message(request.message.as_deref())?;
    if s.live_logpoints().count() >= logpoint::MAX_LOGPOINTS {
        return Err(DomainError::invalid(
            "kind",
            format!(
                "a session holds at most {} live logpoints; remove one first",
                logpoint::MAX_LOGPOINTS
            ),
        ));
    }
    let id = format!("p{}", s.next_probe);
    s.next_probe = s.next_probe.saturating_add(1);
    let probe = Probe {
        id: id.clone(),
        kind: ProbeKind::Logpoint,
        file,
        line: Some(request.line),
        round: s.round().index,
        hypothesis_id: request.hypothesis_id.filter(|h| !h.trim().is_empty()),
        language: request.language,
        state: ProbeState::Live,
        trace: None,
        logpoint: Some(LogpointSpec {
            variables,
            message,
            line_hash: request.line_hash,
        }),
    };
    s.probes.push(probe.clone());
    s.round_mut().probe_ids.push(id);
    Ok(probe)
}

/// Logpoints leave the ledger: each named id must be a live logpoint of the
/// session. Removed ones stay listed as removed, as a deleted block does.
pub(super) fn remove_logpoints(
    s: &mut DebugSession,
    ids: &[String],
) -> Result<Vec<String>, DomainError> {
    if ids.is_empty() {
        return Err(DomainError::invalid(
            "probeIds",
            "name the logpoints to remove",
        ));
    }
    for id in ids {
        match s.probes.iter().find(|p| &p.id == id) {
            Some(p) if p.is_logpoint() => {}
            Some(_) => {
                return Err(DomainError::invalid(
                    "probeIds",
                    format!(
                        "{} is a source probe: delete its block from the file",
                        crate::core::escape::inline_cut(id, crate::core::budget::ID)
                    ),
                ))
            }
            None => {
                return Err(DomainError::invalid(
                    "probeIds",
                    format!(
                        "{} is not in the ledger",
                        crate::core::escape::inline_cut(id, crate::core::budget::ID)
                    ),
                ))
            }
        }
    }
    let mut removed = Vec::new();
    for probe in s.probes.iter_mut().filter(|p| ids.contains(&p.id)) {
        if probe.state == ProbeState::Live {
            probe.state = ProbeState::Missing;
            removed.push(probe.id.clone());
        }
    }
    Ok(removed)
}
