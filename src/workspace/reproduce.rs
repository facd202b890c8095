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

use crate::core::reproduction::{
    Ending, RunReport, Source, TailLine, LINE_CAP, TAIL_LINES, TAIL_LINE_BYTES,
};
use crate::workspace::logpoints::{self, AdapterEvent, Logpoints, SetLogpoint};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
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
    Bytes(Source, Vec<u8>, u64),
    Closed(Source),
    Exited(std::process::ExitStatus),
    Hit(String, serde_json::Map<String, serde_json::Value>, u64),
    Note(String, u64),
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
    notes: &[String],
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
    spawn_reader(&mut child, Source::Stdout, limits.pass_through, &events);
    spawn_reader(&mut child, Source::Stderr, limits.pass_through, &events);
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
    let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let set = match logpoints {
        Some(logpoints) => {
            asked = logpoints.asked.clone();
            open += logpoints.sessions();
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
            Ok(Event::Bytes(source, bytes, at)) => recorder.take(source, &bytes, at),
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
                exited.store(true, std::sync::atomic::Ordering::Release);
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
    recorder.exit(&asked, ending, duration_ms);
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

fn spawn_reader(child: &mut Child, source: Source, pass: bool, events: &mpsc::Sender<Event>) {
    let stream: Option<Box<dyn Read + Send>> = match source {
        Source::Stdout => child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Source::Stderr => child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    };
    let Some(mut stream) = stream else {
        let _ = events.send(Event::Closed(source));
        return;
    };
    let events = events.clone();
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut passing = pass;
        loop {
            let read = match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let chunk = &buffer[..read];
            if passing && pass_on(source, chunk).is_err() {
                // Our reader went away (`run -- cmd | head`): the program
                // learns it as it would have, from its closed pipe.
                passing = false;
                if source == Source::Stdout {
                    break;
                }
            }
            if events
                .send(Event::Bytes(source, chunk.to_vec(), now_ms()))
                .is_err()
            {
                break;
            }
        }
        let _ = events.send(Event::Closed(source));
    });
}

fn pass_on(source: Source, chunk: &[u8]) -> io::Result<()> {
    match source {
        Source::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(chunk)?;
            out.flush()
        }
        Source::Stderr => {
            let mut out = io::stderr().lock();
            out.write_all(chunk)?;
            out.flush()
        }
    }
}

fn ending_of(status: std::process::ExitStatus) -> Ending {
    if let Some(code) = status.code() {
        return Ending::Exited { code };
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Ending::Signalled { signal };
        }
    }
    Ending::Exited { code: 1 }
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group the
    // child leads (it was spawned with `process_group(0)`); no memory is
    // touched.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// While the person's program runs in their terminal, Ctrl-C and Ctrl-\
/// are its to handle (the terminal sends them to both): `run` outlives them
/// and writes the exit record. Restored when dropped. The child was
/// spawned before this, so it keeps the default handling.
struct PersonSignals;

impl PersonSignals {
    fn ignore() -> Self {
        #[cfg(unix)]
        // SAFETY: setting a signal's disposition to ignore touches no memory.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            libc::signal(libc::SIGQUIT, libc::SIG_IGN);
        }
        PersonSignals
    }
}

