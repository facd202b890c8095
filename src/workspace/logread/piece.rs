//! The summary of one piece of a run's log as its lines are read
//! (`summary.rs` cuts the file into pieces and merges them in file order):
//! each line's fields, from the fast path (`line_scan`), else `serde_json`,
//! else the part held of a line too long to read whole; each probe's
//! figures; the lines' sources; and the lines that hold the run's facts
//! (`outcomes::Gathered`).

use super::line_scan::{self, Fields};
use super::outcomes::{self, Gathered};
use super::summary::{LogSummary, ProbeFigures, SOURCE_NAME, SUMMARY_PROBES};
use super::{Malformed, MALFORMED_LISTED};
use crate::core::redact::Redactor;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;

/// Distinct `data` values kept per probe in a summary.
const VALUES_KEPT: usize = 5;
/// The longest id, hypothesis or location a summary keeps (cut beyond).
const SUMMARY_FIELD: usize = 200;
/// A `data` value or timestamp longer than this, as JSON, is kept as a
/// short string that says so: a summary holds no program's megabytes.
const SUMMARY_VALUE: usize = crate::core::budget::SUMMARY_VALUE;
/// Probes looked up by comparing ids in turn, before the index is used.
const COMPARED_IN_TURN: usize = 8;

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

/// `a == b`, without a call to compare the bytes of ids that differ in
/// their last one (`p3` and `p4`): probes are told apart on every line.
fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
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

/// The summary of one piece of a file, in the order its lines came.
pub(super) struct Piece<'r> {
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
    /// The keys of the lines read so far, for the fast path.
    keys: line_scan::KeyMemo,
}

