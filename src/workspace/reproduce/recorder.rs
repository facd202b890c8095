//! The run's records: each line of output, each logpoint hit and note, and
//! the exit record, batched into the run's log file within its byte cap.

use super::{now_ms, RunError, Target, BATCH_BYTES};
use crate::core::redact::{LineStream, PRIVATE_KEY_MARK};
use crate::core::reproduction::{Ending, Source, TailLine, LINE_CAP, TAIL_LINES, TAIL_LINE_BYTES};
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
    line_by_line: bool,
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

    /// A chunk of a stream; `anchors` are where in it a secret's anchor
    /// ends (in order), so only the lines holding one are redacted; None
    /// when the chunk was not scanned (every line it ends is checked).
    pub(super) fn take(
        &mut self,
        source: Source,
        mut bytes: &[u8],
        at: u64,
        anchors: Option<&[usize]>,
    ) {
        let i = index(source);
        let every_line = anchors.is_none() || self.target.redactor.checks_every_line();
        let anchors = anchors.unwrap_or_default();
        // The chunk checked as UTF-8 once, at memory speed: its whole lines
        // need no check of their own (a chunk that ends inside a character
        // leaves its lines to theirs).
        let checked = std::str::from_utf8(bytes).ok();
        // Only a chunk's last `TAIL_LINES` lines can still be in the tail
        // when it is read: each later line pushes the oldest out.
        let ended = memchr::memchr_iter(b'\n', bytes).count();
        let tail_from = ended.saturating_sub(TAIL_LINES);
        let (mut offset, mut next_anchor, mut line) = (0usize, 0usize, 0usize);
        let plain = checked.filter(|_| !every_line && self.takes_plain_lines());
        while !bytes.is_empty() {
            let fresh = self.partial[i].0.is_empty() && self.partial[i].1 == 0;
            if let (Some(text), true) = (plain, fresh && !self.capped && !self.streams[i].is_open())
            {
                // Up to the line of the next anchor, if any.
                let until = anchors.get(next_anchor).copied().unwrap_or(text.len());
                let (to, lines) =
                    self.plain_lines(source, text, offset, until, line, tail_from, at);
                if lines > 0 {
                    bytes = &bytes[to - offset..];
                    (offset, line) = (to, line + lines);
                    continue;
                }
            }
            if self.capped && fresh && line < tail_from {
                if let Some(skipped) = self.count_past_cap(i, bytes, tail_from - line) {
                    bytes = &bytes[skipped..];
                    offset += skipped;
                    line = tail_from;
                    while next_anchor < anchors.len() && anchors[next_anchor] < offset {
                        next_anchor += 1;
                    }
                    continue;
                }
            }
            let newline = memchr::memchr(b'\n', bytes);
            let piece_end = offset + newline.map_or(bytes.len(), |n| n + 1);
            while next_anchor < anchors.len() && anchors[next_anchor] < piece_end {
                self.dirty[i] = true;
                next_anchor += 1;
            }
            self.dirty[i] |= every_line;
            let (piece, ends) = match newline {
                Some(n) => (&bytes[..n], Some(n + 1)),
                None => (bytes, None),
            };
            let to_tail = line >= tail_from;
            if let (true, Some(n)) = (fresh, ends) {
                // A whole line in the chunk: recorded from where it lies.
                let whole = piece.len();
                let text = checked
                    .filter(|_| whole <= LINE_CAP)
                    .and_then(|text| text.get(offset..offset + whole));
                self.record_line(
                    source,
                    &piece[..whole.min(LINE_CAP)],
                    text,
                    whole,
                    at,
                    to_tail,
                );
                bytes = &bytes[n..];
                offset += n;
                line += 1;
                continue;
            }
            let (kept, length, first_at) = &mut self.partial[i];
            if fresh {
                *first_at = at;
            }
            let room = LINE_CAP.saturating_sub(kept.len());
            kept.extend_from_slice(&piece[..piece.len().min(room)]);
            *length += piece.len();
            match ends {
                Some(n) => {
                    self.line(source, to_tail);
                    bytes = &bytes[n..];
                    offset += n;
                    line += 1;
                }
                None => break,
            }
        }
    }

    #[cfg(not(test))]
    fn takes_plain_lines(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn takes_plain_lines(&self) -> bool {
        !self.line_by_line
    }

    /// The whole lines of `text` from `from` that need nothing but their
    /// bytes between quotes (no escape, no cut, no carriage return) and end
    /// before `until` (where an anchor of a secret ends), recorded in one
    /// pass that finds their ends and what would need escaping at once:
    /// where they end, and how many there were. Most output is such lines.
    #[allow(clippy::too_many_arguments)]
    fn plain_lines(
        &mut self,
        source: Source,
        text: &str,
        from: usize,
        until: usize,
        mut line: usize,
        tail_from: usize,
        at: u64,
    ) -> (usize, usize) {
        let (i, bytes, first) = (index(source), text.as_bytes(), line);
        let mut start = from;
        while let Some(end) = crate::core::json_string::text_end(bytes, start) {
            if bytes[end] != b'\n' || end >= until || end - start > LINE_CAP {
                break;
            }
            let piece = &text[start..end];
            self.lines[i] += 1;
            if line >= tail_from {
                self.keep_in_tail(source, piece);
            }
            line += 1;
            if !self.append_plain_line(source, piece, at) {
                start = end + 1;
                break;
            }
            start = end + 1;
        }
        (start, line - first)
    }

    /// Past the cap, the whole lines of `bytes` before its last
    /// `TAIL_LINES` (`lines` of them) are only counted: how many bytes they
    /// take. None when a private key block may open or run in them, which
    /// the stream's redaction must follow line by line.
    fn count_past_cap(&mut self, i: usize, bytes: &[u8], lines: usize) -> Option<usize> {
        if self.streams[i].is_open() {
            return None;
        }
        // From the end: the newline with the tail's lines after it.
        let end = memchr::memrchr_iter(b'\n', bytes).nth(TAIL_LINES)? + 1;
        if memchr::memmem::find(&bytes[..end], PRIVATE_KEY_MARK.as_bytes()).is_some() {
            return None;
        }
        self.lines[i] += lines as u64;
        self.dropped += lines as u64;
        Some(end)
    }

    /// The stream ended: its unfinished line, if any, is a line.
    pub(super) fn close(&mut self, source: Source, at: u64) {
        let (_, length, first_at) = &mut self.partial[index(source)];
        if *length > 0 {
            if *first_at == 0 {
                *first_at = at;
            }
            self.line(source, true);
        }
    }

    /// The stream's unfinished line is whole: recorded (and kept for the
    /// tail when `to_tail`), and its buffer kept for the next one.
    pub(super) fn line(&mut self, source: Source, to_tail: bool) {
        let i = index(source);
        let mut kept = std::mem::take(&mut self.partial[i].0);
        let (length, at) = (self.partial[i].1, self.partial[i].2);
        self.partial[i].1 = 0;
        self.partial[i].2 = 0;
        self.record_line(source, &kept, None, length, at, to_tail);
        kept.clear();
        self.partial[i].0 = kept;
    }

    /// One line of output: `kept` its first bytes (all of them unless it
    /// was longer than `LINE_CAP`), `checked` the same when they are known
    /// to be UTF-8, `length` its whole length; `to_tail` when it may still
    /// be among the stream's last lines.
    fn record_line(
        &mut self,
        source: Source,
        kept: &[u8],
        checked: Option<&str>,
        length: usize,
        at: u64,
        to_tail: bool,
    ) {
        let i = index(source);
        self.lines[i] += 1;
        let cut = length > kept.len();
        let kept = match kept.split_last() {
            Some((b'\r', rest)) if !cut => rest,
            _ => kept,
        };
        // Most output is valid UTF-8: checked at memory speed (with its
        // chunk, or here), and only a line that is not is rebuilt with
        // replacement characters.
        let text = match checked.and_then(|text| text.get(..kept.len())) {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => match std::str::from_utf8(kept) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(kept),
            },
        };
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
        if to_tail {
            self.keep_in_tail(source, text);
        }
        if self.capped {
            // Over the cap: counted, not written.
            self.dropped += 1;
            return;
        }
        self.append_line(source, text, at, cut.then_some(length));
    }

    fn keep_in_tail(&mut self, source: Source, text: &str) {
        // The oldest line's buffer is reused: no allocation per line.
        let mut tail = match self.tail.len() >= TAIL_LINES {
            true => self.tail.pop_front(),
            false => None,
        }
        .unwrap_or(TailLine {
            source,
            text: String::new(),
        });
        tail.source = source;
        tail.text.clear();
        if text.len() <= TAIL_LINE_BYTES {
            tail.text.push_str(text);
        } else {
            tail.text = crate::core::budget::cut(text, TAIL_LINE_BYTES);
        }
        self.tail.push_back(tail);
    }

    /// A `LineRecord` of a line that needs no escape and was not cut;
    /// false when the run's cap is reached.
    fn append_plain_line(&mut self, source: Source, text: &str, at: u64) -> bool {
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
    fn append_line(&mut self, source: Source, text: &str, at: u64, truncated_from: Option<usize>) {
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
mod tests {
    use super::*;

    fn target(agent: bool) -> Target {
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

    #[test]
    fn a_crlf_line_is_not_called_cut_and_lines_split_over_chunks_are_whole() {
        let target = target(false);
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(&target, file, u64::MAX);
        recorder.take(Source::Stdout, b"one\r\ntw", 1, Some(&[]));
        recorder.take(Source::Stdout, b"o\nthree", 2, Some(&[]));
        recorder.close(Source::Stdout, 3);
        let text = String::from_utf8(recorder.batch.clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let messages: Vec<&str> = lines
            .iter()
            .map(|l| l["message"].as_str().unwrap())
            .collect();
        assert_eq!(messages, ["one", "two", "three"]);
        assert!(
            lines.iter().all(|l| l.get("truncatedFrom").is_none()),
            "{text}"
        );
        assert_eq!(
            lines[1]["timestamp"], 1,
            "a line is timed by its first byte"
        );
        assert_eq!(recorder.lines, [3, 0]);
    }
    #[test]
    fn lines_of_checked_chunks_and_of_chunks_cut_inside_a_character_read_alike() {
        let target = target(false);
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(&target, file, u64::MAX);
        // Whole and valid; then "é" cut between two chunks; then a chunk
        // that is not UTF-8 at all.
        recorder.take(Source::Stdout, "café\r\nnaïve\n".as_bytes(), 1, Some(&[]));
        recorder.take(Source::Stdout, b"r\xc3", 2, Some(&[]));
        recorder.take(Source::Stdout, b"\xa9sum\xc3\nok\n\xff\xfe\n", 3, Some(&[]));
        recorder.close(Source::Stdout, 4);
        let text = String::from_utf8(recorder.batch.clone()).unwrap();
        let messages: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message"].to_string())
            .collect();
        assert_eq!(
            messages,
            [
                "\"café\"",
                "\"naïve\"",
                "\"résum\u{fffd}\"",
                "\"ok\"",
                "\"\u{fffd}\u{fffd}\""
            ]
        );
    }

    /// A recorder given `stream` in `chunks`: anchors where the reader
    /// finds them, and none scanned once the run is capped (as the reader
    /// stops then); `line_by_line`, the reference, reads each line alone.
    fn recorded<'t>(
        target: &'t Target,
        stream: &[u8],
        chunks: &[usize],
        cap: u64,
        line_by_line: bool,
    ) -> Recorder<'t> {
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(target, file, cap);
        recorder.line_by_line = line_by_line;
        let anchors = target.redactor.anchors_in(stream);
        let mut start = 0;
        for &end in chunks.iter().chain([&stream.len()]) {
            let end = end.clamp(start, stream.len());
            if end == start {
                continue;
            }
            let found: Vec<usize> = anchors
                .iter()
                .filter(|&&a| (start..end).contains(&a))
                .map(|a| a - start)
                .collect();
            let scanned = (!recorder.capped).then_some(found.as_slice());
            recorder.take(Source::Stdout, &stream[start..end], 1, scanned);
            start = end;
        }
        recorder.close(Source::Stdout, 1);
        recorder
    }

    proptest::proptest! {
        /// Plain lines are recorded many at once, lines past the cap are
        /// counted in one pass, and only a chunk's last lines are kept for
        /// the tail: the records, counts and tail are those of a recorder
        /// given one line at a time that reads each alone.
        #[test]
        fn chunks_past_the_cap_count_and_keep_what_lines_one_by_one_do(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z ]{0,20}",
                    "[a-z \"\\\\\t\r\u{e9}\u{2028}]{0,20}",
                    "Authorization: Bearer [a-zA-Z0-9]{12,20}",
                    proptest::strategy::Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
                    proptest::strategy::Just("-----END RSA PRIVATE KEY-----".to_string()),
                    "[A-Za-z0-9+/]{40,64}",
                    proptest::strategy::Just("x".repeat(LINE_CAP + 10)),
                ],
                0..200,
            ),
            chunks in proptest::collection::vec(0usize..20_000, 0..12),
            cap in 0u64..6_000,
            ends_with_newline in proptest::bool::ANY,
        ) {
            let target = Target { redactor: crate::core::redact::Redactor::default(), ..target(false) };
            let mut stream = lines.join("\n").into_bytes();
            if ends_with_newline {
                stream.push(b'\n');
            }
            let mut chunks = chunks;
            chunks.sort_unstable();
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &stream).map(|n| n + 1).collect();
            let chunked = recorded(&target, &stream, &chunks, cap, false);
            let by_line = recorded(&target, &stream, &ends, cap, true);
            proptest::prop_assert_eq!(&chunked.lines, &by_line.lines);
            proptest::prop_assert_eq!(chunked.dropped, by_line.dropped);
            proptest::prop_assert_eq!(&chunked.tail, &by_line.tail);
            proptest::prop_assert_eq!(
                String::from_utf8_lossy(&chunked.batch),
                String::from_utf8_lossy(&by_line.batch)
            );
        }
    }
}
