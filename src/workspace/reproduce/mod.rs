//! Running the reproduction and recording it (DESIGN section 7, `debug-sidecar
//! run`): the program runs without a shell; its stdout and stderr are passed
//! through unchanged (byte for byte, as they arrive) and, line by line, written
//! as records to a run's log file, then one exit record. Recording is capped
//! per line and per run; passing through never is.
//!
//! Two reader threads pass each stream through and hand its bytes to the
//! recorder (this thread), which cuts them into lines in the order they were
//! read and appends records in batches: a flood of output costs one write per
//! batch, not one per line. The order of lines across the two streams is the
//! order they were read in.

mod lines;
mod process;
mod recorder;
mod repeat;

use crate::core::reproduction::{Ending, RunReport, Source};
use crate::workspace::logpoints::{AdapterEvent, Logpoints, RunNote};
use process::{ending_of, kill_group, spawn_reader, PersonSignals};
use recorder::Recorder;
pub use repeat::{repeated, Progress, Repeat, MAX_REPEAT};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Records are written at least this often while output flows, so an editor
/// following the run sees lines as they come.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// A batch is written once it holds this many bytes.
const BATCH_BYTES: usize = 256 * 1024;
/// How long the streams may stay open once the program has exited (a child
/// of it still holding them): then recording ends.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Where the records go and what marks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub session_id: String,
    pub run_id: String,
    pub file: PathBuf,
    /// An agent's run: every record says so.
    pub agent: bool,
    /// What the program prints and its logpoints' values go through before
    /// they are recorded.
    pub redactor: crate::core::redact::Redactor,
}

/// How a run is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of records the run may write; later lines are only counted.
    pub run_bytes: u64,
    /// Killed (with its process group) after this long.
    pub timeout: Option<Duration>,
    /// Pass stdout and stderr through to this process's own (the person's
    /// terminal); otherwise they are only recorded.
    pub pass_through: bool,
    /// The program reads this process's stdin (the person's terminal);
    /// otherwise it reads nothing.
    pub stdin: bool,
    /// Attempt i of n of a repeated reproduction (`repeat`): its exit
    /// record says so.
    pub attempt: Option<(u64, u64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("give the command to run (after `--`)")]
    NoCommand,
    #[error("could not start `{program}`: {error}")]
    Spawn { program: String, error: io::Error },
    #[error("could not write the run's records to {}: {error}", file.display())]
    Record { file: PathBuf, error: io::Error },
}