impl<'r> Piece<'r> {
    pub(super) fn new(redactor: &'r Redactor, gathered: Option<Gathered>) -> Self {
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
            gathered,
            keys: line_scan::KeyMemo::default(),
        }
    }

    /// One line without its `\n`; `whole` is false for the first
    /// `MAX_SUMMARY_LINE` bytes of a longer one.
    pub(super) fn add(&mut self, raw: &[u8], whole: bool) {
        self.numbered += 1;
        let (skimmed, parsed);
        let line: Fields = if whole {
            let text = super::trim_line(raw);
            if text.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            self.lines += 1;
            // The fast path checks the line is UTF-8 as it reads it.
            match line_scan::scan(text, &mut self.keys) {
                Some(fields) => {
                    // Read whole, its fields say whether it holds a fact.
                    if let Some(gathered) = &mut self.gathered {
                        if outcomes::holds_facts(fields.source, fields.probe_error, fields.data) {
                            gathered.keep(self.numbered, raw);
                        }
                    }
                    fields
                }
                // What the fast path does not read whole, serde decides.
                None => {
                    self.offer(raw);
                    let read = std::str::from_utf8(text)
                        .ok()
                        .and_then(|text| serde_json::from_str::<SummaryLine>(text).ok());
                    let Some(line) = read else {
                        self.malformed.note(self.numbered);
                        return;
                    };
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
            if same_text(&self.probes[last].probe_id, &probe_id) {
                return Some(last);
            }
        }
        // A few probes are compared in turn: cheaper than hashing the id.
        let known = if self.probes.len() <= COMPARED_IN_TURN {
            self.probes
                .iter()
                .position(|p| same_text(&p.probe_id, &probe_id))
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
    pub(super) fn then(mut self, later: Piece) -> Option<Self> {
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

    pub(super) fn finish(self) -> (LogSummary, Option<Gathered>) {
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
mod fast_path {
    use super::line_scan::KeyMemo;
    use super::*;
    use proptest::prelude::*;

    /// The fast path with nothing remembered of lines before.
    fn scan(line: &[u8]) -> Option<Fields<'_>> {
        super::line_scan::scan(line, &mut KeyMemo::default())
    }

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
        let f = scan(line.as_bytes())?;
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
            assert!(scan(line.as_bytes()).is_some(), "{line}");
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
            assert!(scan(line.as_bytes()).is_none(), "{line}");
        }
    }

    #[test]
    fn values_nest_64_containers_deep_and_no_deeper() {
        let nested = |depth: usize| {
            let (mut open, mut close) = (String::new(), String::new());
            for level in 0..depth {
                if level % 3 == 0 {
                    open.push_str("{\"a\":");
                    close.insert(0, '}');
                } else {
                    open.push('[');
                    close.insert(0, ']');
                }
            }
            format!("{{\"data\":{open}1{close},\"probeId\":\"p\"}}")
        };
        let deepest = nested(64);
        assert!(scan(deepest.as_bytes()).is_some());
        assert_eq!(by_scan(&deepest), by_serde(&deepest));
        // Past that, serde decides.
        assert!(scan(nested(65).as_bytes()).is_none());
        let arrays =
            |depth: usize| format!("{{\"data\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
        assert!(scan(arrays(64).as_bytes()).is_some());
        assert!(scan(arrays(65).as_bytes()).is_none());
    }

    #[test]
    fn escapes_and_space_anywhere_are_read_as_serde_reads_them() {
        let line = "\t{ \"message\" :\r\n\"a\\/b\\b\\f\\r\" ,\"data\" : [ 1 , { \"k\" : \"\\\"\" } ] ,\"probeId\":\"p\" } \r";
        assert!(scan(line.as_bytes()).is_some(), "{line}");
        assert_eq!(by_scan(line), by_serde(line));
    }

    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            "[a-z\"\\\\/\n\r\t\u{1}\u{8}\u{c}\u{e9}\u{1F600} ]{0,12}"
                .prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"]{0,4}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Valid objects of the keys a summary reads and others.
    fn object() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("probeId".to_string()),
            Just("hypothesisId".to_string()),
            Just("location".to_string()),
            Just("source".to_string()),
            Just("timestamp".to_string()),
            Just("data".to_string()),
            Just("probeError".to_string()),
            "[a-zA-Z\"\\\\\u{e9}]{0,8}",
        ];
        let member =
            (key, value()).prop_map(|(k, v)| format!("{}:{}", serde_json::Value::from(k), v));
        prop::collection::vec(member, 0..7).prop_map(|members| format!("{{{}}}", members.join(",")))
    }

    /// `text` with one edit of any byte at `at` (or none).
    fn edited(text: String, (at, edit, byte): (u16, u8, u8)) -> Vec<u8> {
        let mut bytes = text.into_bytes();
        let at = usize::from(at) % (bytes.len() + 1);
        match edit % 6 {
            0 => {
                let inserted = b" ,:{}[]\"\\0e-.\t\r\n\xc3\xff";
                bytes.insert(at, inserted[usize::from(byte) % inserted.len()])
            }
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            2 if at < bytes.len() => bytes[at] = byte,
            _ => {}
        }
        bytes
    }

    /// Valid objects, and the same broken by one edit of any byte.
    fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
        (object(), any::<(u16, u8, u8)>()).prop_map(|(text, edit)| edited(text, edit))
    }

    fn line() -> impl Strategy<Value = String> {
        line_bytes().prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    #[test]
    fn a_line_that_is_not_utf8_is_left_to_serde_and_one_that_is_is_read() {
        let broken: [&[u8]; 6] = [
            b"{\"probeId\":\"p\xff\"}",
            b"{\"probeId\":\"p\xc3\"}",
            b"{\"data\":\"\xe2\x82\"}",
            b"{\"data\":[\"\xc0\xaf\"]}",
            b"{\"message\":\"\xed\xa0\x80\"}",
            b"{\"a\xff\":1}",
        ];
        for line in broken {
            assert!(scan(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
        // Above U+10FFFF, and a four-byte character cut short.
        let beyond: [&[u8]; 2] = [
            b"{\"data\":\"\xf4\x90\x80\x80\"}",
            b"{\"data\":\"\xf0\x9f\x98\"}",
        ];
        for line in beyond {
            assert!(scan(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
        let read = scan(
            "{\"probeId\":\"p\u{e9}\u{1F600}\",\"data\":{\"\u{e9}\":\"\u{4e2d}\\n\u{6587}\"}}"
                .as_bytes(),
        )
        .expect("read");
        assert_eq!(read.probe_id, Some("p\u{e9}\u{1F600}"));
        assert_eq!(read.data, Some("{\"\u{e9}\":\"\u{4e2d}\\n\u{6587}\"}"));
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

        /// A line read after others, their keys remembered, is read as it
        /// is alone: another object, then two edits of one.
        #[test]
        fn keys_remembered_from_lines_before_change_nothing(
            text in object(),
            other in object(),
            first in any::<(u16, u8, u8)>(),
            second in any::<(u16, u8, u8)>(),
        ) {
            let mut memo = KeyMemo::default();
            let lines = [other.into_bytes(), edited(text.clone(), first), edited(text, second)];
            for line in &lines {
                let remembered = super::line_scan::scan(line, &mut memo);
                prop_assert_eq!(remembered, scan(line), "{}", String::from_utf8_lossy(line));
            }
        }

        /// Whatever the fast path reads of any bytes is UTF-8, and serde
        /// reads it the same way.
        #[test]
        fn what_the_fast_path_reads_is_utf8(bytes in line_bytes()) {
            if let Some(fields) = scan(&bytes) {
                let text = std::str::from_utf8(&bytes);
                prop_assert!(text.is_ok(), "{:?}", String::from_utf8_lossy(&bytes));
                let text = text.unwrap_or_default();
                prop_assert_eq!(by_scan(text), by_serde(text), "{}", text);
                // The failure flag: a `probeError` of the line's own object.
                let object = serde_json::from_str::<serde_json::Value>(text);
                let flagged =
                    object.is_ok_and(|o| o.get(super::outcomes::PROBE_ERROR).is_some());
                prop_assert_eq!(fields.probe_error, flagged, "{}", text);
            }
        }
    }
}
