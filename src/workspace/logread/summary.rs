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

use super::line_scan::{self, Fields};
use super::outcomes::Gathered;
use super::ranges::{for_each_line, piece_bounds, Range};
use super::{Malformed, MALFORMED_LISTED};
use crate::core::hits::{NoHit, Verdict};
use crate::core::model::Probe;
use crate::core::redact::Redactor;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

/// Distinct `data` values kept per probe in a summary.
const VALUES_KEPT: usize = 5;
/// Probes a summary keeps figures for; lines of later ones are only counted,
/// so a log of a million distinct ids costs no more than one of 200.
pub const SUMMARY_PROBES: usize = 200;
/// The longest id, hypothesis or location a summary keeps (cut beyond).
const SUMMARY_FIELD: usize = 200;
/// A `data` value or timestamp longer than this, as JSON, is kept as a
/// short string that says so: a summary holds no program's megabytes.
const SUMMARY_VALUE: usize = crate::core::budget::SUMMARY_VALUE;
/// The longest line a summary reads whole; a longer one is counted from
/// the fields before its long value (`skim_summary_line`).
const MAX_SUMMARY_LINE: usize = 4 * 1024 * 1024;
const READ_BUFFER: usize = 1 << 20;
/// A file smaller than this is summarised on one thread.
const PARALLEL_FROM: u64 = 16 * 1024 * 1024;
/// Pieces a file is cut into at most.
const MAX_PIECES: usize = 8;
/// Probes looked up by comparing ids in turn, before the index is used.
const COMPARED_IN_TURN: usize = 8;

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
const SOURCE_NAME: usize = 32;

impl LogSummary {
    fn count_source(&mut self, source: &str, n: u64) {
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

/// The fields a summary reads; everything else is skipped unparsed.
#[derive(Deserialize)]
struct SummaryLine<'a> {
    #[serde(borrow, rename = "probeId")]
    probe_id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "hypothesisId")]
    hypothesis_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    location: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    source: Option<Cow<'a, str>>,
}

/// One probe's figures while its lines are read: timestamps are kept as
/// their raw text and made values once, at the end.
struct Figures {
    probe_id: String,
    hypothesis_id: Option<String>,
    location: Option<String>,
    count: u64,
    first_timestamp: Option<String>,
    last_timestamp: String,
    values: Vec<Value>,
    /// Hashes of the raw text of the values kept, to compare cheaply.
    raw_values: Vec<u64>,
}

impl Figures {
    fn new(probe_id: String) -> Self {
        Figures {
            probe_id,
            hypothesis_id: None,
            location: None,
            count: 0,
            first_timestamp: None,
            last_timestamp: String::new(),
            values: Vec::new(),
            raw_values: Vec::new(),
        }
    }

    fn add_location(&mut self, location: &str) {
        // The latest location wins: the probe may have moved.
        if location.len() <= SUMMARY_FIELD && self.location.as_deref() == Some(location) {
            return;
        }
        let location = kept_field(location);
        if self.location.as_deref() != Some(location.as_str()) {
            self.location = Some(location);
        }
    }

    fn add_timestamp(&mut self, raw: &str) {
        if self.first_timestamp.is_none() {
            self.first_timestamp = Some(raw.to_string());
        }
        self.last_timestamp.clear();
        self.last_timestamp.push_str(raw);
    }

    fn add_value(&mut self, raw: &str, redactor: &Redactor) {
        if self.raw_values.len() >= VALUES_KEPT {
            return;
        }
        let hash = hash_of(raw);
        if !self.raw_values.contains(&hash) {
            self.raw_values.push(hash);
            self.values.push(kept_redacted(raw, redactor));
        }
    }

    /// The figures of a later piece of the same file, as if read on.
    fn merge(&mut self, later: Figures) {
        self.count += later.count;
        if self.hypothesis_id.is_none() {
            self.hypothesis_id = later.hypothesis_id;
        }
        if later.location.is_some() {
            self.location = later.location;
        }
        if self.first_timestamp.is_none() {
            self.first_timestamp = later.first_timestamp;
        }
        if !later.last_timestamp.is_empty() {
            self.last_timestamp = later.last_timestamp;
        }
        for (hash, value) in later.raw_values.into_iter().zip(later.values) {
            if self.raw_values.len() < VALUES_KEPT && !self.raw_values.contains(&hash) {
                self.raw_values.push(hash);
                self.values.push(value);
            }
        }
    }

