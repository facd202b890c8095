//! What a run's records say beyond its probe values, read in one pass: the
//! person's marks, the recorded programs' exit records, the logpoints `run`
//! could not set, and the lines in which a probe recorded its own failure
//! (a source block's `probeError`, a logpoint hit whose every value is an
//! `$error`). A line is parsed only when it holds one of those words.

use super::marks::{Mark, MARKER, MARKS_LISTED};
use super::summary::LogSummary;
use crate::core::hits::{ProgramEnd, RunFacts};
use crate::core::redact::Redactor;
use crate::core::reproduction::Ending;
use serde_json::Value;
use std::io::{self, Read};
use std::path::Path;

/// The field a source block writes instead of `data` when it failed.
pub const PROBE_ERROR: &str = "probeError";
/// What a logpoint writes in place of a value it could not read.
const VALUE_ERROR: &str = "$error";
/// The `source` of a recorded program's exit record.
const EXIT: &str = "exit";
/// The `source` of `run`'s own notes (the logpoints it could not set).
const NOTE: &str = "sidecar";
/// Recorded programs a run's facts keep (the latest).
const PROGRAMS_KEPT: usize = 256;
/// Probes whose failures or unset logpoints are kept.
const PROBES_KEPT: usize = super::SUMMARY_PROBES;
/// The longest failure or note kept.
const WORDS: usize = 200;

/// A run's marks and facts.
#[derive(Debug, Default)]
pub struct Outcomes {
    pub marks: Vec<Mark>,
    pub marks_total: u64,
    pub facts: RunFacts,
}

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;
/// A line longer than this is counted, never parsed for its facts (they
/// are short records: an exit, a mark, a note, a failure).
const MAX_FACT_LINE: usize = 4 * 1024 * 1024;

/// The words a line holds when it says anything beyond its values.
fn words() -> &'static aho_corasick::AhoCorasick {
    static WORDS: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    // Leftmost-first lets the search use its vector prefilter (about
    // 5 GB/s here); the standard kind has none for several words and ran
    // the automaton over every byte (400 MB/s, issue 33). The lines found
    // are the same: no word holds a line break.
    WORDS.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build([MARKER, "\"exit\"", "notSet", PROBE_ERROR, VALUE_ERROR])
            .expect("fixed words build")
    })
}

/// Reads `file` once for its marks and facts; an absent file has none.
/// The words are searched in whole chunks and only the lines holding one
/// are cut out and parsed: most of a large log is never copied.
pub fn read(file: &Path, redactor: &Redactor) -> io::Result<Outcomes> {
    let mut handle = match crate::workspace::runlog::open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Outcomes::default()),
        Err(e) => return Err(e),
    };
    let words = words();
    let mut out = Outcomes::default();
    let left = handle.metadata()?.len();
    let mut chunk = vec![0u8; crate::workspace::runlog::read_size(left, CHUNK)];
    // Bytes after the last line break read so far, and the lines before them.
    let (mut pending, mut lines) = (Vec::new(), 0u64);
    // Inside a line too long to parse: skip to its end.
    let mut skipping = false;
    loop {
        let read = match handle.read(&mut chunk) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let at_end = read == 0;
        let mut fresh = &chunk[..read];
        if skipping {
            match memchr::memchr(b'\n', fresh) {
                Some(at) => {
                    lines += 1;
                    skipping = false;
                    fresh = &fresh[at + 1..];
                }
                None if at_end => break,
                None => continue,
            }
        }
        pending.extend_from_slice(fresh);
        let whole = if at_end {
            pending.len()
        } else {
            match memchr::memrchr(b'\n', &pending) {
                Some(at) => at + 1,
                None if pending.len() > MAX_FACT_LINE => {
                    pending.clear();
                    skipping = true;
                    continue;
                }
                None => continue,
            }
        };
        let region = &pending[..whole];
        let (mut counted, mut handled) = (0usize, 0usize);
        for found in words.find_iter(region) {
            if found.start() < handled {
                continue;
            }
            let start = memchr::memrchr(b'\n', &region[..found.start()]).map_or(0, |at| at + 1);
            let stop = memchr::memchr(b'\n', &region[found.start()..])
                .map_or(region.len(), |at| found.start() + at);
            lines += memchr::memchr_iter(b'\n', &region[counted..start]).count() as u64;
            counted = start;
            handled = stop;
            out.line(lines + 1, &region[start..stop], redactor);
        }
        lines += memchr::memchr_iter(b'\n', &region[counted..]).count() as u64;
        pending.drain(..whole);
        if at_end {
            break;
        }
    }
    Ok(out)
}