impl Drop for PersonSignals {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: as above, restoring the default disposition.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LineRecord<'a> {
    session_id: &'a str,
    run_id: &'a str,
    source: &'static str,
    message: &'a str,
    timestamp: u64,
    /// The line's whole length when only its first bytes were kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated_from: Option<usize>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent_run: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExitRecord<'a> {
    session_id: &'a str,
    run_id: &'a str,
    source: &'static str,
    message: String,
    timestamp: u64,
    command: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    timed_out: bool,
    /// What `run` exits with (the program's status, 128+n for a signal).
    status: u8,
    duration_ms: u64,
    stdout_lines: u64,
    stderr_lines: u64,
    #[serde(skip_serializing_if = "is_zero")]
    unrecorded_lines: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent_run: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The words of the command an exit record keeps.
const RECORDED_WORDS: usize = 64;
const RECORDED_WORD: usize = 512;

struct Recorder<'a> {
    target: &'a Target,
    file: std::fs::File,
    cap: u64,
    batch: Vec<u8>,
    /// The unfinished line of each stream (at most `LINE_CAP` bytes kept),
    /// and the whole length it has reached.
    partial: [(Vec<u8>, usize, u64); 2],
    lines: [u64; 2],
    written: u64,
    dropped: u64,
    capped: bool,
    tail: VecDeque<TailLine>,
    /// The logpoints set in the program, and the hits recorded per probe.
    logpoints: Vec<SetLogpoint>,
    hits: std::collections::HashMap<String, u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HitRecord<'a> {
    session_id: &'a str,
    run_id: &'a str,
    source: &'static str,
    probe_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hypothesis_id: Option<&'a str>,
    location: String,
    message: String,
    data: serde_json::Map<String, serde_json::Value>,
    timestamp: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent_run: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NoteRecord<'a> {
    session_id: &'a str,
    run_id: &'a str,
    source: &'static str,
    message: &'a str,
    timestamp: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent_run: bool,
}

fn index(source: Source) -> usize {
    match source {
        Source::Stdout => 0,
        Source::Stderr => 1,
    }
}

impl<'a> Recorder<'a> {
    fn new(target: &'a Target, file: std::fs::File, cap: u64) -> Self {
        Recorder {
            target,
            file,
            cap,
            batch: Vec::with_capacity(BATCH_BYTES + LINE_CAP * 2),
            partial: [(Vec::new(), 0, 0), (Vec::new(), 0, 0)],
            lines: [0, 0],
            written: 0,
            dropped: 0,
            capped: false,
            tail: VecDeque::new(),
            logpoints: Vec::new(),
            hits: std::collections::HashMap::new(),
        }
    }

    /// Appends one record within the run's cap; false when over it.
    fn append(&mut self, record: &impl Serialize) -> bool {
        if self.capped {
            self.dropped += 1;
            return false;
        }
        let before = self.batch.len();
        if serde_json::to_writer(&mut self.batch, record).is_err() {
            self.batch.truncate(before);
            return false;
        }
        self.batch.push(b'\n');
        let size = (self.batch.len() - before) as u64;
        if self.written + size > self.cap {
            self.batch.truncate(before);
            self.capped = true;
            self.dropped += 1;
            return false;
        }
        self.written += size;
        true
    }

    /// A logpoint's line ran: one record with its values, as a probe line.
    fn hit(&mut self, probe_id: &str, data: serde_json::Map<String, serde_json::Value>, at: u64) {
        let Some(logpoint) = self
            .logpoints
            .iter()
            .find(|l| l.probe_id == probe_id)
            .cloned()
        else {
            return;
        };
        let count = self.hits.entry(logpoint.probe_id.clone()).or_default();
        if *count >= crate::core::logpoint::MAX_HITS_PER_LOGPOINT {
            self.dropped += 1;
            return;
        }
        *count += 1;
        let record = HitRecord {
            session_id: &self.target.session_id,
            run_id: &self.target.run_id,
            source: "logpoint",
            probe_id: &logpoint.probe_id,
            hypothesis_id: logpoint.hypothesis_id.as_deref(),
            location: logpoint.location(),
            message: logpoint
                .message
                .clone()
                .unwrap_or_else(|| format!("logpoint {}", logpoint.probe_id)),
            data: logpoints::bounded_data(&logpoint, data),
            timestamp: at,
            agent_run: self.target.agent,
        };
        self.append(&record);
    }

    /// What `run` says about the logpoints, as a record of the run.
    fn note(&mut self, note: &str, at: u64) {
        let record = NoteRecord {
            session_id: &self.target.session_id,
            run_id: &self.target.run_id,
            source: "sidecar",
            message: note,
            timestamp: at,
            agent_run: self.target.agent,
        };
        self.append(&record);
    }