enum Event {
    /// A chunk of a stream, and where in it an anchor of a secret ends
    /// (None: not scanned, as the run had reached its cap).
    Bytes(Source, Vec<u8>, u64, Option<Vec<usize>>),
    Closed(Source),
    Exited(std::process::ExitStatus),
    Hit(String, serde_json::Map<String, serde_json::Value>, u64),
    Note(RunNote, u64),
    /// A logpoint hook's reader ended.
    HookDone,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs `command` in `cwd` and records it into `target`.
pub fn run(
    command: &[String],
    cwd: &Path,
    target: &Target,
    limits: &Limits,
) -> Result<RunReport, RunError> {
    run_with(command, cwd, target, limits, None, &[])
}

/// `run`, with logpoints set in the program and notes recorded first (a
/// logpoint not set, a line moved): each note is a `sidecar` record.
pub fn run_with(
    command: &[String],
    cwd: &Path,
    target: &Target,
    limits: &Limits,
    logpoints: Option<Logpoints>,
    notes: &[RunNote],
) -> Result<RunReport, RunError> {
    let (program, args) = command.split_first().ok_or(RunError::NoCommand)?;
    let file = crate::workspace::runlog::open_own_append(&target.file).map_err(|error| {
        RunError::Record {
            file: target.file.clone(),
            error,
        }
    })?;
    let mut builder = Command::new(program);
    builder
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if limits.stdin {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    if let Some(logpoints) = &logpoints {
        builder.envs(logpoints.env());
    }
    #[cfg(unix)]
    if limits.timeout.is_some() {
        // Its own process group, so a time cap ends what it started too.
        use std::os::unix::process::CommandExt;
        builder.process_group(0);
    }
    let started = Instant::now();
    let mut child = builder.spawn().map_err(|error| RunError::Spawn {
        program: program.clone(),
        error,
    })?;
    let _interrupts = limits.stdin.then(PersonSignals::ignore);
    let (events, received) = mpsc::channel();
    // Set once the run's records reach their cap: the readers stop scanning
    // for secrets' anchors (the recorder checks the few lines it still keeps).
    let capped = Arc::new(AtomicBool::new(false));
    for source in [Source::Stdout, Source::Stderr] {
        spawn_reader(
            &mut child,
            source,
            limits.pass_through,
            &events,
            &target.redactor,
            &capped,
        );
    }
    let pid = child.id();
    {
        let events = events.clone();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = events.send(Event::Exited(status));
            }
        });
    }
    let mut open = 2;
    let mut asked = command.to_vec();
    let exited = std::sync::Arc::new(crate::workspace::logpoints::Exited::default());
    let set = match logpoints {
        Some(logpoints) => {
            asked = logpoints.asked.clone();
            open += logpoints.readers();
            let set = logpoints.set();
            let (report, done) = (events.clone(), events.clone());
            logpoints.serve(
                exited.clone(),
                move |event| {
                    let _ = report.send(match event {
                        AdapterEvent::Hit { probe_id, data } => {
                            Event::Hit(probe_id, data, now_ms())
                        }
                        AdapterEvent::Note(note) => Event::Note(note, now_ms()),
                    });
                },
                move || {
                    let _ = done.send(Event::HookDone);
                },
            );
            set
        }
        None => Vec::new(),
    };
    drop(events);
    let mut recorder = Recorder::new(target, file, limits.run_bytes);
    recorder.logpoints = set;
    recorder.attempt = limits.attempt.map(|(attempt, _)| attempt);
    for note in notes {
        recorder.note(note, now_ms());
    }
    let deadline = limits.timeout.map(|t| started + t);
    let (mut ending, mut drain_until) = (None::<Ending>, None::<Instant>);
    let mut timed_out = None;
    let mut last_flush = Instant::now();
    while open > 0 || ending.is_none() {
        let mut wake = last_flush + FLUSH_EVERY;
        if let Some(at) = deadline.filter(|_| timed_out.is_none()) {
            wake = wake.min(at);
        }
        if let Some(at) = drain_until {
            wake = wake.min(at);
        }
        let wait = wake.saturating_duration_since(Instant::now());
        match received.recv_timeout(wait) {
            Ok(Event::Bytes(source, bytes, at, anchors)) => {
                recorder.take(source, &bytes, at, anchors.as_deref());
                if recorder.capped {
                    capped.store(true, Ordering::Relaxed);
                }
            }
            Ok(Event::Closed(source)) => {
                recorder.close(source, now_ms());
                open -= 1;
            }
            Ok(Event::Hit(probe_id, data, at)) => recorder.hit(&probe_id, data, at),
            Ok(Event::Note(note, at)) => {
                if limits.pass_through {
                    eprintln!("debug-sidecar: {note}");
                }
                recorder.note(&note, at);
            }
            Ok(Event::HookDone) => open -= 1,
            Ok(Event::Exited(status)) => {
                exited.set();
                ending = Some(match timed_out {
                    Some(after_sec) => Ending::TimedOut { after_sec },
                    None => ending_of(status),
                });
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        if let (Some(at), None) = (deadline, timed_out) {
            if now >= at {
                timed_out = limits.timeout.map(|t| t.as_secs().max(1));
                kill_group(pid);
            }
        }
        if drain_until.is_some_and(|at| now >= at) {
            // The program is gone; whatever still holds its streams is not
            // waited for.
            if timed_out.is_some() {
                kill_group(pid);
            }
            break;
        }
        if now >= last_flush + FLUSH_EVERY || recorder.batch.len() >= BATCH_BYTES {
            recorder.flush()?;
            last_flush = now;
        }
    }
    let ending = ending.unwrap_or(Ending::Signalled { signal: 9 });
    recorder.close(Source::Stdout, now_ms());
    recorder.close(Source::Stderr, now_ms());
    let duration_ms = started.elapsed().as_millis() as u64;
    recorder.exit(&asked, ending, duration_ms, limits.attempt);
    recorder.flush()?;
    Ok(RunReport {
        run_id: target.run_id.clone(),
        command: asked,
        ending,
        duration_ms,
        stdout_lines: recorder.lines[0],
        stderr_lines: recorder.lines[1],
        recorded_bytes: recorder.written,
        dropped_lines: recorder.dropped,
        cap_bytes: limits.run_bytes,
        tail: recorder.tail.into_iter().collect(),
    })
}