/// The summary and the outcomes of a run in one read of its file: the
/// summary's pieces, read side by side, gather the lines that hold one of
/// the words, and those alone are parsed here in file order. When they
/// are too many to hold, the file is read again for them (`read`).
pub fn with_summary(file: &Path, redactor: &Redactor) -> io::Result<(LogSummary, Outcomes)> {
    let (summary, gathered) = super::summary::summarize_gathering(file, redactor)?;
    let outcomes = match gathered.and_then(|gathered| gathered.outcomes(redactor)) {
        Some(outcomes) => outcomes,
        None => read(file, redactor)?,
    };
    Ok((summary, outcomes))
}

/// Bytes of lines the readers of a file gather in all before they give up
/// (and the file is read again for them): a log whose every line is a
/// failure is not held.
const GATHERED_BYTES: usize = 16 << 20;

/// The lines of one piece of a file that hold one of the words, gathered
/// by a reader that goes through every line anyway (the summary's): their
/// numbers within the piece, and their bytes.
#[derive(Debug)]
pub(super) struct Gathered {
    /// Each line's number and where its bytes end in `bytes`.
    lines: Vec<(u64, usize)>,
    bytes: Vec<u8>,
    /// The bytes this reader may hold.
    room: usize,
    overflowed: bool,
}

impl Gathered {
    /// For one reader of the whole file.
    pub(super) fn new() -> Self {
        Gathered::share(1)
    }

    /// For one of `readers` reading a file side by side: together they
    /// hold no more than one.
    pub(super) fn share(readers: usize) -> Self {
        Gathered {
            lines: Vec::new(),
            bytes: Vec::new(),
            room: GATHERED_BYTES / readers.max(1),
            overflowed: false,
        }
    }

    fn overflowed() -> Self {
        Gathered {
            overflowed: true,
            ..Gathered::share(1)
        }
    }

    /// Line `number` of the piece, without its line break: kept when it
    /// holds one of the words.
    pub(super) fn offer(&mut self, number: u64, line: &[u8]) {
        if !self.overflowed && words().is_match(line) {
            self.keep(number, line);
        }
    }

    /// Line `number` of the piece, which its reader knows may hold a fact.
    pub(super) fn keep(&mut self, number: u64, line: &[u8]) {
        if self.overflowed || line.len() > MAX_FACT_LINE {
            return;
        }
        if self.bytes.len() + line.len() > self.room {
            *self = Gathered::overflowed();
            return;
        }
        self.bytes.extend_from_slice(line);
        self.lines.push((number, self.bytes.len()));
    }

    /// These lines followed by a later piece's, which starts after
    /// `before` lines of this one.
    pub(super) fn then(&mut self, later: Gathered, before: u64) {
        if self.overflowed || later.overflowed {
            *self = Gathered::overflowed();
            return;
        }
        self.room += later.room;
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(&later.bytes);
        self.lines.extend(
            later
                .lines
                .into_iter()
                .map(|(number, end)| (before + number, offset + end)),
        );
    }

    /// The outcomes of the lines gathered, as `read` finds them; None when
    /// they were too many to hold.
    pub(super) fn outcomes(self, redactor: &Redactor) -> Option<Outcomes> {
        if self.overflowed {
            return None;
        }
        let mut out = Outcomes::default();
        let mut start = 0;
        for (number, end) in self.lines {
            out.line(number, &self.bytes[start..end], redactor);
            start = end;
        }
        Some(out)
    }
}