    fn finish(self) -> ProbeFigures {
        let last = (!self.last_timestamp.is_empty()).then(|| kept_value(&self.last_timestamp));
        ProbeFigures {
            probe_id: self.probe_id,
            hypothesis_id: self.hypothesis_id,
            location: self.location,
            count: self.count,
            first_timestamp: self.first_timestamp.as_deref().map(kept_value),
            last_timestamp: last,
            values: self.values,
            hits: self.count,
            failed: 0,
            reason: None,
            why: None,
            evidence: None,
        }
    }
}

fn hash_of(raw: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    raw.hash(&mut hasher);
    hasher.finish()
}

/// A value as a summary keeps it: whole when short, else a string that says
/// what it was and shows its start.
fn kept_value(raw: &str) -> Value {
    if raw.len() <= SUMMARY_VALUE {
        if let Ok(value) = serde_json::from_str(raw) {
            return value;
        }
    }
    Value::String(format!(
        "({} bytes of JSON) {}",
        raw.len(),
        crate::core::budget::cut(raw, SUMMARY_VALUE / 2)
    ))
}

/// `kept_value` of a value redacted whole first: a cut never splits a
/// secret before the rules could see it, and the key rule still applies
/// to a long object.
fn kept_redacted(raw: &str, redactor: &Redactor) -> Value {
    if raw.len() > SUMMARY_VALUE && redactor.is_enabled() {
        if let Ok(mut value) = serde_json::from_str::<Value>(raw) {
            redactor.value(&mut value);
            return kept_value(&value.to_string());
        }
    }
    let mut value = kept_value(raw);
    redactor.value(&mut value);
    value
}

/// A field as a summary keeps it: cut to `SUMMARY_FIELD` bytes.
fn kept_field(text: &str) -> String {
    crate::core::budget::cut(text, SUMMARY_FIELD)
}

/// Whether a line the fast path read whole may hold a fact of the run
/// (`outcomes`): a mark, an exit record or a runtime's note by its source,
/// or a probe's failure by its `probeError` or an `$error` in its data.
/// Such a line's keys and texts hold no escape, so this finds every line
/// whose facts a search for the words would find, and only parsing them
/// says more.
fn holds_facts(fields: &Fields) -> bool {
    matches!(fields.source, Some("marker" | "exit" | "sidecar"))
        || fields.probe_error
        || fields.data.is_some_and(|data| {
            // `$` is rare in data: find it, then the word.
            memchr::memchr_iter(b'$', data.as_bytes())
                .any(|at| data.as_bytes()[at..].starts_with(b"$error"))
        })
}

/// The summary of one piece of a file, in the order its lines came.
struct Piece<'r> {
    redactor: &'r Redactor,
    /// Every line read, blank ones too: numbers malformed lines.
    numbered: u64,
    lines: u64,
    malformed: Malformed,
    without_probe: u64,
    too_long: u64,
    sources: Sources,
    index: HashMap<String, usize>,
    probes: Vec<Figures>,
    /// The probe of the line before: runs of one probe skip the lookup.
    last: Option<usize>,
    /// Hashes of the ids first seen after the 200th probe.
    unlisted: std::collections::HashSet<u64>,
    unlisted_lines: u64,
    /// The lines a run's outcomes are read from, when asked for.
    gathered: Option<Gathered>,
}

impl<'r> Piece<'r> {
    fn new(redactor: &'r Redactor, gather: bool) -> Self {
        Piece {
            redactor,
            numbered: 0,
            lines: 0,
            malformed: Malformed::default(),
            without_probe: 0,
            too_long: 0,
            sources: Sources::default(),
            index: HashMap::new(),
            probes: Vec::new(),
            last: None,
            unlisted: Default::default(),
            unlisted_lines: 0,
            gathered: gather.then(Gathered::default),
        }
    }

