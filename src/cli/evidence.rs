//! `debug-sidecar logs` and `debug-sidecar probes`: a run's log lines and the
//! probe ledger, for people (readable lines) and scripts (`--json`).

use super::Where;
use crate::core::escape::{inline, inline_cut};
use crate::workspace::logread::LogQuery;
use serde_json::{json, Value};
use std::process::ExitCode;

pub struct LogsArgs {
    pub after_line: Option<u64>,
    pub before_line: Option<u64>,
    pub run: Option<String>,
    pub probe: Option<String>,
    pub hypothesis: Option<String>,
    pub contains: Option<String>,
    pub limit: Option<usize>,
    pub summary: bool,
    pub json: bool,
}

/// `debug-sidecar mark [words]`: the moment, in the current run.
pub fn mark(place: Where, words: &str) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let now = crate::engine::owner::now_ms();
    match engine.mark(&session, words, now) {
        Ok(marked) => {
            println!(
                "{}",
                crate::core::text::marked(&marked.run, marked.line, &marked.words)
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("debug-sidecar: {error}");
            Ok(ExitCode::from(1))
        }
    }
}

pub fn logs(place: Where, args: LogsArgs) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    if args.summary {
        let (target, summary) = engine.log_summary(
            &session,
            args.run.as_deref(),
            crate::engine::owner::now_ms(),
        )?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "run": target.run, "file": target.run.as_ref().map(|_| &target.file),
                    "summary": summary, "note": target.note,
                }))?
            );
            return Ok(ExitCode::SUCCESS);
        }
        print_note(&target.note);
        let Some(run) = target.run else {
            return Ok(ExitCode::SUCCESS);
        };
        println!(
            "run {run}: {} line(s), {} malformed, {} without a probe id",
            summary.lines, summary.malformed.count, summary.without_probe
        );
        if let Some(sources) = summary.describe_sources() {
            println!("  by source: {sources}");
        }
        if let Some(attempts) = summary.attempts.filter(|a| a.total > 1) {
            println!("  the reproduction {}", attempts.describe());
        }
        if summary.too_long > 0 {
            println!(
                "  {} line(s) over 4 MiB counted from their first fields, their values not read",
                summary.too_long
            );
        }
        for probe in &summary.probes {
            println!("  {}", probe.describe());
        }
        if let Some(marks) = summary.describe_marks() {
            println!(
                "  {marks}\n  (`logs --after-line N --before-line M` shows the lines between two)"
            );
        }
        if let Some(around) = &summary.around_mark {
            for line in around.describe() {
                println!("  {line}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let query = LogQuery {
        probe: args.probe,
        hypothesis: args.hypothesis,
        contains: args.contains,
        cursor: None,
        limit: args.limit,
        max_bytes: Some(crate::workspace::logread::MAX_MAX_BYTES),
        after_line: args.after_line,
        before_line: args.before_line,
    };
    let answer = engine.logs(&session, args.run.as_deref(), &query)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "run": answer.target.run, "entries": answer.page.entries,
                "total": answer.total, "malformed": answer.page.malformed,
                "tooLong": answer.page.oversized,
                "more": answer.page.next_cursor.is_some(), "note": answer.target.note,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    print_note(&answer.target.note);
    for entry in &answer.page.entries {
        let e = &entry.entry;
        let text = |key: &str| {
            // The program wrote it: shown escaped and cut, never raw.
            inline_cut(e.get(key).and_then(Value::as_str).unwrap_or("-"), 200)
        };
        println!(
            "{:>5}  {} {} {}  {}  {}",
            entry.line,
            text("probeId"),
            text("hypothesisId"),
            text("location"),
            text("message"),
            inline_cut(
                &e.get("data").map(Value::to_string).unwrap_or_default(),
                1000
            )
        );
    }
    if !answer.page.oversized.is_empty() {
        println!(
            "{} line(s) too long to show (over {} MiB): {:?}; they are in {}",
            answer.page.oversized.len(),
            crate::workspace::logread::MAX_MAX_BYTES >> 20,
            answer.page.oversized,
            inline(&answer.target.file.to_string_lossy())
        );
    }
    if answer.page.next_cursor.is_some() {
        println!("… more lines; narrow with --probe/--contains or raise --limit");
    }
    if answer.page.malformed.count > 0 {
        println!(
            "{} malformed line(s): {:?}",
            answer.page.malformed.count, answer.page.malformed.lines
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_note(note: &Option<String>) {
    if let Some(note) = note {
        eprintln!("{note}");
    }
}

pub fn probes(place: Where, rescan: bool, json: bool) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let ledger = engine.probes(&session, rescan, crate::engine::owner::now_ms())?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "sessionId": session, "probes": ledger.probes, "live": ledger.live,
                "missing": ledger.missing, "untracked": ledger.untracked,
                "foreign": ledger.foreign, "halfRemoved": ledger.half_removed,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if ledger.probes.is_empty() {
        println!("Session {session}: no probes in the ledger.");
    }
    for probe in &ledger.probes {
        println!(
            "{:<5} {:<8} {:<4} {}",
            inline(&probe.id),
            probe.state.for_person(),
            inline(probe.hypothesis_id.as_deref().unwrap_or("-")),
            probe.located()
        );
    }
    for foreign in &ledger.foreign {
        println!(
            "foreign  {}:{}  {}",
            inline(&foreign.file),
            foreign.line,
            foreign.kind.describe()
        );
    }
    for half in &ledger.half_removed {
        println!(
            "half-removed  {}:{}  {}",
            inline(&half.file),
            half.line,
            inline(&half.probe_id)
        );
    }
    Ok(ExitCode::SUCCESS)
}
