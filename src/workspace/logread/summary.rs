//! The per-probe summary of a run's log (DESIGN section 7): per probe its
//! count, first and last timestamp, location and a few distinct values.
//!
//! One pass at memory speed (issue 33): lines are found with `memchr` in
//! the reader's buffer and parsed in place, only the fields a summary keeps
//! are borrowed out of them, and a large file is cut at line boundaries
//! into one piece per core, summarised side by side and merged in file
//! order. The same pass gathers the few lines that hold a run's facts
//! (marks, exits, failures: `outcomes::with_summary`), so a summary with
//! its hit table reads the file once. The file is read, not mapped: the
//! program under debug can truncate its own log, and a mapping would then
//! fault (SIGBUS) instead of returning an error.

use super::outcomes::Gathered;
use super::piece::Piece;
use super::ranges::{for_each_line, piece_bounds, Range};
use super::Malformed;
use crate::core::hits::{NoHit, Verdict};
use crate::core::model::Probe;
use crate::core::redact::Redactor;
use serde::Serialize;
use serde_json::Value;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

/// Probes a summary keeps figures for; lines of later ones are only counted,
/// so a log of a million distinct ids costs no more than one of 200.
pub const SUMMARY_PROBES: usize = 200;
/// The longest line a summary reads whole; a longer one is counted from
/// the fields before its long value (`skim_summary_line`).
pub(super) const MAX_SUMMARY_LINE: usize = 4 * 1024 * 1024;
const READ_BUFFER: usize = 1 << 20;
/// A file smaller than this is summarised on one thread.
const PARALLEL_FROM: u64 = 16 * 1024 * 1024;
/// Pieces a file is cut into at most.
const MAX_PIECES: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeFigures {
    pub probe_id: String,
    pub hypothesis_id: Option<String>,
    pub location: Option<String>,
    pub count: u64,
    pub first_timestamp: Option<Value>,
    pub last_timestamp: Option<Value>,
    /// Up to five distinct `data` values, in the order first seen.
    pub values: Vec<Value>,
    /// Lines that carried values: `count` less the failed ones.
    pub hits: u64,
    /// Lines in which the probe recorded its own failure.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// Why a probe of the run's round logged no value (`hits` 0), from the
    /// run's records (`core::hits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<NoHit>,
    /// The reason in words, and the words of the record it rests on when
    /// the program or its runtime wrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl ProbeFigures {
    /// A probe of the round that logged nothing, with its verdict.
    pub fn not_logged(probe: &Probe, verdict: Option<Verdict>) -> Self {
        let (reason, why, evidence) = match verdict {
            Some(v) => (Some(v.reason), Some(v.why), v.evidence),
            None => (None, None, None),
        };
        ProbeFigures {
            probe_id: probe.id.clone(),
            hypothesis_id: probe.hypothesis_id.clone(),
            location: Some(probe.location()),
            count: 0,
            first_timestamp: None,
            last_timestamp: None,
            values: Vec::new(),
            hits: 0,
            failed: 0,
            reason,
            why,
            evidence,
        }
    }

    /// The verdict on a probe with no hit.
    pub fn judge(&mut self, verdict: Option<Verdict>) {
        if let Some(v) = verdict {
            self.reason = Some(v.reason);
            self.why = Some(v.why);
            self.evidence = v.evidence;
        }
    }

    /// One line for a reader: `p1 (H1) x3 at cart.py:4: {"n":1} | {"n":2}`,
    /// or for a probe with no value `p2 (H1) at cart.py:9: no value
    /// [notReached]: the program ended normally without running this line`.
    pub fn describe(&self) -> String {
        // The program wrote every field: none may start a line of its own.
        use crate::core::budget::{ID, LOCATION, SUMMARY_VALUES};
        use crate::core::escape::inline_cut;
        let head = format!(
            "{} ({})",
            inline_cut(&self.probe_id, ID),
            inline_cut(self.hypothesis_id.as_deref().unwrap_or("-"), ID),
        );
        let location = inline_cut(self.location.as_deref().unwrap_or("?"), LOCATION);
        let failed = if self.failed > 0 {
            format!(" ({} failed)", self.failed)
        } else {
            String::new()
        };
        if self.hits == 0 {
            let reason = self.reason.map_or("no reason recorded", NoHit::as_str);
            let why = self
                .why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            let evidence = self
                .evidence
                .as_deref()
                .map(|e| format!(" \u{2014} {}", inline_cut(e, SUMMARY_VALUES)))
                .unwrap_or_default();
            return format!("{head} at {location}: no value [{reason}]{why}{evidence}");
        }
        let values: Vec<String> = self.values.iter().map(Value::to_string).collect();
        format!(
            "{head} x{} at {location}{failed}: {}",
            self.hits,
            inline_cut(&values.join(" | "), SUMMARY_VALUES)
        )
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogSummary {
    /// Non-blank lines in the file.
    pub lines: u64,
    pub malformed: Malformed,
    /// Well-formed lines without a `probeId`.
    pub without_probe: u64,
    /// Per probe, in order of first appearance (at most 200).
    pub probes: Vec<ProbeFigures>,
    /// Probes first seen after the 200th: counted, not summarised.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlisted_probes: u64,
    /// Lines of the unlisted probes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlisted_lines: u64,
    /// Lines longer than a summary reads whole (4 MiB): each is counted
    /// under its probe when its `probeId` comes before the long value,
    /// else without a probe id; never as malformed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub too_long: u64,
    /// Lines per `source` (`stdout`, `stderr`, `exit` from `debug-sidecar
    /// run`); absent when no line has one. At most 8 sources are named,
    /// the rest count as `other`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sources: std::collections::BTreeMap<String, u64>,
    /// The person's marks, in order (at most 20): read with `afterLine` /
    /// `beforeLine` for what came before and after one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<super::marks::Mark>,
    /// Marks in the run, listed or not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub marks_total: u64,
    /// Each probe's values before and after the person's last mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub around_mark: Option<super::around_mark::MarkComparison>,
    /// The recorded programs of the run (each exit record an attempt of the
    /// reproduction) and how many failed; absent when none was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<crate::core::rates::Attempts>,
}

/// Distinct sources a summary names.
const SOURCES_NAMED: usize = 8;
/// The longest source name kept.
pub(super) const SOURCE_NAME: usize = 32;

impl LogSummary {
    pub(super) fn count_source(&mut self, source: &str, n: u64) {
        if let Some(count) = self.sources.get_mut(source) {
            *count += n;
            return;
        }
        let key = if self.sources.len() < SOURCES_NAMED && source.len() <= SOURCE_NAME {
            source.to_string()
        } else {
            "other".to_string()
        };
        *self.sources.entry(key).or_default() += n;
    }

    /// `marks: line 42 "clicked Save", line 90 "froze"`; None without marks.
    pub fn describe_marks(&self) -> Option<String> {
        if self.marks.is_empty() {
            return None;
        }
        let listed: Vec<String> = self
            .marks
            .iter()
            .map(|mark| {
                format!(
                    "line {} \"{}\"",
                    mark.line,
                    crate::core::escape::inline_cut(&mark.words, 120)
                )
            })
            .collect();
        let more = self.marks_total.saturating_sub(self.marks.len() as u64);
        let more = if more > 0 {
            format!(", +{more} more")
        } else {
            String::new()
        };
        Some(format!("the person's marks: {}{more}", listed.join(", ")))
    }

    /// `stdout 2, stderr 2, exit 1`, most first; None without sources.
    pub fn describe_sources(&self) -> Option<String> {
        if self.sources.is_empty() {
            return None;
        }
        let mut sources: Vec<(&String, &u64)> = self.sources.iter().collect();
        sources.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let listed: Vec<String> = sources
            .iter()
            .map(|(name, n)| format!("{} {n}", crate::core::escape::inline(name)))
            .collect();
        Some(listed.join(", "))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Count, first and last timestamp, a few distinct values and the location
/// of every probe in the file, in one pass with memory bounded by the number
/// of probes.
pub fn summarize(file: &Path, redactor: &Redactor) -> io::Result<LogSummary> {
    Ok(summarize_with(file, redactor, false)?.0)
}

/// `summarize`, and the lines that hold a run's outcomes (`Gathered`)
/// found on the way; None for an absent file.
pub(super) fn summarize_gathering(
    file: &Path,
    redactor: &Redactor,
) -> io::Result<(LogSummary, Option<Gathered>)> {
    summarize_with(file, redactor, true)
}

fn summarize_with(
    file: &Path,
    redactor: &Redactor,
    gather: bool,
) -> io::Result<(LogSummary, Option<Gathered>)> {
    let handle = match crate::workspace::runlog::open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((LogSummary::default(), gather.then(Gathered::new)))
        }
        Err(e) => return Err(e),
    };
    let length = handle.metadata()?.len();
    let pieces = if length >= PARALLEL_FROM {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_PIECES))
    } else {
        1
    };
    summarize_in_pieces(&handle, length, pieces, redactor, gather)
}

