use super::{briefing, indented, quoted, RenderEnv, HYPOTHESES_TOOL, SNIPPET_TOOL};
use crate::core::budget::{self, cut, BOARD_ID, BOARD_LOCATION};
use crate::core::escape::{inline_cut, scrub};
use crate::core::model::{
    DebugSession, EvidenceMethod, Hypothesis, HypothesisStatus, ProbeState, Stage,
};
use crate::core::run_id::compare_run_ids;
use std::fmt::Write;

/// Probes listed before "+N more": the blackboard stays small in long sessions.
pub const MAX_LISTED_PROBES: usize = 12;
/// Most recent runs listed in "Logs by run".
pub const MAX_LISTED_RUNS: usize = 6;

/// The single block of context the model gets every turn while a session is
/// active. Sections in a fixed order so a model learns where to look; every
/// field and list is cut to its share of the 4 KB budget (`core::budget`),
/// and the whole is held to it whatever the fields carried.
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
    out.push_str(&briefing(session, env.host));
    out.push_str("\n\nProblem:\n");
    out.push_str(&indented(
        &quoted(&session.problem, budget::BOARD_PROBLEM, 8),
        "  ",
    ));
    out.push('\n');

    render_hypotheses(&mut out, session);

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
        methods.join(", ")
    );
    if let Some(line) = env.tools.tools_line() {
        out.push('\n');
        out.push_str(line);
    }
    // Whatever a field still carried (the problem's own lines are indented).
    budget::fit(
        scrub(&out),
        budget::BLACKBOARD,
        "probe_ledger, read_logs and record_hypotheses list everything.",
    )
}

fn render_hypotheses(out: &mut String, session: &DebugSession) {
    out.push_str("\nHypotheses:\n");
    if session.hypotheses.is_empty() {
        let _ = writeln!(
            out,
            "  none recorded; record 3-5 with {HYPOTHESES_TOOL} or in the hand-off"
        );
    }
    let listed = listed_hypotheses(&session.hypotheses, budget::BOARD_HYPOTHESES);
    let entries: Vec<String> = listed
        .iter()
        .map(|h| {
            let mut entry = format!(
                "  {} [{}] {}\n",
                inline_cut(&h.id, BOARD_ID),
                h.status.as_str(),
                one_line(&h.statement, budget::BOARD_STATEMENT)
            );
            if !h.evidence.is_empty() {
                let evidence = inline_cut(&h.evidence.join(", "), budget::BOARD_EVIDENCE);
                let _ = writeln!(entry, "    evidence: {evidence}");
            }
            entry
        })
        .collect();
    let hidden = session.hypotheses.len() - listed.len();
    section(out, &entries, hidden, budget::BOARD_HYPOTHESES_BYTES, |n| {
        format!("  +{n} more ({HYPOTHESES_TOOL} lists them all)\n")
    });
}

/// Entries of one section while they fit `bytes`, then one line saying how
/// many were left out (`hidden` already left out before, plus those cut
/// here): a section never takes more than its share of the blackboard.
fn section(
    out: &mut String,
    entries: &[String],
    hidden: usize,
    bytes: usize,
    more: impl Fn(usize) -> String,
) {
    let mut used = 0;
    let mut shown = 0;
    for entry in entries {
        if used + entry.len() > bytes {
            break;
        }
        used += entry.len();
        shown += 1;
    }
    for entry in &entries[..shown] {
        out.push_str(entry);
    }
    let left = hidden + entries.len() - shown;
    if left > 0 {
        out.push_str(&more(left));
    }
}

/// The hypotheses worth the model's attention when there are too many to
/// list: confirmed, then open, then inconclusive, then rejected, the latest
/// first within each; shown in the order they were recorded.
pub(super) fn listed_hypotheses(all: &[Hypothesis], max: usize) -> Vec<&Hypothesis> {
    if all.len() <= max {
        return all.iter().collect();
    }
    let rank = |status: HypothesisStatus| match status {
        HypothesisStatus::Confirmed => 0,
        HypothesisStatus::Open => 1,
        HypothesisStatus::Inconclusive => 2,
        HypothesisStatus::Rejected => 3,
    };
    let mut chosen: Vec<usize> = (0..all.len()).collect();
    chosen.sort_by_key(|&i| (rank(all[i].status), std::cmp::Reverse(i)));
    chosen.truncate(max);
    chosen.sort_unstable();
    chosen.into_iter().map(|i| &all[i]).collect()
}

