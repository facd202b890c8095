//! The run's records: each line of output, each logpoint hit and note, and
//! the exit record, batched into the run's log file within its byte cap.

use super::{now_ms, RunError, Target, BATCH_BYTES};
use crate::core::redact::LineStream;
use crate::core::reproduction::{Ending, Source, TailLine, LINE_CAP, TAIL_LINES, TAIL_LINE_BYTES};
use crate::workspace::logpoints::{self, SetLogpoint};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::Write;
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

pub(super) struct Recorder<'a> {
    pub(super) target: &'a Target,
    pub(super) file: std::fs::File,
    pub(super) cap: u64,
    pub(super) batch: Vec<u8>,
    /// The unfinished line of each stream (at most `LINE_CAP` bytes kept),
    /// and the whole length it has reached.
    pub(super) partial: [(Vec<u8>, usize, u64); 2],
    pub(super) lines: [u64; 2],
    pub(super) written: u64,
    pub(super) dropped: u64,
    pub(super) capped: bool,
    pub(super) tail: VecDeque<TailLine>,
    /// The logpoints set in the program, and the hits recorded per probe.
    pub(super) logpoints: Vec<SetLogpoint>,
    pub(super) hits: std::collections::HashMap<String, u64>,
    /// Each stream's redaction state (a private key spans lines), and
    /// whether its unfinished line came from a chunk that may hold a secret.
    pub(super) streams: [LineStream; 2],
    pub(super) dirty: [bool; 2],
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

/// The most a cut line drops of the word it was cut in.
const CUT_WORD: usize = 128;

impl<'a> Recorder<'a> {
    pub(super) fn new(target: &'a Target, file: std::fs::File, cap: u64) -> Self {
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
            streams: Default::default(),
            dirty: [false; 2],
        }
    }

    /// Appends one record within the run's cap; false when over it.
    pub(super) fn append(&mut self, record: &impl Serialize) -> bool {
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
    pub(super) fn hit(
        &mut self,
        probe_id: &str,
        data: serde_json::Map<String, serde_json::Value>,
        at: u64,
    ) {
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
        let mut data = serde_json::Value::Object(data);
        self.target.redactor.value(&mut data);
        let serde_json::Value::Object(data) = data else {
            return;
        };
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
    pub(super) fn note(&mut self, note: &str, at: u64) {
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

    /// A chunk of a stream; `anchors` are where in it a secret's anchor
    /// starts (in order), so only the lines holding one are redacted.
    pub(super) fn take(&mut self, source: Source, mut bytes: &[u8], at: u64, anchors: &[usize]) {
        let i = index(source);
        let every_line = self.target.redactor.checks_every_line();
        let (mut offset, mut next_anchor) = (0usize, 0usize);
        while !bytes.is_empty() {
            let piece_end = offset + memchr::memchr(b'\n', bytes).map_or(bytes.len(), |n| n + 1);
            while next_anchor < anchors.len() && anchors[next_anchor] < piece_end {
                self.dirty[i] = true;
                next_anchor += 1;
            }
            self.dirty[i] |= every_line;
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
                    offset += n;
                }
                None => break,
            }
        }
    }

    /// The stream ended: its unfinished line, if any, is a line.
    pub(super) fn close(&mut self, source: Source, at: u64) {
        let (_, length, first_at) = &mut self.partial[index(source)];
        if *length > 0 {
            if *first_at == 0 {
                *first_at = at;
            }
            self.line(source);
        }
    }

    pub(super) fn line(&mut self, source: Source) {
        let i = index(source);
        let (mut kept, length, at) = std::mem::take(&mut self.partial[i]);
        self.lines[i] += 1;
        let cut = length > kept.len();
        if kept.last() == Some(&b'\r') && !cut {
            kept.pop();
        }
        let text = String::from_utf8_lossy(&kept);
        // A line cut inside a character keeps what is whole, and a line cut
        // inside a word drops that word's last `CUT_WORD` bytes at most: it
        // may be the start of a secret the cut left too short to be
        // recognized.
        let text = if cut {
            let whole = text.trim_end_matches('\u{fffd}');
            let word_start = whole
                .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || "_-.+/=:~".contains(c))
                .len();
            // Past `word_start` every byte is ASCII: any cut there is whole.
            &whole[..word_start.max(whole.len().saturating_sub(CUT_WORD))]
        } else {
            text.as_ref()
        };
        // Before it is kept anywhere: the tail goes to the model. A line
        // whose chunks held no anchor of a secret goes as it is.
        let dirty = std::mem::take(&mut self.dirty[i]);
        let (text, _) = if dirty || self.streams[i].is_open() {
            self.streams[i].line(&self.target.redactor, text)
        } else {
            (std::borrow::Cow::Borrowed(text), 0)
        };
        let text = text.as_ref();
        self.tail.push_back(TailLine {
            source,
            text: crate::core::budget::cut(text, TAIL_LINE_BYTES),
        });
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
        }
        // The target outlives the recorder: the record borrows it, not self.
        let target = self.target;
        let record = LineRecord {
            session_id: &target.session_id,
            run_id: &target.run_id,
            source: source.as_str(),
            message: text,
            timestamp: at,
            truncated_from: (length > kept.len()).then_some(length),
            agent_run: target.agent,
        };
        self.append(&record);
    }

    pub(super) fn exit(&mut self, command: &[String], ending: Ending, duration_ms: u64) {
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
            // The command line may carry a secret too (`curl -H "Authorization: Bearer …"`).
            command: self
                .target
                .redactor
                .words(command)
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

    pub(super) fn flush(&mut self) -> Result<(), RunError> {
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