/// The summary of the file's first `length` bytes read as `pieces` pieces
/// side by side (and on to its end as one, when that is what it takes).
fn summarize_in_pieces(
    handle: &File,
    length: u64,
    pieces: usize,
    redactor: &Redactor,
    gather: bool,
) -> io::Result<(LogSummary, Option<Gathered>)> {
    if pieces > 1 {
        let bounds = piece_bounds(handle, length, pieces)?;
        let summaries: Vec<io::Result<Piece>> = std::thread::scope(|scope| {
            let running: Vec<_> = bounds
                .windows(2)
                .map(|range| {
                    let (start, end) = (range[0], range[1]);
                    let gathered = gather.then(|| Gathered::share(bounds.len() - 1));
                    scope.spawn(move || read_piece(handle, start, Some(end), redactor, gathered))
                })
                .collect();
            running
                .into_iter()
                .map(|thread| {
                    thread
                        .join()
                        .unwrap_or_else(|_| Err(io::Error::other("panicked")))
                })
                .collect()
        });
        let mut merged: Option<Piece> = None;
        for piece in summaries {
            let piece = piece?;
            merged = match merged.take() {
                None => Some(piece),
                Some(before) => before.then(piece),
            };
            if merged.is_none() {
                break;
            }
        }
        if let Some(merged) = merged {
            return Ok(merged.finish());
        }
    }
    Ok(read_piece(handle, 0, None, redactor, gather.then(Gathered::new))?.finish())
}