    /// One line without its `\n`; `whole` is false for the first
    /// `MAX_SUMMARY_LINE` bytes of a longer one.
    fn add(&mut self, raw: &[u8], whole: bool) {
        self.numbered += 1;
        let (skimmed, parsed);
        let line: Fields = if whole {
            let text = super::trim_line(raw);
            if text.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            self.lines += 1;
            // One UTF-8 check of the line (ASCII at memory speed), so the
            // parser need not check each string again.
            let Ok(text) = std::str::from_utf8(text) else {
                self.offer(raw);
                self.malformed.note(self.numbered);
                return;
            };
            match line_scan::scan(text) {
                Some(fields) => {
                    // Read whole, its fields say whether it holds a fact.
                    if let Some(gathered) = &mut self.gathered {
                        if holds_facts(&fields) {
                            gathered.keep(self.numbered, raw);
                        }
                    }
                    fields
                }
                // What the fast path does not read whole, serde decides.
                None => {
                    self.offer(raw);
                    match serde_json::from_str::<SummaryLine>(text) {
                        Ok(line) => {
                            parsed = line;
                            Fields {
                                probe_id: parsed.probe_id.as_deref(),
                                hypothesis_id: parsed.hypothesis_id.as_deref(),
                                location: parsed.location.as_deref(),
                                source: parsed.source.as_deref(),
                                timestamp: parsed.timestamp.map(RawValue::get),
                                data: parsed.data.map(RawValue::get),
                                probe_error: false,
                            }
                        }
                        Err(_) => {
                            self.malformed.note(self.numbered);
                            return;
                        }
                    }
                }
            }
        } else {
            // Not held whole: its small fields are read from the part that
            // is, and the line is counted where they say.
            self.lines += 1;
            self.too_long += 1;
            skimmed = skim_summary_line(raw);
            Fields {
                probe_id: skimmed.probe_id.as_deref(),
                hypothesis_id: skimmed.hypothesis_id.as_deref(),
                location: skimmed.location.as_deref(),
                source: skimmed.source.as_deref(),
                timestamp: skimmed.timestamp.as_deref().map(RawValue::get),
                data: None,
                probe_error: false,
            }
        };
        if let Some(source) = line.source {
            self.sources.count(source, 1);
        }
        let Some(probe_id) = line.probe_id else {
            self.without_probe += 1;
            return;
        };
        let Some(at) = self.probe_at(probe_id) else {
            return;
        };
        let probe = &mut self.probes[at];
        probe.count += 1;
        if probe.hypothesis_id.is_none() {
            probe.hypothesis_id = line.hypothesis_id.map(kept_field);
        }
        if let Some(location) = line.location {
            probe.add_location(location);
        }
        if let Some(timestamp) = line.timestamp {
            probe.add_timestamp(timestamp);
        }
        if let Some(data) = line.data {
            probe.add_value(data, self.redactor);
        }
    }

    /// A line read another way than the fast path: gathered when it holds
    /// one of the words of a run's facts.
    fn offer(&mut self, raw: &[u8]) {
        if let Some(gathered) = &mut self.gathered {
            gathered.offer(self.numbered, raw);
        }
    }

    /// The probe's place among the listed ones; None (counted) when it is
    /// one past the 200th.
    fn probe_at(&mut self, probe_id: &str) -> Option<usize> {
        // Ids are keyed as kept: a megabyte id is not held whole.
        let probe_id = if probe_id.len() <= SUMMARY_FIELD {
            Cow::Borrowed(probe_id)
        } else {
            Cow::Owned(kept_field(probe_id))
        };
        if let Some(last) = self.last {
            if self.probes[last].probe_id == probe_id.as_ref() {
                return Some(last);
            }
        }
        // A few probes are compared in turn: cheaper than hashing the id.
        let known = if self.probes.len() <= COMPARED_IN_TURN {
            self.probes
                .iter()
                .position(|p| p.probe_id == probe_id.as_ref())
        } else {
            self.index.get(probe_id.as_ref()).copied()
        };
        let at = match known {
            Some(at) => at,
            None if self.probes.len() >= SUMMARY_PROBES => {
                self.unlisted.insert(hash_of(&probe_id));
                self.unlisted_lines += 1;
                return None;
            }
            None => {
                let probe_id = probe_id.into_owned();
                self.index.insert(probe_id.clone(), self.probes.len());
                self.probes.push(Figures::new(probe_id));
                self.probes.len() - 1
            }
        };
        self.last = Some(at);
        Some(at)
    }

