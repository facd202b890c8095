//! `debug-sidecar run [--session ID] -- <command> [args...]`: the person's
//! reproduction, recorded. The program runs in the workspace without a
//! shell, its output reaches the terminal unchanged, every line and the exit
//! status go into the session's current run, and `run` exits as the program
//! did.

use super::Where;
use crate::core::reproduction::PERSON_RUN_CAP;
use crate::engine::owner::now_ms;
use crate::workspace::reproduce::{self, Limits, Progress, Repeat, RunError};
use std::process::ExitCode;

pub fn run(place: Where, command: Vec<String>, repeat: Repeat) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let target = engine.begin_run(&session)?;
    let live = engine.live_logpoints(&session)?;
    let root = engine.config().root.clone();
    // From a folder of the workspace, as the person typed it; else its root.
    let cwd = std::env::current_dir()
        .ok()
        .filter(|dir| dir.starts_with(&root))
        .unwrap_or(root.clone());
    let limits = Limits {
        run_bytes: PERSON_RUN_CAP,
        timeout: None,
        // Attempts side by side would mix their output on the terminal.
        pass_through: repeat.jobs == 1,
        stdin: repeat.times == 1,
        attempt: None,
    };
    let mut worst = 0u8;
    let outcome = reproduce::repeated(
        &command,
        &cwd,
        &root,
        &live,
        &target,
        &limits,
        repeat,
        |progress| match progress {
            Progress::Notes(notes) => {
                for note in notes {
                    eprintln!("debug-sidecar: {note}");
                }
            }
            Progress::Ended(attempt, report) => {
                let status = report.ending.exit_code();
                if status != 0 {
                    worst = status;
                }
                if repeat.times > 1 {
                    eprintln!(
                        "debug-sidecar: attempt {attempt} of {}: the program {}",
                        repeat.times,
                        report.ending.describe()
                    );
                }
            }
        },
    );
    let (report, attempts) = match outcome {
        Ok(done) => done,
        Err(error @ RunError::Spawn { .. }) => {
            // As a shell says it: nothing ran, nothing was recorded.
            eprintln!("debug-sidecar: {error}");
            return Ok(ExitCode::from(127));
        }
        Err(error) => return Err(error.into()),
    };
    if let Err(error) = engine.end_run(&target, now_ms()) {
        tracing::warn!("the run's line count was not saved: {error}");
    }
    eprintln!(
        "{}",
        crate::core::text::person_run_notice(&session, &report)
    );
    if repeat.times > 1 {
        eprintln!("debug-sidecar: the reproduction {}.", attempts.describe());
        // Failed at least once: the last failure's status.
        return Ok(ExitCode::from(worst));
    }
    Ok(ExitCode::from(report.ending.exit_code()))
}
