//! A reproduction run again and again into one run (issue 31): each attempt
//! numbered in its exit record, the logpoints set anew each time, and the
//! run's byte cap shared by all of them. How often it failed is the answer.

use super::{run_with, Limits, RunError, Target};
use crate::core::model::Probe;
use crate::core::rates::Attempts;
use crate::core::reproduction::{Ending, RunReport};
use crate::workspace::logpoints;
use std::path::Path;

/// Most attempts one repeat runs.
pub const MAX_REPEAT: u64 = 1000;

/// How often to run, and whether to stop at the first failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub times: u64,
    pub until_fail: bool,
}

impl Repeat {
    pub const ONCE: Repeat = Repeat {
        times: 1,
        until_fail: false,
    };
}

/// What a repeat tells its caller as it goes.
pub enum Progress<'a> {
    /// Before the first attempt: what could not be done with the logpoints.
    Notes(&'a [logpoints::RunNote]),
    /// An attempt ended: its number and report.
    Ended(u64, &'a RunReport),
}

/// Runs `command` up to `repeat.times` times (from `cwd`, logpoints of
/// `live` set each time) into `target`, telling `progress` as it goes. The
/// last attempt's report and the count of failures.
#[allow(clippy::too_many_arguments)]
pub fn repeated(
    command: &[String],
    cwd: &Path,
    root: &Path,
    live: &[Probe],
    target: &Target,
    limits: &Limits,
    repeat: Repeat,
    mut progress: impl FnMut(Progress),
) -> Result<(RunReport, Attempts), RunError> {
    let times = repeat.times.clamp(1, MAX_REPEAT);
    let mut attempts = Attempts::default();
    let mut used = 0u64;
    let mut last = None;
    for attempt in 1..=times {
        let plan = logpoints::plan(command, cwd, root, live);
        if attempt == 1 {
            progress(Progress::Notes(&plan.notes));
        }
        let limits = Limits {
            // One cap for the whole run, whatever the number of attempts.
            run_bytes: limits.run_bytes.saturating_sub(used),
            attempt: (times > 1).then_some((attempt, times)),
            ..limits.clone()
        };
        let report = run_with(
            &plan.command,
            cwd,
            target,
            &limits,
            plan.logpoints,
            &plan.notes,
        )?;
        used += report.recorded_bytes;
        let failed = report.ending != (Ending::Exited { code: 0 });
        attempts.add(failed);
        progress(Progress::Ended(attempt, &report));
        last = Some(report);
        if failed && repeat.until_fail {
            break;
        }
    }
    let last = last.expect("one attempt at least");
    Ok((last, attempts))
}