    fn take(&mut self, source: Source, mut bytes: &[u8], at: u64) {
        let i = index(source);
        while !bytes.is_empty() {
            let (piece, ends) = match memchr::memchr(b'\n', bytes) {
                Some(n) => (&bytes[..n], Some(n + 1)),
                None => (bytes, None),
            };
            let (kept, length, first_at) = &mut self.partial[i];
            if kept.is_empty() && *length == 0 {
                *first_at = at;
            }
            let room = LINE_CAP.saturating_sub(kept.len());
            kept.extend_from_slice(&piece[..piece.len().min(room)]);
            *length += piece.len();
            match ends {
                Some(n) => {
                    self.line(source);
                    bytes = &bytes[n..];
                }
                None => break,
            }
        }
    }

    /// The stream ended: its unfinished line, if any, is a line.
    fn close(&mut self, source: Source, at: u64) {
        let (_, length, first_at) = &mut self.partial[index(source)];
        if *length > 0 {
            if *first_at == 0 {
                *first_at = at;
            }
            self.line(source);
        }
    }

    fn line(&mut self, source: Source) {
        let i = index(source);
        let (mut kept, length, at) = std::mem::take(&mut self.partial[i]);
        self.lines[i] += 1;
        if kept.last() == Some(&b'\r') && length == kept.len() {
            kept.pop();
        }
        let text = String::from_utf8_lossy(&kept);
        // A line cut inside a character keeps what is whole.
        let text = if length > kept.len() {
            text.trim_end_matches('\u{fffd}')
        } else {
            text.as_ref()
        };
        self.tail.push_back(TailLine {
            source,
            text: crate::core::budget::cut(text, TAIL_LINE_BYTES),
        });
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
        }
        if self.capped {
            self.dropped += 1;
            return;
        }
        let record = LineRecord {
            session_id: &self.target.session_id,
            run_id: &self.target.run_id,
            source: source.as_str(),
            message: text,
            timestamp: at,
            truncated_from: (length > kept.len()).then_some(length),
            agent_run: self.target.agent,
        };
        let before = self.batch.len();
        if serde_json::to_writer(&mut self.batch, &record).is_err() {
            self.batch.truncate(before);
            return;
        }
        self.batch.push(b'\n');
        let size = (self.batch.len() - before) as u64;
        if self.written + size > self.cap {
            self.batch.truncate(before);
            self.capped = true;
            self.dropped += 1;
            return;
        }
        self.written += size;
    }

    fn exit(&mut self, command: &[String], ending: Ending, duration_ms: u64) {
        let mut message = format!("the program {}", ending.describe());
        if self.dropped > 0 {
            message.push_str(&format!(
                "; {} line(s) after the run's cap of {} bytes were not recorded",
                self.dropped, self.cap
            ));
        }
        let (exit_code, signal) = match ending {
            Ending::Exited { code } => (Some(code), None),
            Ending::Signalled { signal } => (None, Some(signal)),
            Ending::TimedOut { .. } => (None, Some(9)),
        };
        let record = ExitRecord {
            session_id: &self.target.session_id,
            run_id: &self.target.run_id,
            source: "exit",
            message,
            timestamp: now_ms(),
            command: command
                .iter()
                .take(RECORDED_WORDS)
                .map(|w| crate::core::budget::cut(w, RECORDED_WORD))
                .collect(),
            exit_code,
            signal,
            timed_out: matches!(ending, Ending::TimedOut { .. }),
            status: ending.exit_code(),
            duration_ms,
            stdout_lines: self.lines[0],
            stderr_lines: self.lines[1],
            unrecorded_lines: self.dropped,
            agent_run: self.target.agent,
        };
        let before = self.batch.len();
        if serde_json::to_writer(&mut self.batch, &record).is_ok() {
            self.batch.push(b'\n');
            self.written += (self.batch.len() - before) as u64;
        } else {
            self.batch.truncate(before);
        }
    }

    fn flush(&mut self) -> Result<(), RunError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        // One write of whole records: a reader never sees half of one.
        let result = self.file.write_all(&self.batch);
        self.batch.clear();
        result.map_err(|error| RunError::Record {
            file: self.target.file.clone(),
            error,
        })
    }
}
