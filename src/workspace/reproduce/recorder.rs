//! The run's records: each line of output, each logpoint hit and note, and
//! the exit record, batched into the run's log file within its byte cap.

use super::{now_ms, RunError, Target, BATCH_BYTES};
use crate::core::redact::LineStream;
use crate::core::reproduction::{Ending, Source, TailLine, LINE_CAP};
use crate::workspace::logpoints::{self, RunNote, SetLogpoint};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::Write;

/// A line of output as recorded (written by hand in `append_line`; this
/// is the shape it must equal, checked in the tests).
#[cfg(test)]
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
    /// The attempt of a repeated reproduction it came from (attempts may
    /// run side by side).
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u64>,
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
    /// Attempt i of n of a repeated reproduction.
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<u64>,
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
    /// Each stream's line record up to its message, made once.
    line_prefix: [Vec<u8>; 2],
    /// The last timestamp written and its digits: most lines come in the
    /// same millisecond as the one before.
    stamp: (u64, Vec<u8>),
    /// The attempt of a repeated reproduction this run of the program is.
    pub(super) attempt: Option<u64>,
    /// Tests hold the paths that take many lines at once to this one.
    #[cfg(test)]
    pub(super) line_by_line: bool,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u64>,
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
    /// The logpoints the note says were not set (the hit table reads them).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    not_set: &'a [String],
    timestamp: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent_run: bool,
}

pub(super) fn index(source: Source) -> usize {
    match source {
        Source::Stdout => 0,
        Source::Stderr => 1,
    }
}

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
            line_prefix: Default::default(),
            stamp: (u64::MAX, Vec::new()),
            attempt: None,
            #[cfg(test)]
            line_by_line: false,
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
        self.within_cap(before)
    }

    /// The record written into the batch from `before` on stays when the
    /// run's cap has room for it; else it is taken back and the run capped.
    fn within_cap(&mut self, before: usize) -> bool {
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
            attempt: self.attempt,
            agent_run: self.target.agent,
        };
        self.append(&record);
    }

    /// What `run` says about the logpoints, as a record of the run.
    pub(super) fn note(&mut self, note: &RunNote, at: u64) {
        let record = NoteRecord {
            session_id: &self.target.session_id,
            run_id: &self.target.run_id,
            source: "sidecar",
            message: &note.message,
            not_set: &note.not_set,
            timestamp: at,
            agent_run: self.target.agent,
        };
        self.append(&record);
    }

    /// A `LineRecord` of a line that needs no escape and was not cut;
    /// false when the run's cap is reached.
    pub(super) fn append_plain_line(&mut self, source: Source, text: &str, at: u64) -> bool {
        let before = self.record_start(source);
        self.batch.reserve(text.len() + 64);
        self.batch.push(b'"');
        self.batch.extend_from_slice(text.as_bytes());
        self.batch.push(b'"');
        self.record_end(at, None);
        self.within_cap(before)
    }

    /// A `LineRecord`, written field by field (the hottest path of `run`:
    /// serde's map machinery cost more than the line's own escaping).
    pub(super) fn append_line(
        &mut self,
        source: Source,
        text: &str,
        at: u64,
        truncated_from: Option<usize>,
    ) {
        let before = self.record_start(source);
        crate::core::json_string::write(&mut self.batch, text);
        self.record_end(at, truncated_from);
        self.within_cap(before);
    }

    /// A line record up to its message: where it starts in the batch.
    fn record_start(&mut self, source: Source) -> usize {
        let before = self.batch.len();
        let prefix = &self.line_prefix[index(source)];
        if prefix.is_empty() {
            let target = self.target;
            let prefix = format!(
                "{{\"sessionId\":{},\"runId\":{},\"source\":\"{}\",\"message\":",
                serde_json::Value::from(target.session_id.as_str()),
                serde_json::Value::from(target.run_id.as_str()),
                source.as_str()
            );
            self.line_prefix[index(source)] = prefix.into_bytes();
        }
        self.batch
            .extend_from_slice(&self.line_prefix[index(source)]);
        before
    }

    /// A line record after its message.
    fn record_end(&mut self, at: u64, truncated_from: Option<usize>) {
        self.batch.extend_from_slice(b",\"timestamp\":");
        if self.stamp.0 != at {
            self.stamp.1.clear();
            let _ = write!(self.stamp.1, "{at}");
            self.stamp.0 = at;
        }
        self.batch.extend_from_slice(&self.stamp.1);
        if let Some(length) = truncated_from {
            let _ = write!(self.batch, ",\"truncatedFrom\":{length}");
        }
        if let Some(attempt) = self.attempt {
            let _ = write!(self.batch, ",\"attempt\":{attempt}");
        }
        if self.target.agent {
            self.batch.extend_from_slice(b",\"agentRun\":true");
        }
        self.batch.extend_from_slice(b"}\n");
    }

    pub(super) fn exit(
        &mut self,
        command: &[String],
        ending: Ending,
        duration_ms: u64,
        attempt: Option<(u64, u64)>,
    ) {
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
            attempt: attempt.map(|a| a.0),
            attempts: attempt.map(|a| a.1),
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::workspace::reproduce) fn target(agent: bool) -> Target {
        Target {
            session_id: "s\"1".into(),
            run_id: "r1-\u{e9}".into(),
            file: std::path::PathBuf::from("/dev/null"),
            agent,
            redactor: crate::core::redact::Redactor::off(),
        }
    }

    #[test]
    fn hand_written_line_records_are_what_serde_writes() {
        for (agent, attempt) in [(false, None), (true, None), (false, Some(3))] {
            let target = target(agent);
            let file = std::fs::File::open("/dev/null").unwrap();
            let mut recorder = Recorder::new(&target, file, u64::MAX);
            recorder.attempt = attempt;
            let texts = [
                "plain",
                "quote \" and \\ back",
                "tab\tnul\u{0}bell\u{7}",
                "\u{2028}é😀",
                "",
            ];
            let mut expected = Vec::new();
            for (n, text) in texts.iter().enumerate() {
                let truncated_from = (n % 2 == 1).then_some(4096 + n);
                for source in [Source::Stdout, Source::Stderr] {
                    recorder.append_line(source, text, 17 + n as u64, truncated_from);
                    let record = LineRecord {
                        session_id: &target.session_id,
                        run_id: &target.run_id,
                        source: source.as_str(),
                        message: text,
                        timestamp: 17 + n as u64,
                        truncated_from,
                        attempt,
                        agent_run: agent,
                    };
                    serde_json::to_writer(&mut expected, &record).unwrap();
                    expected.push(b'\n');
                }
            }
            assert_eq!(
                String::from_utf8(recorder.batch.clone()).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }
}
