//! What the agent's tools answer (the MCP face today; every face that
//! offers the tools shares it): the text the model reads, held to the
//! context budget (`core::budget`). Text
//! from the workspace and the program under debug is escaped and fenced
//! here, once, so no face can forget it.

use super::{LogsAnswer, ProbeLedger};
use crate::core::budget::{self, cut, ID, LEDGER_ROWS, LOCATION, STATEMENT};
use crate::core::escape::{fence_within, inline_cut};
use crate::core::model::Hypothesis;
use crate::workspace::logread::LogSummary;
use std::fmt::Write;

/// A tool's text at the tool-result cap, with `hint` saying how to read on.
fn capped(text: String, hint: &str) -> String {
    budget::fit(text, budget::TOOL_RESULT, hint)
}

/// `probe_ledger`: one row per probe, foreign probe and half-removed marker.
pub fn ledger(ledger: &ProbeLedger) -> String {
    let mut rows: Vec<String> = ledger
        .probes
        .iter()
        .map(|probe| {
            let records = probe
                .logpoint
                .as_ref()
                .map(|l| format!(" records {}", cut(&l.variables.join(", "), LOCATION)))
                .unwrap_or_default();
            let state = match (probe.is_logpoint(), probe.state) {
                (true, crate::core::model::ProbeState::Missing) => "removed",
                (_, state) => state.as_str(),
            };
            format!(
                "{} {state} {}{records}",
                inline_cut(&probe.id, ID),
                cut(&probe.located(), LOCATION)
            )
        })
        .collect();
    rows.extend(ledger.foreign.iter().map(|f| {
        format!(
            "foreign {}:{} {}",
            inline_cut(&f.file, LOCATION),
            f.line,
            f.kind.describe()
        )
    }));
    rows.extend(ledger.half_removed.iter().map(|h| {
        format!(
            "half-removed {}:{} {}",
            inline_cut(&h.file, LOCATION),
            h.line,
            inline_cut(&h.probe_id, ID)
        )
    }));
    let text = if rows.is_empty() {
        "No probes.".to_string()
    } else {
        let mut text = rows
            .iter()
            .take(LEDGER_ROWS)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if rows.len() > LEDGER_ROWS {
            let _ = write!(
                text,
                "\n+{} more (`debug-sidecar check` lists every one)",
                rows.len() - LEDGER_ROWS
            );
        }
        text
    };
    capped(text, "`debug-sidecar check` lists every one.")
}

/// The fenced body of a tool result: what the cap leaves after its label,
/// fences and notes, so a cut takes content and never the closing fence.
const FENCED_BODY: usize = budget::TOOL_RESULT - 3 * 1024;

/// `read_logs`: one page of a run's lines, fenced as data; lines too long
/// for the page are named with where to find them.
pub fn logs(answer: &LogsAnswer) -> String {
    let page = &answer.page;
    // Numbered, so evidence can cite a line (`r1-x:12`) and the fix
    // certificate can find it again.
    let body: Vec<String> = page
        .entries
        .iter()
        .map(|e| format!("{}: {}", e.line, e.entry))
        .collect();
    let mut text = String::new();
    if let Some(note) = &answer.target.note {
        text.push_str(&inline_cut(note, LOCATION * 2));
        text.push('\n');
    }
    let run = inline_cut(answer.target.run.as_deref().unwrap_or("-"), ID);
    text.push_str(&fence_within(
        &format!(
            "Run {run} ({} line(s) in the file; {} shown, each after its line number: cite \
             one as {run}:<line>)",
            answer.total,
            body.len()
        ),
        "text",
        &body.join("\n"),
        FENCED_BODY,
    ));
    if let Some(cursor) = &page.next_cursor {
        let _ = write!(text, "\nMore: call read_logs with cursor {cursor:?}.");
    }
    if !page.oversized.is_empty() {
        let _ = write!(
            text,
            "\nLine(s) {} are longer than this page's byte cap and were skipped; they are in {}.",
            listed_numbers(&page.oversized),
            inline_cut(&answer.target.file.to_string_lossy(), LOCATION * 2)
        );
    }
    if page.malformed.count > 0 {
        let _ = write!(
            text,
            "\n{} malformed line(s): {}",
            page.malformed.count,
            listed_numbers(&page.malformed.lines)
        );
    }
    capped(text, "Call read_logs with a smaller `limit` or a filter.")
}

