//! A reproduction run again and again into one run (issue 31): each attempt
//! numbered in its exit record, the logpoints set anew each time, and the
//! run's byte cap shared by all of them. How often it failed is the answer.

use super::{run_with, Limits, RunError, Target};
use crate::core::model::Probe;
use crate::core::rates::Attempts;
use crate::core::reproduction::{Ending, RunReport};
use crate::workspace::logpoints;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

/// Most attempts one repeat runs.
pub const MAX_REPEAT: u64 = 1000;
/// Most attempts run side by side.
pub const MAX_JOBS: u64 = 32;

/// How often to run, how many at once, and whether to stop at the first
/// failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub times: u64,
    /// Attempts run side by side (1: one after another).
    pub jobs: u64,
    pub until_fail: bool,
}

impl Repeat {
    pub const ONCE: Repeat = Repeat {
        times: 1,
        jobs: 1,
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
/// `live` set each time) into `target`, `repeat.jobs` at once, telling
/// `progress` as attempts end. The last attempt's report and the count of
/// failures. With `until_fail`, no attempt starts after one failed (those
/// already running finish and count).
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
    let jobs = repeat.jobs.clamp(1, MAX_JOBS).min(times);
    // The first attempt's plan says what could not be done with the
    // logpoints; its notes are recorded once, with it.
    let first = logpoints::plan(command, cwd, root, live);
    progress(Progress::Notes(&first.notes));
    let first = std::sync::Mutex::new(Some(first));
    // What the attempts have recorded or hold for the run's one byte cap
    // (an attempt running holds its whole allowance); the next attempt to
    // start; whether one failed.
    let used = std::sync::Mutex::new(0u64);
    let next = AtomicU64::new(1);
    let stop = AtomicBool::new(false);
    let (ended, reports) = mpsc::channel::<(u64, Result<RunReport, RunError>)>();
    let attempt = |number: u64| {
        let planned = (number == 1)
            .then(|| first.lock().ok().and_then(|mut first| first.take()))
            .flatten();
        let (plan, notes) = match planned {
            Some(plan) => {
                let notes = plan.notes.clone();
                (plan, notes)
            }
            None => (logpoints::plan(command, cwd, root, live), Vec::new()),
        };
        // One cap for the whole run: an attempt takes its share of what is
        // left, and gives back what it did not record when it ends.
        let allowance = {
            let mut used = used.lock().unwrap_or_else(|p| p.into_inner());
            let share = limits.run_bytes.saturating_sub(*used) / jobs;
            *used += share;
            share
        };
        let limits = Limits {
            run_bytes: allowance,
            attempt: (times > 1).then_some((number, times)),
            ..limits.clone()
        };
        let report = run_with(&plan.command, cwd, target, &limits, plan.logpoints, &notes);
        let recorded = report
            .as_ref()
            .map_or(0, |r| r.recorded_bytes)
            .min(allowance);
        let mut used = used.lock().unwrap_or_else(|p| p.into_inner());
        *used -= allowance - recorded;
        report
    };
    let failed_of = |report: &RunReport| report.ending != (Ending::Exited { code: 0 });
    let mut attempts = Attempts::default();
    let mut last = None;
    let mut error = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let ended = ended.clone();
            let (next, stop, attempt) = (&next, &stop, &attempt);
            scope.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let number = next.fetch_add(1, Ordering::SeqCst);
                if number > times {
                    break;
                }
                let report = attempt(number);
                let halt = match &report {
                    Ok(report) => repeat.until_fail && failed_of(report),
                    Err(_) => true,
                };
                if halt {
                    stop.store(true, Ordering::SeqCst);
                }
                if ended.send((number, report)).is_err() {
                    break;
                }
            });
        }
        drop(ended);
        for (number, report) in reports {
            match report {
                Ok(report) => {
                    attempts.add(failed_of(&report));
                    progress(Progress::Ended(number, &report));
                    last = Some(report);
                }
                Err(e) => {
                    error.get_or_insert(e);
                }
            }
        }
    });
    match (last, error) {
        (_, Some(error)) => Err(error),
        (Some(last), None) => Ok((last, attempts)),
        (None, None) => Err(RunError::NoCommand),
    }
}