impl Outcomes {
    /// Line `number` (without its line break), which holds one of the words.
    fn line(&mut self, number: u64, raw: &[u8], redactor: &Redactor) {
        if raw.len() > MAX_FACT_LINE {
            return;
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(raw) else {
            return;
        };
        if !value.is_object() {
            return;
        }
        redactor.record(&mut value);
        self.take(number, &value);
    }

    fn take(&mut self, line: u64, value: &Value) {
        let text = |key: &str| value.get(key).and_then(Value::as_str);
        match text("source") {
            Some(MARKER) => {
                self.marks_total += 1;
                if self.marks.len() < MARKS_LISTED {
                    self.marks.push(Mark {
                        line,
                        words: text("words").unwrap_or_default().to_string(),
                        timestamp: value.get("timestamp").cloned(),
                    });
                }
                return;
            }
            Some(EXIT) => {
                if let Some(program) = program_end(line, value) {
                    self.facts.attempts.add(!program.ended_normally());
                    if self.facts.programs.len() >= PROGRAMS_KEPT {
                        self.facts.programs.remove(0);
                    }
                    self.facts.programs.push(program);
                }
                return;
            }
            Some(NOTE) => {
                let ids = value.get("notSet").and_then(Value::as_array);
                let message = crate::core::budget::cut(text("message").unwrap_or(""), WORDS);
                for id in ids.into_iter().flatten().filter_map(Value::as_str) {
                    let not_set = &mut self.facts.not_set;
                    if not_set.len() < PROBES_KEPT && !not_set.contains_key(id) {
                        not_set.insert(id.to_string(), message.clone());
                    }
                }
                return;
            }
            _ => {}
        }
        let Some(probe_id) = text("probeId") else {
            return;
        };
        let Some(failure) = failure(value) else {
            return;
        };
        let failures = &mut self.facts.failures;
        if let Some((count, _)) = failures.get_mut(probe_id) {
            *count += 1;
        } else if failures.len() < PROBES_KEPT {
            failures.insert(
                probe_id.to_string(),
                (1, crate::core::budget::cut(&failure, WORDS)),
            );
        }
    }
}

/// The failure a probe's line records: its `probeError`, or the first
/// `$error` when every value of its `data` is one. None for a line with a
/// value.
pub fn failure(value: &Value) -> Option<String> {
    if let Some(error) = value.get(PROBE_ERROR) {
        return Some(
            error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string),
        );
    }
    let data = value.get("data")?.as_object()?;
    let mut first = None;
    for item in data.values() {
        let error = item.as_object().and_then(|o| o.get(VALUE_ERROR))?;
        first.get_or_insert_with(|| error.as_str().unwrap_or("it failed").to_string());
    }
    first
}

/// Whether a line read whole, with no escape in its keys or texts, may
/// hold a fact (`take`), from the fields a summary reads anyway: a mark,
/// an exit record or a note by its `source`, or a probe's failure by its
/// `probeError` or an `$error` in its `data`. It finds every line whose
/// facts the search for the words would find; only parsing says more.
pub(super) fn holds_facts(source: Option<&str>, probe_error: bool, data: Option<&str>) -> bool {
    matches!(source, Some(MARKER | EXIT | NOTE))
        || probe_error
        || data.is_some_and(|data| {
            // `$` is rare in data: find it, then the word.
            memchr::memchr_iter(b'$', data.as_bytes())
                .any(|at| data.as_bytes()[at..].starts_with(VALUE_ERROR.as_bytes()))
        })
}

