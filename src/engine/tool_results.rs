//! What the agent's tools answer (the MCP face today; every face that
//! offers the tools shares it): the text the model reads and the structured
//! state beside it, both held to the context budget (`core::budget`). Text
//! from the workspace and the program under debug is escaped and fenced
//! here, once, so no face can forget it.

use super::{LogsAnswer, ProbeLedger};
use crate::core::budget::{self, cut, ID, LEDGER_ROWS, LOCATION, STATEMENT};
use crate::core::escape::{fence, inline_cut};
use crate::core::snapshot::Snapshot;
use crate::workspace::logread::LogSummary;
use serde_json::{json, Value};
use std::fmt::Write;

/// A tool's answer: the text for the model and the state beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    pub text: String,
    pub structured: Value,
}

impl ToolAnswer {
    /// Both parts within the budget: the text at the tool-result cap (with
    /// `hint` saying how to read on), the structured part never bigger than
    /// the text.
    pub fn fitted(text: String, structured: Value, hint: &str) -> Self {
        let text = budget::fit(text, budget::TOOL_RESULT, hint);
        let structured = budget::fit_structured(&text, structured);
        ToolAnswer { text, structured }
    }
}

/// `probe_ledger`: one row per probe, foreign probe and half-removed marker.
pub fn ledger(ledger: &ProbeLedger) -> ToolAnswer {
    let mut rows: Vec<String> = ledger
        .probes
        .iter()
        .map(|probe| {
            format!(
                "{} {} {}",
                inline_cut(&probe.id, ID),
                probe.state.as_str(),
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
    let listed = |n: usize| n.min(LEDGER_ROWS);
    ToolAnswer::fitted(
        text,
        json!({"probes": &ledger.probes[..listed(ledger.probes.len())], "live": ledger.live,
               "missing": ledger.missing, "untracked": ledger.untracked,
               "foreign": &ledger.foreign[..listed(ledger.foreign.len())],
               "halfRemoved": &ledger.half_removed[..listed(ledger.half_removed.len())]}),
        "`debug-sidecar check` lists every one.",
    )
}

/// `read_logs`: one page of a run's lines, fenced as data; lines too long
/// for the page are named with where to find them.
pub fn logs(answer: &LogsAnswer) -> ToolAnswer {
    let page = &answer.page;
    let body: Vec<String> = page.entries.iter().map(|e| e.entry.to_string()).collect();
    let mut text = String::new();
    if let Some(note) = &answer.target.note {
        text.push_str(&inline_cut(note, LOCATION * 2));
        text.push('\n');
    }
    let run = inline_cut(answer.target.run.as_deref().unwrap_or("-"), ID);
    text.push_str(&fence(
        &format!(
            "Run {run} ({} line(s) in the file; {} shown)",
            answer.total,
            body.len()
        ),
        "jsonl",
        &body.join("\n"),
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
    ToolAnswer::fitted(
        text,
        json!({"run": answer.target.run, "entries": page.entries, "nextCursor": page.next_cursor,
               "total": answer.total, "malformed": page.malformed, "oversized": page.oversized}),
        "Call read_logs with a smaller `limit` or a filter.",
    )
}

/// `log_summary`: per probe, its count, timestamps and a few values.
pub fn summary(run: Option<&str>, note: Option<&str>, summary: &LogSummary) -> ToolAnswer {
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    let mut listed = 0;
    // As many probes as the cap has room for, the first seen first.
    for probe in &summary.probes {
        let line = probe.describe();
        used += line.len() + 1;
        if used > budget::TOOL_RESULT - 1024 {
            break;
        }
        lines.push(line);
        listed += 1;
    }
    let hidden = (summary.probes.len() - listed) as u64 + summary.unlisted_probes;
    let run = inline_cut(run.unwrap_or("-"), ID);
    let mut text = fence(
        &format!(
            "Summary of run {run} ({} line(s), {} without a probe id)",
            summary.lines, summary.without_probe
        ),
        "text",
        &lines.join("\n"),
    );
    if hidden > 0 {
        let _ = write!(
            text,
            "\n+{hidden} more probe(s) not summarised here: read_logs with `probe` reads any one."
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
    let text = budget::fit(
        text,
        budget::TOOL_RESULT,
        "read_logs with `probe` reads any one probe.",
    );
    // The structured figures keep as many probes as fit beside the text,
    // rather than losing the whole summary to the size rule.
    let room = serde_json::to_vec(&text)
        .map_or(text.len(), |v| v.len())
        .max(budget::STRUCTURED_FLOOR);
    let mut shown = summary.clone();
    shown.probes.truncate(listed);
    let structured = |shown: &LogSummary| json!({"run": run, "summary": shown, "note": note});
    while !shown.probes.is_empty()
        && serde_json::to_vec(&structured(&shown)).map_or(0, |v| v.len()) > room
    {
        shown.probes.truncate(shown.probes.len() * 3 / 4);
    }
    ToolAnswer::fitted(text, structured(&shown), "")
}

/// `record_hypotheses`: the session's hypotheses after the change.
pub fn hypotheses(snapshot: &Snapshot) -> ToolAnswer {
    let all = &snapshot.hypotheses;
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
    ToolAnswer::fitted(text, json!(snapshot), "")
}

/// Line numbers as `3, 9, 12`.
fn listed_numbers(numbers: &[u64]) -> String {
    numbers
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