/// The summary of the lines after line `after` and before line `before`
/// (1-based; None: to the end), read as one piece: a probe's values on
/// either side of a mark.
pub fn summarize_between(
    file: &Path,
    redactor: &Redactor,
    after: u64,
    before: Option<u64>,
) -> io::Result<LogSummary> {
    let handle = match crate::workspace::runlog::open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(LogSummary::default()),
        Err(e) => return Err(e),
    };
    let mut piece = Piece::new(redactor, None);
    let range = Range {
        handle: &handle,
        at: 0,
        end: None,
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, range);
    let mut number = 0u64;
    for_each_line(&mut reader, MAX_SUMMARY_LINE, |line, whole| {
        number += 1;
        if number > after && before.is_none_or(|b| number < b) {
            piece.add(line, whole);
        }
    })?;
    Ok(piece.finish().0)
}

fn read_piece<'r>(
    handle: &File,
    start: u64,
    end: Option<u64>,
    redactor: &'r Redactor,
    gathered: Option<Gathered>,
) -> io::Result<Piece<'r>> {
    let mut piece = Piece::new(redactor, gathered);
    let range = Range {
        handle,
        at: start,
        end,
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, range);
    for_each_line(&mut reader, MAX_SUMMARY_LINE, |line, whole| {
        piece.add(line, whole)
    })?;
    Ok(piece)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use super::super::test_logs::{log, LOG};

    fn summarize(file: &Path) -> io::Result<LogSummary> {
        super::summarize(file, &Redactor::default())
    }

    /// The same file read as `pieces` pieces.
    fn in_pieces(file: &Path, pieces: usize) -> LogSummary {
        gathered_in_pieces(file, pieces).0
    }

    /// The same file read as `pieces` pieces, its outcomes' lines gathered.
    fn gathered_in_pieces(file: &Path, pieces: usize) -> (LogSummary, Gathered) {
        let handle = File::open(file).unwrap();
        let length = handle.metadata().unwrap().len();
        let (summary, gathered) =
            summarize_in_pieces(&handle, length, pieces, &Redactor::default(), true).unwrap();
        (summary, gathered.expect("gathered"))
    }

    #[test]
    fn a_record_too_long_to_read_whole_counts_under_its_probe() {
        let big = "v".repeat(MAX_SUMMARY_LINE + 10);
        let text = format!(
            "{{\"probeId\":\"p1\",\"timestamp\":1,\"data\":\"a\"}}\n\
             {{\"probeId\":\"p1\",\"location\":\"a.py:4\",\"timestamp\":2,\"data\":\"{big}\"}}\n\
             {{\"data\":\"{big}\",\"probeId\":\"p2\"}}\n"
        );
        let file = log("too-long.jsonl", &text);
        let summary = summarize(&file).unwrap();
        assert_eq!(summary.lines, 3);
        assert_eq!(summary.malformed.count, 0);
        assert_eq!(summary.too_long, 2);
        assert_eq!(summary.probes.len(), 1);
        let p1 = &summary.probes[0];
        assert_eq!(p1.count, 2);
        assert_eq!(p1.location.as_deref(), Some("a.py:4"));
        assert_eq!(p1.last_timestamp, Some(json!(2)));
        // Its id after the long value: counted, without a probe id.
        assert_eq!(summary.without_probe, 1);
    }

    #[test]
    fn the_summary_counts_each_probe() {
        let file = log("summary.jsonl", LOG);
        let summary = summarize(&file).unwrap();
        assert_eq!(summary.lines, 6);
        assert_eq!(summary.malformed.count, 2);
        assert_eq!(summary.malformed.lines, [2, 6]);
        let p1 = &summary.probes[0];
        assert_eq!((p1.probe_id.as_str(), p1.count), ("p1", 3));
        assert_eq!(p1.location.as_deref(), Some("a.py:4"));
        assert_eq!(
            (p1.first_timestamp.clone(), p1.last_timestamp.clone()),
            (Some(json!(10)), Some(json!(13)))
        );
        assert_eq!(p1.values, [json!({"n": 1}), json!({"n": 3})]);
        assert_eq!(summary.probes[1].hypothesis_id.as_deref(), Some("H2"));
        assert_eq!(
            summarize(&file.with_extension("missing")).unwrap(),
            LogSummary::default()
        );
    }

    #[test]
    fn lines_are_found_across_buffers_and_long_ones_are_capped() {
        let text = format!("short\n{}\n\nend", "x".repeat(30));
        for buffer in [1, 2, 3, 7, 64] {
            let mut reader = BufReader::with_capacity(buffer, text.as_bytes());
            let mut lines = Vec::new();
            for_each_line(&mut reader, 8, |line, whole| {
                lines.push((
                    String::from_utf8_lossy(&line[..line.len().min(8)]).into_owned(),
                    whole,
                ))
            })
            .unwrap();
            assert_eq!(
                lines,
                [
                    ("short".into(), true),
                    ("xxxxxxxx".into(), false),
                    (String::new(), true),
                    ("end".into(), true)
                ],
                "buffer {buffer}"
            );
        }
    }

    /// A log with interleaved probes, sources, malformed and blank lines:
    /// cut anywhere into any number of pieces it summarises as read whole.
    fn mixed_log(lines: usize, probes: usize, seed: u64) -> String {
        let mut text = String::new();
        let mut state = seed;
        for i in 0..lines {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (state >> 33) as usize;
            match pick % 19 {
                0 => text.push_str("not json\n"),
                11 => text.push_str(&format!(
                    "{{\"source\":\"marker\",\"words\":\"m{i}\",\"timestamp\":{i}}}\n"
                )),
                12 => text.push_str(&format!(
                    "{{\"source\":\"exit\",\"timestamp\":{i},\"durationMs\":1,\
                     \"exitCode\":{},\"command\":[\"./app\"]}}\n",
                    (pick >> 4) % 2
                )),
                13 => text.push_str(&format!(
                    "{{\"probeId\":\"p{}\",\"probeError\":\"E{}\"}}\n",
                    pick % probes,
                    pick % 5
                )),
                14 => text.push_str(&format!(
                    "{{\"probeId\":\"p{}\",\"data\":{{\"x\":{{\"$error\":\"N{}\"}}}}}}\n",
                    pick % probes,
                    pick % 5
                )),
                // Facts the fast path leaves to serde, and words that are
                // only values.
                16 => text.push_str(&format!(
                    "{{\"source\":\"marker\",\"words\":\"caf\\u00e9 {i}\"}}\n"
                )),
                17 => text.push_str(&format!("{{\"probeId\":{i},\"source\":\"marker\"}}\n")),
                18 => text.push_str(&format!(
                    "{{\"probeId\":\"p{}\",\"data\":{{\"note\":\"marker \\\"exit\\\" $error\"}}}}\n",
                    pick % probes
                )),
                15 => text.push_str(&format!(
                    "{{\"source\":\"sidecar\",\"message\":\"not set {i}\",\
                     \"notSet\":[\"p{}\"]}}\n",
                    pick % probes
                )),
                1 => text.push('\n'),
                2 => text.push_str(&format!(
                    "{{\"source\":\"s{}\",\"line\":\"o\"}}\n",
                    pick % 13
                )),
                _ => text.push_str(&format!(
                    "{{\"probeId\":\"p{}\",\"hypothesisId\":\"H{}\",\"location\":\"f.py:{}\",\
                     \"timestamp\":{i},\"data\":{{\"v\":{}}},\"source\":\"probe\"}}\n",
                    pick % probes,
                    pick % 3,
                    pick % 4,
                    pick % 9
                )),
            }
        }
        text
    }

    #[test]
    fn pieces_merge_into_the_summary_of_the_whole() {
        for (seed, probes) in [(1, 3), (2, 40), (3, 1), (4, 250), (5, 199)] {
            let file = log(
                &format!("mixed-{seed}.jsonl"),
                &mixed_log(4_000, probes, seed),
            );
            let whole = in_pieces(&file, 1);
            assert!(whole.lines > 3_000);
            for pieces in [2, 3, 8, 64] {
                assert_eq!(
                    in_pieces(&file, pieces),
                    whole,
                    "seed {seed} in {pieces} pieces"
                );
            }
        }
    }

    #[test]
    fn outcomes_gathered_by_the_pieces_are_the_outcomes_read_alone() {
        for (seed, probes) in [(6, 3), (7, 40), (8, 250)] {
            let file = log(
                &format!("outcomes-{seed}.jsonl"),
                &mixed_log(4_000, probes, seed),
            );
            let alone = format!(
                "{:?}",
                super::super::outcomes::read(&file, &Redactor::default()).unwrap()
            );
            // Marks, exits, failures of both kinds and unset logpoints.
            for held in ["words: \"m", "./app", "failures: {\"p", "not set", "café"] {
                assert!(alone.contains(held), "{held} in {alone}");
            }
            assert!(!alone.contains("failed: 0,"), "{alone}");
            for pieces in [1, 2, 3, 8, 64] {
                let gathered = gathered_in_pieces(&file, pieces).1;
                let outcomes = gathered.outcomes(&Redactor::default()).expect("held");
                assert_eq!(
                    format!("{outcomes:?}"),
                    alone,
                    "seed {seed}, {pieces} pieces"
                );
            }
        }
        // Too many to hold: the caller reads the file again.
        let mut gathered = Gathered::new();
        let line = format!(
            "{{\"source\":\"marker\",\"words\":\"{}\"}}",
            "w".repeat(1 << 20)
        );
        for n in 1..=20 {
            gathered.offer(n, line.as_bytes());
        }
        assert!(gathered.outcomes(&Redactor::default()).is_none());
        // Readers side by side share the room: each of two holds half.
        let (mut alone, mut half) = (Gathered::new(), Gathered::share(2));
        for n in 1..=10 {
            alone.offer(n, line.as_bytes());
            half.offer(n, line.as_bytes());
        }
        assert!(alone.outcomes(&Redactor::default()).is_some());
        assert!(half.outcomes(&Redactor::default()).is_none());
    }

    #[test]
    fn a_file_without_newlines_or_with_one_long_line_is_one_piece() {
        let file = log("one-line.jsonl", "{\"probeId\":\"p\"}");
        assert_eq!(in_pieces(&file, 4), in_pieces(&file, 1));
        let text = format!(
            "{{\"probeId\":\"a\",\"data\":\"{}\"}}\n{{\"probeId\":\"b\"}}\n",
            "y".repeat(100_000)
        );
        let file = log("long-first.jsonl", &text);
        let summary = in_pieces(&file, 8);
        assert_eq!(summary, in_pieces(&file, 1));
        assert_eq!(summary.probes.len(), 2);
    }
}