/// A recorded program from its exit record.
fn program_end(line: u64, value: &Value) -> Option<ProgramEnd> {
    let number = |key: &str| value.get(key).and_then(Value::as_u64);
    let ended_ms = number("timestamp")?;
    let duration = number("durationMs").unwrap_or(0);
    let ending = if value.get("timedOut").and_then(Value::as_bool) == Some(true) {
        Ending::TimedOut {
            after_sec: duration / 1000,
        }
    } else if let Some(signal) = value.get("signal").and_then(Value::as_i64) {
        Ending::Signalled {
            signal: i32::try_from(signal).ok()?,
        }
    } else {
        Ending::Exited {
            code: i32::try_from(value.get("exitCode")?.as_i64()?).ok()?,
        }
    };
    let words: Vec<&str> = value
        .get("command")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let executable = words
        .first()
        .map(|word| crate::core::budget::cut(word, WORDS));
    Some(ProgramEnd {
        started_ms: ended_ms.saturating_sub(duration),
        ended_ms,
        ending,
        executable,
        command: crate::core::budget::cut(&words.join(" "), WORDS),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_across_chunk_boundaries_keep_their_line_numbers() {
        // Lines of 97 bytes and a mark every 997th line: marks fall on
        // either side of, and across, the 1 MiB chunks; one long line too.
        let mut text = String::new();
        let mut expected = Vec::new();
        for n in 1..=40_000u64 {
            if n % 997 == 0 {
                text.push_str(&format!("{{\"source\":\"marker\",\"words\":\"m{n}\"}}\n"));
                expected.push(n);
            } else if n == 5_000 {
                text.push_str(&format!(
                    "{{\"probeId\":\"p1\",\"data\":\"{}\"}}\n",
                    "y".repeat(5 << 20)
                ));
            } else {
                text.push_str(&format!("{:096}\n", n));
            }
        }
        text.push_str("{\"source\":\"marker\",\"words\":\"last, no line break\"}");
        let file = super::super::test_logs::log("outcomes-chunks", &text);
        let out = read(&file, &Redactor::default()).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(out.marks_total, expected.len() as u64 + 1);
        let lines: Vec<u64> = out.marks.iter().map(|m| m.line).collect();
        assert_eq!(lines, expected[..MARKS_LISTED].to_vec());
        assert_eq!(out.marks[3].words, format!("m{}", expected[3]));
    }

    #[test]
    fn exits_unset_logpoints_and_failures_are_read_and_values_are_not() {
        let lines = [
            json!({"source": "sidecar", "message": "logpoint p3 (a.py:9) is not set: no code", "notSet": ["p3"]}),
            json!({"probeId": "p1", "data": {"x": 1}}),
            json!({"probeId": "p2", "data": {"x": {"$error": "NameError: x"}, "y": {"$error": "NameError: y"}}}),
            json!({"probeId": "p2", "data": {"x": {"$error": "NameError: x"}, "y": 2}}),
            json!({"probeId": "p4", "probeError": "ReferenceError: total is not defined"}),
            json!({"probeId": "p5", "data": {"note": "an $error in words is a value"}}),
            json!({"source": "exit", "timestamp": 5_000, "durationMs": 1_200, "exitCode": 3, "command": ["./app", "--x"]}),
            json!({"source": "exit", "timestamp": 9_000, "durationMs": 60_000, "signal": 9, "timedOut": true, "command": ["sleep"]}),
            json!({"source": "marker", "words": "clicked Save"}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let file = super::super::test_logs::log("outcomes", &text);
        let out = read(&file, &Redactor::default()).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(out.marks_total, 1);
        assert_eq!(out.marks[0].line, 9);
        assert_eq!(
            out.facts.not_set["p3"],
            "logpoint p3 (a.py:9) is not set: no code"
        );
        assert_eq!(out.facts.failures["p2"], (1, "NameError: x".to_string()));
        assert_eq!(
            out.facts.failures["p4"],
            (1, "ReferenceError: total is not defined".to_string())
        );
        assert!(!out.facts.failures.contains_key("p1") && !out.facts.failures.contains_key("p5"));
        assert_eq!(
            out.facts.programs,
            vec![
                ProgramEnd {
                    started_ms: 3_800,
                    ended_ms: 5_000,
                    ending: Ending::Exited { code: 3 },
                    executable: Some("./app".into()),
                    command: "./app --x".into(),
                    line: 7,
                },
                ProgramEnd {
                    started_ms: 0,
                    ended_ms: 9_000,
                    ending: Ending::TimedOut { after_sec: 60 },
                    executable: Some("sleep".into()),
                    command: "sleep".into(),
                    line: 8,
                },
            ]
        );
    }
}