    /// This piece followed by a later one of the same file, as if one
    /// piece had read both; None when the result would not be exact (more
    /// than 200 probes in all: the whole file is then read as one piece).
    fn then(mut self, later: Piece) -> Option<Self> {
        if !self.unlisted.is_empty() || !later.unlisted.is_empty() || later.sources.overflowed {
            return None;
        }
        for line in later.malformed.lines {
            if self.malformed.lines.len() < MALFORMED_LISTED {
                self.malformed.lines.push(self.numbered + line);
            }
        }
        self.malformed.count += later.malformed.count;
        if let (Some(gathered), Some(later)) = (&mut self.gathered, later.gathered) {
            gathered.then(later, self.numbered);
        }
        self.numbered += later.numbered;
        self.lines += later.lines;
        self.without_probe += later.without_probe;
        self.too_long += later.too_long;
        self.sources.merge(later.sources);
        for figures in later.probes {
            match self.index.get(&figures.probe_id) {
                Some(at) => self.probes[*at].merge(figures),
                None if self.probes.len() >= SUMMARY_PROBES => return None,
                None => {
                    self.index
                        .insert(figures.probe_id.clone(), self.probes.len());
                    self.probes.push(figures);
                }
            }
        }
        Some(self)
    }

    fn finish(self) -> (LogSummary, Option<Gathered>) {
        let mut summary = LogSummary {
            lines: self.lines,
            malformed: self.malformed,
            without_probe: self.without_probe,
            probes: self.probes.into_iter().map(Figures::finish).collect(),
            unlisted_probes: self.unlisted.len() as u64,
            unlisted_lines: self.unlisted_lines,
            too_long: self.too_long,
            sources: Default::default(),
            // Found by their own reader (`marks`).
            marks: Vec::new(),
            marks_total: 0,
            // From the exit records (`outcomes`).
            attempts: None,
            around_mark: None,
        };
        // Named in the order a reader of the file meets them.
        for (source, n) in self.sources.named {
            summary.count_source(&source, n);
        }
        if self.sources.other > 0 {
            summary.count_source("other", self.sources.other);
        }
        (summary, self.gathered)
    }
}

/// The sources of a piece's lines in the order first met: the first 64
/// short names, so pieces merge into the 8 a summary names exactly (a piece
/// that met more is not merged: the file is read as one piece).
#[derive(Default)]
struct Sources {
    named: Vec<(String, u64)>,
    other: u64,
    overflowed: bool,
}

/// Sources a piece names before it counts the rest as other.
const SOURCES_KEPT: usize = 64;

impl Sources {
    fn count(&mut self, source: &str, n: u64) {
        if let Some((_, count)) = self.named.iter_mut().find(|(name, _)| name == source) {
            *count += n;
        } else if source.len() > SOURCE_NAME {
            self.other += n;
        } else if self.named.len() < SOURCES_KEPT {
            self.named.push((source.to_string(), n));
        } else {
            self.overflowed = true;
            self.other += n;
        }
    }

    fn merge(&mut self, later: Sources) {
        for (source, n) in later.named {
            match self.named.iter_mut().find(|(name, _)| *name == source) {
                Some((_, count)) => *count += n,
                None => self.named.push((source, n)),
            }
        }
        self.other += later.other;
    }
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
            return Ok((LogSummary::default(), gather.then(Gathered::default)))
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
                    scope.spawn(move || read_piece(handle, start, Some(end), redactor, gather))
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
    Ok(read_piece(handle, 0, None, redactor, gather)?.finish())
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
    let mut piece = Piece::new(redactor, false);
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
    gather: bool,
) -> io::Result<Piece<'r>> {
    let mut piece = Piece::new(redactor, gather);
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

/// The fields of a summary line read from the start of a line too long to
/// hold: the ones that come before the long value.
#[derive(Default)]
struct SkimmedLine {
    probe_id: Option<String>,
    hypothesis_id: Option<String>,
    location: Option<String>,
    timestamp: Option<Box<RawValue>>,
    source: Option<String>,
}