/// `log_summary`: per probe, its count, timestamps and a few values.
pub fn summary(run: Option<&str>, summary: &LogSummary) -> String {
    let mut lines: Vec<String> = Vec::new();
    // The person's marks (their words are untrusted: a page posts them too)
    // go inside the fence, after the probes, with room kept for them.
    let mut marks: Vec<String> = summary.describe_marks().into_iter().collect();
    if let Some(around) = &summary.around_mark {
        marks.extend(around.describe());
    }
    let mut used = marks.iter().map(|m| m.len() + 1).sum::<usize>();
    let mut listed = 0;
    // As many probes as the cap has room for: those with no value first
    // (why is the finding), then the first seen first.
    let mut probes: Vec<&crate::workspace::logread::ProbeFigures> = summary.probes.iter().collect();
    probes.sort_by_key(|p| p.hits > 0);
    for probe in probes {
        let line = probe.describe();
        used += line.len() + 1;
        if used > budget::TOOL_RESULT - 1024 {
            break;
        }
        lines.push(line);
        listed += 1;
    }
    let hidden = (summary.probes.len() - listed) as u64 + summary.unlisted_probes;
    lines.extend(marks);
    let run = inline_cut(run.unwrap_or("-"), ID);
    let sources = summary
        .describe_sources()
        .map(|s| format!("; by source: {s}"))
        .unwrap_or_default();
    // Our count of the run's exit records: outside the fence.
    let rate = summary
        .attempts
        .filter(|a| a.total > 1)
        .map(|a| format!("; the reproduction {}", a.describe()))
        .unwrap_or_default();
    let mut text = fence_within(
        &format!(
            "Summary of run {run} ({} line(s), {} without a probe id{sources}{rate})",
            summary.lines, summary.without_probe
        ),
        "text",
        &lines.join("\n"),
        FENCED_BODY,
    );
    if hidden > 0 {
        let _ = write!(
            text,
            "\n+{hidden} more probe(s) not summarised here: read_logs with `probe` reads any one."
        );
    }
    if !summary.marks.is_empty() {
        text.push_str(
            "\nThe person marked moments of this run (their marks, by line, above): read_logs \
             with `afterLine` and `beforeLine` reads what came before and after one.",
        );
    }
    if summary.too_long > 0 {
        let _ = write!(
            text,
            "\n{} line(s) over 4 MiB were counted from their first fields, their values not read.",
            summary.too_long
        );
    }
    if summary.malformed.count > 0 {
        let _ = write!(
            text,
            "\n{} malformed line(s): {}",
            summary.malformed.count,
            listed_numbers(&summary.malformed.lines)
        );
    }
    capped(text, "read_logs with `probe` reads any one probe.")
}

/// `record_hypotheses`: the session's hypotheses after the change.
pub fn hypotheses(all: &[Hypothesis]) -> String {
    let mut text = String::from("Hypotheses recorded:");
    for h in all.iter().take(budget::LISTED_HYPOTHESES) {
        let _ = write!(
            text,
            "\n{} [{}] {}",
            inline_cut(&h.id, ID),
            h.status.as_str(),
            inline_cut(&h.statement, STATEMENT)
        );
    }
    if all.len() > budget::LISTED_HYPOTHESES {
        let _ = write!(text, "\n+{} more", all.len() - budget::LISTED_HYPOTHESES);
    }
    capped(text, "")
}

/// Line numbers as `3, 9, 12`.
fn listed_numbers(numbers: &[u64]) -> String {
    numbers
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