fn render_probes(out: &mut String, session: &DebugSession) {
    out.push_str("\nProbes on disk (ground truth from the last scan):\n");
    let live: Vec<_> = session.live_probes().collect();
    if live.is_empty() {
        out.push_str("  none\n");
    }
    let mut entries: Vec<String> = live
        .iter()
        .take(MAX_LISTED_PROBES)
        .map(|probe| {
            format!(
                "  {} {} {} (round {})\n",
                inline_cut(&probe.id, BOARD_ID),
                inline_cut(probe.hypothesis_id.as_deref().unwrap_or("-"), BOARD_ID),
                cut(&probe.located(), BOARD_LOCATION),
                probe.round
            )
        })
        .collect();
    let hidden = live.len().saturating_sub(MAX_LISTED_PROBES);
    let issued: Vec<String> = session
        .probes
        .iter()
        .filter(|p| p.state == ProbeState::Issued)
        .map(|p| {
            let file = inline_cut(&p.file, BOARD_LOCATION);
            format!("{} ({file})", inline_cut(&p.id, BOARD_ID))
        })
        .collect();
    if !issued.is_empty() {
        entries.push(format!(
            "  Issued, not yet found on disk: {}\n",
            bounded_list(&issued, 4)
        ));
    }
    let missing: Vec<String> = session
        .probes
        .iter()
        .filter(|p| p.state == ProbeState::Missing)
        .map(|p| inline_cut(&p.id, BOARD_ID))
        .collect();
    if !missing.is_empty() {
        entries.push(format!(
            "  Removed since placed: {}\n",
            bounded_list(&missing, MAX_LISTED_PROBES)
        ));
    }
    section(out, &entries, hidden, budget::BOARD_PROBES_BYTES, |n| {
        format!("  +{n} more (probe_ledger lists them all)\n")
    });
}

fn render_runs(out: &mut String, session: &DebugSession, env: &RenderEnv) {
    let current = session.run_id();
    let _ = writeln!(out, "\nCurrent run: {}", inline_cut(current, BOARD_ID));
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
        let _ = writeln!(
            out,
            "Ingest URL (for blocks that post: page code, Deno's): {url}"
        );
        if env.ingest_refused > 0 {
            let _ = writeln!(
                out,
                "The ingest server was full and refused {} connection(s) (503): lines posted then may be missing.",
                env.ingest_refused
            );
        }
    }
    for (target, listening) in &env.listeners {
        let _ = writeln!(
            out,
            "Listening for target `{}` ({}) on {}, until this session ends: blocks placed with that target post there.",
            target.name(),
            target.audience(),
            inline_cut(listening, BOARD_ID)
        );
    }
    let _ = writeln!(
        out,
        "Probes append one JSON line per event to that file; {SNIPPET_TOOL} returns a ready block for any file, or places a logpoint (Python, or JavaScript run by Node) that `debug-sidecar run` sets."
    );

    if env.redacted > 0 {
        let _ = writeln!(
            out,
            "Secrets redacted in this run: {} value(s), shown as [redacted:<kind>#<hash>] (equal values, equal hashes).",
            env.redacted
        );
    }
    out.push_str("\nLogs by run (lines):\n");
    let mut runs: Vec<_> = session.runs.iter().collect();
    runs.sort_by(|a, b| compare_run_ids(&a.id, &b.id));
    let hidden = runs.len().saturating_sub(MAX_LISTED_RUNS);
    if hidden > 0 {
        let _ = writeln!(out, "  +{hidden} earlier");
    }
    for run in runs.into_iter().skip(hidden) {
        let marker = if run.id == current {
            " (current)"
        } else if run.agent {
            " (agent run)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {}: {}{marker}",
            inline_cut(&run.id, BOARD_ID),
            run.lines
        );
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
    let entries: Vec<String> = plan
        .iter()
        .map(|request| {
            let flag = if pending.contains(&request.id.as_str()) {
                " [pending]"
            } else {
                ""
            };
            let hint = request
                .artifact_hint
                .as_deref()
                .map(|h| format!(" (expects {})", inline_cut(h, BOARD_ID)))
                .unwrap_or_default();
            format!(
                "  {} {}{flag}{hint}: {}\n",
                inline_cut(&request.id, BOARD_ID),
                request.method.as_str(),
                one_line(&request.instructions.join("; "), budget::BOARD_INSTRUCTIONS)
            )
        })
        .collect();
    section(out, &entries, 0, budget::BOARD_PLAN_BYTES, |n| {
        format!("  +{n} more\n")
    });
    if pending.is_empty() {
        out.push_str("Pending from the user: nothing\n");
    } else {
        let pending: Vec<String> = pending.iter().map(|id| inline_cut(id, BOARD_ID)).collect();
        let _ = writeln!(out, "Pending from the user: {}", bounded_list(&pending, 4));
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

/// Model-authored text on one line, so it cannot fake a section of its own,
/// cut to `max` bytes.
fn one_line(text: &str, max: usize) -> String {
    // Only what can be shown is looked at: a huge statement costs no more.
    let window = budget::head(text, max.saturating_mul(4));
    let words = window.split_whitespace().collect::<Vec<_>>().join(" ");
    if window.len() == text.len() {
        inline_cut(&words, max)
    } else {
        inline_cut(&format!("{words} …"), max)
    }
}