fn skim_summary_line(prefix: &[u8]) -> SkimmedLine {
    const FIELDS: [&str; 5] = ["probeId", "hypothesisId", "location", "timestamp", "source"];
    let (members, _) = crate::core::json_skim::top_level_members(
        prefix,
        |key| FIELDS.contains(&key),
        SUMMARY_FIELD * 4,
    );
    let mut line = SkimmedLine::default();
    for (key, value) in members {
        let text = || value.as_str().map(str::to_string);
        match key.as_str() {
            "probeId" => line.probe_id = line.probe_id.take().or_else(text),
            "hypothesisId" => line.hypothesis_id = line.hypothesis_id.take().or_else(text),
            "location" => line.location = line.location.take().or_else(text),
            "source" => line.source = line.source.take().or_else(text),
            _ => {
                line.timestamp = line
                    .timestamp
                    .take()
                    .or_else(|| serde_json::value::to_raw_value(&value).ok())
            }
        }
    }
    line
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
        let mut gathered = Gathered::default();
        let line = format!(
            "{{\"source\":\"marker\",\"words\":\"{}\"}}",
            "w".repeat(1 << 20)
        );
        for n in 1..=20 {
            gathered.offer(n, line.as_bytes());
        }
        assert!(gathered.outcomes(&Redactor::default()).is_none());
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

#[cfg(test)]
mod fast_path {
    use super::line_scan::scan;
    use super::*;
    use proptest::prelude::*;

    /// The four texts and the two raw values a summary reads of a line.
    type Read = (Vec<Option<String>>, Vec<Option<String>>);

    /// What serde reads of a line, in the fast path's terms.
    fn by_serde(line: &str) -> Option<Read> {
        let parsed = serde_json::from_str::<SummaryLine>(line).ok()?;
        let texts = [
            &parsed.probe_id,
            &parsed.hypothesis_id,
            &parsed.location,
            &parsed.source,
        ];
        Some((
            texts
                .iter()
                .map(|t| t.as_deref().map(String::from))
                .collect(),
            [parsed.timestamp, parsed.data]
                .iter()
                .map(|r| r.map(|r| r.get().to_string()))
                .collect(),
        ))
    }

    fn by_scan(line: &str) -> Option<Read> {
        let f = scan(line)?;
        let texts = [f.probe_id, f.hypothesis_id, f.location, f.source];
        Some((
            texts.iter().map(|t| t.map(String::from)).collect(),
            [f.timestamp, f.data]
                .iter()
                .map(|r| r.map(String::from))
                .collect(),
        ))
    }

    #[test]
    fn typical_lines_take_the_fast_path_and_odd_ones_leave_it_to_serde() {
        let typical = [
            r#"{"sessionId":"s","runId":"r1-a","probeId":"p1","hypothesisId":"H1","location":"a.py:3","message":"m","data":{"n":1,"l":[1,2.5,-0.25,null,true,false,"x\"y\n"]},"timestamp":1765000000000}"#,
            r#" { "probeId" : "p2" , "data" : [ ] , "timestamp" : null , "source" : "stdout" } "#,
            r#"{"source":"stdout","message":"hello","timestamp":3}"#,
            "{}",
        ];
        for line in typical {
            assert!(scan(line).is_some(), "{line}");
            assert_eq!(by_scan(line), by_serde(line), "{line}");
        }
        let odd = [
            r#"{"probeId":"p\u0031"}"#,
            r#"{"probeId":"p1","probeId":"p2"}"#,
            r#"{"data":1e5}"#,
            r#"{"prob\u0065Id":"p"}"#,
            r#"{"probeId":"p"}x"#,
            r#"{"probeId":5}"#,
            "{\"probeId\":\"a\tb\"}",
            r#"{"a":01}"#,
            r#"[1]"#,
        ];
        for line in odd {
            assert!(scan(line).is_none(), "{line}");
        }
    }

    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            "[a-z\"\\\\/\n\t\u{1}\u{e9}\u{1F600} ]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"]{0,4}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn line() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("probeId".to_string()),
            Just("hypothesisId".to_string()),
            Just("location".to_string()),
            Just("source".to_string()),
            Just("timestamp".to_string()),
            Just("data".to_string()),
            "[a-zA-Z\"\\\\]{0,8}",
        ];
        let member =
            (key, value()).prop_map(|(k, v)| format!("{}:{}", serde_json::Value::from(k), v));
        let object = prop::collection::vec(member, 0..7)
            .prop_map(|members| format!("{{{}}}", members.join(",")));
        // Valid objects, and the same broken by one edit.
        (object, any::<u16>(), 0u8..6, any::<u8>()).prop_map(|(text, at, edit, byte)| {
            let mut bytes = text.into_bytes();
            let at = usize::from(at) % (bytes.len() + 1);
            match edit {
                0 => {
                    let inserted = b" ,:{}[]\"\\0e-.\t";
                    bytes.insert(at, inserted[usize::from(byte) % inserted.len()])
                }
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                2 if at < bytes.len() => bytes[at] = byte & 0x7f,
                _ => {}
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
        /// Whatever the fast path reads, serde reads the same way.
        #[test]
        fn the_fast_path_never_disagrees_with_serde(line in line()) {
            if let Some(scanned) = by_scan(&line) {
                prop_assert_eq!(Some(scanned), by_serde(&line), "{}", line);
            }
        }
    }
}
