use super::{briefing, indented, RenderEnv, HYPOTHESES_TOOL, SNIPPET_TOOL};
use crate::core::escape::{inline, scrub};
use crate::core::model::{DebugSession, EvidenceMethod, ProbeState, Stage};
use crate::core::run_id::compare_run_ids;
use std::fmt::Write;

/// Probes listed before "+N more": the blackboard stays small in long sessions.
pub const MAX_LISTED_PROBES: usize = 12;
/// Most recent runs listed in "Logs by run".
pub const MAX_LISTED_RUNS: usize = 6;

/// The single block of context the model gets every turn while a session is
/// active. Sections in a fixed order so a model learns where to look.
pub fn blackboard(session: &DebugSession, env: &RenderEnv) -> String {
    let round = session.round();
    let mut out = String::new();
    let handoff = match (session.stage, round.handoff) {
        (Stage::UserTurn, Some(mode)) => format!(" · handed off: {}", mode.as_str()),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "[DEBUG MODE · round {} · stage {}{handoff}]",
        round.index,
        session.stage.as_str()
    );
    out.push('\n');
    out.push_str(&briefing(session));
    out.push_str("\n\nProblem:\n");
    out.push_str(&indented(&session.problem, "  "));
    out.push('\n');

    out.push_str("\nHypotheses:\n");
    if session.hypotheses.is_empty() {
        let _ = writeln!(
            out,
            "  none recorded; record 3-5 with {HYPOTHESES_TOOL} or in the hand-off"
        );
    }
    for h in &session.hypotheses {
        let _ = writeln!(
            out,
            "  {} [{}] {}",
            inline(&h.id),
            h.status.as_str(),
            one_line(&h.statement)
        );
        if !h.evidence.is_empty() {
            let _ = writeln!(out, "    evidence: {}", inline(&h.evidence.join(", ")));
        }
    }

    render_probes(&mut out, session);
    render_runs(&mut out, session, env);
    render_plan(&mut out, session);

    let methods: Vec<&str> = EvidenceMethod::PRIORITY
        .iter()
        .map(|m| m.as_str())
        .collect();
    let _ = write!(
        out,
        "\nEvidence methods, least user work first: {}. Ask the user only for what no probe can record.",
        methods.join(" > ")
    );
    // Whatever a field still carried (the problem's own lines are indented).
    scrub(&out)
}

fn render_probes(out: &mut String, session: &DebugSession) {
    out.push_str("\nProbes on disk (ground truth from the last scan):\n");
    let live: Vec<_> = session.live_probes().collect();
    if live.is_empty() {
        out.push_str("  none\n");
    }
    for probe in live.iter().take(MAX_LISTED_PROBES) {
        let hypothesis = inline(probe.hypothesis_id.as_deref().unwrap_or("-"));
        let _ = writeln!(
            out,
            "  {} {} {} (round {})",
            inline(&probe.id),
            hypothesis,
            probe.located(),
            probe.round
        );
    }
    if live.len() > MAX_LISTED_PROBES {
        let _ = writeln!(out, "  +{} more", live.len() - MAX_LISTED_PROBES);
    }
    let issued: Vec<String> = session
        .probes
        .iter()
        .filter(|p| p.state == ProbeState::Issued)
        .map(|p| format!("{} ({})", inline(&p.id), inline(&p.file)))
        .collect();
    if !issued.is_empty() {
        let _ = writeln!(
            out,
            "  Issued, not yet found on disk: {}",
            bounded_list(&issued, MAX_LISTED_PROBES)
        );
    }
    let missing: Vec<String> = session
        .probes
        .iter()
        .filter(|p| p.state == ProbeState::Missing)
        .map(|p| inline(&p.id))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "  Removed since placed: {}",
            bounded_list(&missing, MAX_LISTED_PROBES)
        );
    }
}

fn render_runs(out: &mut String, session: &DebugSession, env: &RenderEnv) {
    let current = session.run_id();
    let _ = writeln!(out, "\nCurrent run: {current}");
    match env.probe_log() {
        Some(path) => {
            let _ = writeln!(
                out,
                "Probe log file (absolute path; always the current run): {path}"
            );
        }
        None => out.push_str("Probe log file: not created yet\n"),
    }
    if let Some(url) = &env.ingest_url {
        let _ = writeln!(out, "Ingest URL (browser JavaScript only): {url}");
    }
    let _ = writeln!(
        out,
        "Probes append one JSON line per event to that file; {SNIPPET_TOOL} returns a ready block for any file."
    );

    out.push_str("\nLogs by run (lines):\n");
    let mut runs: Vec<_> = session.runs.iter().collect();
    runs.sort_by(|a, b| compare_run_ids(&a.id, &b.id));
    let hidden = runs.len().saturating_sub(MAX_LISTED_RUNS);
    if hidden > 0 {
        let _ = writeln!(out, "  +{hidden} earlier");
    }
    for run in runs.into_iter().skip(hidden) {
        let marker = if run.id == current { " (current)" } else { "" };
        let _ = writeln!(out, "  {}: {}{marker}", run.id, run.lines);
    }
}

fn render_plan(out: &mut String, session: &DebugSession) {
    let round = session.round();
    let Some(plan) = round.plan.as_ref().filter(|p| !p.is_empty()) else {
        let _ = writeln!(out, "\nEvidence plan, round {}: none yet", round.index);
        return;
    };
    let pending: Vec<&str> = session
        .pending_requests()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    let _ = writeln!(out, "\nEvidence plan, round {}:", round.index);
    for request in plan {
        let flag = if pending.contains(&request.id.as_str()) {
            " [pending]"
        } else {
            ""
        };
        let hint = request
            .artifact_hint
            .as_deref()
            .map(|h| format!(" (expects {h})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {}{flag}{hint}: {}",
            inline(&request.id),
            request.method.as_str(),
            one_line(&request.instructions.join("; "))
        );
    }
    if pending.is_empty() {
        out.push_str("Pending from the user: nothing\n");
    } else {
        let _ = writeln!(
            out,
            "Pending from the user: {}",
            inline(&pending.join(", "))
        );
    }
    let _ = writeln!(out, "Evidence so far: {}", session.evidence_summary());
}

fn bounded_list(items: &[String], max: usize) -> String {
    let mut shown = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        let _ = write!(shown, ", +{} more", items.len() - max);
    }
    shown
}

/// Model-authored text on one line, so it cannot fake a section of its own.
fn one_line(text: &str) -> String {
    inline(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}
