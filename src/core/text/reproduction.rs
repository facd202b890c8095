//! What a recorded run of the program tells the model (`run_reproduction`)
//! and the person (`debug-sidecar run`'s closing line).

use super::HAND_OFF_TOOL;
use crate::core::budget::{cut, BOARD_ID};
use crate::core::escape::{fence, inline_cut};
use crate::core::host::TERMINAL_DONE;
use crate::core::reproduction::{Ending, RunReport, TAIL_LINE_BYTES};
use std::fmt::Write;

/// The longest command line an answer quotes.
const COMMAND_BYTES: usize = 300;

fn command_line(command: &[String]) -> String {
    let words: Vec<String> = command
        .iter()
        .map(|w| {
            if !w.is_empty() && !w.contains([' ', '\'', '"', '\\']) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect();
    inline_cut(&words.join(" "), COMMAND_BYTES)
}

fn seconds(ms: u64) -> String {
    format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
}

fn recorded(report: &RunReport) -> String {
    let mut out = format!(
        "{} stdout and {} stderr line(s)",
        report.stdout_lines, report.stderr_lines
    );
    if report.dropped_lines > 0 {
        let _ = write!(
            out,
            " ({} later line(s) not recorded: the run's records reached their cap of {} KiB)",
            report.dropped_lines,
            report.cap_bytes / 1024
        );
    }
    out
}

/// Why a run is refused while the agent's own run holds `active.jsonl`:
/// the probe lines of both would land in one run.
pub fn run_while_agent_runs(run_id: &str, seconds_left: u64) -> String {
    format!(
        "the agent is running the reproduction itself (run {}), for at most {seconds_left} \
         more second(s); run it again once that run has ended",
        inline_cut(run_id, BOARD_ID)
    )
}

/// The `run_reproduction` tool's answer: how the run ended, where its
/// records are, the last lines it printed (fenced as data), and that the
/// person still decides.
pub fn agent_run_result(report: &RunReport) -> String {
    let run = inline_cut(&report.run_id, BOARD_ID);
    let mut out = format!(
        "Agent run {run} of `{}`: the program {} after {}.\nRecorded {} into run {run}, a run of its own \
         marked as yours (agentRun), never the person's reproduction; read_logs with \
         `run: \"{run}\"` reads every record, and its last record is the exit status. The \
         lines its probes wrote while it ran are in this run too, not in the person's.\n",
        command_line(&report.command),
        report.ending.describe(),
        seconds(report.duration_ms),
        recorded(report),
    );
    if report.tail.is_empty() {
        out.push_str("The program printed nothing.\n");
    } else {
        let total = report.stdout_lines + report.stderr_lines;
        let label = if total > report.tail.len() as u64 {
            format!("Its last {} line(s) of {total}", report.tail.len())
        } else {
            "Its output".to_string()
        };
        let body: Vec<String> = report
            .tail
            .iter()
            .map(|line| {
                format!(
                    "{} | {}",
                    line.source.as_str(),
                    cut(&line.text, TAIL_LINE_BYTES)
                )
            })
            .collect();
        out.push_str(&fence(&label, "text", &body.join("\n")));
        out.push('\n');
    }
    let _ = write!(
        out,
        "This is evidence you gathered yourself: it does not replace the person's Proceed or \
         Mark fixed. When the person should reproduce or confirm, call {HAND_OFF_TOOL} (a step \
         may say: run the command prefixed with `debug-sidecar run --`, which records their run the same way)."
    );
    out
}

/// The line `debug-sidecar run` ends with, on stderr.
pub fn person_run_notice(session_id: &str, report: &RunReport) -> String {
    format!(
        "debug-sidecar: recorded {} into run {} of session {}; the program {} after {}.",
        recorded(report),
        inline_cut(&report.run_id, BOARD_ID),
        inline_cut(session_id, BOARD_ID),
        report.ending.describe(),
        seconds(report.duration_ms),
    )
}

/// What an agent's repeated run adds to its answer: how often it failed, and
/// how each attempt ended, in order.
pub fn agent_repeat_result(attempts: crate::core::rates::Attempts, endings: &[Ending]) -> String {
    let statuses: Vec<String> = endings
        .iter()
        .take(crate::core::reproduction::AGENT_REPEAT_MAX as usize)
        .map(|e| e.exit_code().to_string())
        .collect();
    format!(
        "\nIts {} attempts: the reproduction {}. Exit status of each, in order: {}. Each \
         attempt's exit record carries its number (`attempt`).",
        attempts.total,
        attempts.describe(),
        statuses.join(" ")
    )
}

/// "p = 0.0088", "p = 0.65".
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else if p < 0.1 {
        format!("p = {p:.4}")
    } else {
        format!("p = {p:.2}")
    }
}

/// Words a person's Mark fixed carries to say it is fixed whatever the
/// rate says.
pub const FIXED_ANYWAY: &str = "fixed anyway";

/// Whether the person's note marks it fixed anyway (it starts with the
/// words, in any case).
pub fn says_fixed_anyway(note: &str) -> bool {
    note.trim().to_lowercase().starts_with(FIXED_ANYWAY)
}

/// Why Mark fixed is refused on a flaky bug, and the person's two ways on.
pub fn fix_refused(
    before: crate::core::rates::Attempts,
    after: crate::core::rates::Attempts,
    p: f64,
    needed: u64,
    host: crate::core::host::Host,
) -> String {
    // The override as this host takes it; a terminal takes it everywhere.
    let anyway = match host.done_with(FIXED_ANYWAY) {
        Some(typed) => format!("type `{typed}`, or `{TERMINAL_DONE} --anyway` in a terminal"),
        None => format!("`{TERMINAL_DONE} --anyway` in a terminal"),
    };
    format!(
        "Mark fixed needs more evidence: this bug fails only some of the time. Before the fix \
         the reproduction {}; since, it {}, which that rate gives by chance too ({}; needs < \
         0.01). Run it at least {needed} times without a failure (`debug-sidecar run --repeat \
         {needed} -- <the command>`), then Mark fixed again; or, sure it is fixed, mark it fixed \
         anyway: {anyway}.",
        before.describe(),
        after.describe(),
        p_value(p)
    )
}

/// What the cleanup kickoff tells the agent the fix rests on, for a bug
/// whose reproduction failed only some of the time.
pub fn fix_backing(evidence: &crate::core::rates::FixEvidence, anyway: bool) -> Option<String> {
    use crate::core::rates::FixEvidence;
    match evidence {
        FixEvidence::NotFlaky => None,
        FixEvidence::Significant { before, after, p } => Some(format!(
            "The fix rests on the reproduction's rate: before, it {}; since, it {} ({}, \
             significantly lower). Say so in your summary.",
            before.describe(),
            after.describe(),
            p_value(*p)
        )),
        FixEvidence::Insufficient {
            before, after, p, ..
        } if anyway => Some(format!(
            "The person marked it fixed anyway, without the evidence of a lower rate: before, \
             the reproduction {}; since, it {} ({}). Say in your summary that the fix is not \
             proven by runs.",
            before.describe(),
            after.describe(),
            p_value(*p)
        )),
        FixEvidence::Insufficient { .. } => None,
    }
}
