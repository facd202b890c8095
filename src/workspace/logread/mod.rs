//! Reading run logs for a model (DESIGN section 7): filtered pages with a
//! cursor, a line limit and a byte cap, so a huge log never floods the
//! context; and a per-probe summary that streams the file in bounded memory.
//! Malformed lines are counted and located, never fatal.

use crate::core::redact::Redactor;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 500;
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;
pub const MAX_MAX_BYTES: usize = 1024 * 1024;
/// Malformed lines located per answer; more are only counted.
const MALFORMED_LISTED: usize = 20;
/// Lines over the byte cap named per page; a page ends at the 20th.
const OVERSIZED_LISTED: usize = 20;
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
const READ_BUFFER: usize = 1 << 20;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    pub probe: Option<String>,
    pub hypothesis: Option<String>,
    pub contains: Option<String>,
    pub cursor: Option<String>,
    pub limit: Option<usize>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// 1-based line number in the run's file.
    pub line: u64,
    pub entry: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Malformed {
    pub count: u64,
    /// The first line numbers that are not JSON objects.
    pub lines: Vec<u64>,
}

impl Malformed {
    fn note(&mut self, line: u64) {
        self.count += 1;
        if self.lines.len() < MALFORMED_LISTED {
            self.lines.push(line);
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogPage {
    pub entries: Vec<LogEntry>,
    /// Pass back as `cursor` to read on; null at the end of the file.
    pub next_cursor: Option<String>,
    /// Malformed lines among those this page read.
    pub malformed: Malformed,
    /// Lines longer than the byte cap, skipped (read the file for them).
    pub oversized: Vec<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Answered `-32602` naming `cursor`, which the message leaves to it.
    #[error("{cursor:?} {why}")]
    BadCursor { cursor: String, why: String },
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn bad_cursor(cursor: &str, why: impl Into<String>) -> ReadError {
    ReadError::BadCursor {
        cursor: cursor.to_string(),
        why: why.into(),
    }
}

/// Where to go on from: the byte offset of a line and its number.
fn parse_cursor(cursor: &str) -> Result<(u64, u64), ReadError> {
    let bad = || bad_cursor(cursor, "is not a cursor this server gave out");
    let (offset, line) = cursor.split_once(':').ok_or_else(bad)?;
    Ok((
        offset.parse().map_err(|_| bad())?,
        line.parse().map_err(|_| bad())?,
    ))
}

/// A cursor this server gave out for `file` points at the start of a line
/// inside it, after at least as many bytes as lines. Anything else is the
/// caller's mistake, not a failing disk: checked before the seek, which
/// would fail past what a file offset can be.
fn check_cursor(
    cursor: &str,
    (offset, line): (u64, u64),
    handle: Option<&mut std::fs::File>,
) -> Result<(), ReadError> {
    let length = match &handle {
        Some(handle) => handle.metadata()?.len(),
        None => 0,
    };
    if offset > length {
        return Err(bad_cursor(
            cursor,
            format!("is past the end of the run's log ({length} bytes)"),
        ));
    }
    if line > offset {
        return Err(bad_cursor(
            cursor,
            "counts more lines than there are bytes before it",
        ));
    }
    if let (Some(handle), true) = (handle, offset > 0) {
        let mut before = [0u8];
        handle.seek(SeekFrom::Start(offset - 1))?;
        io::Read::read_exact(handle, &mut before)?;
        if before != *b"\n" {
            return Err(bad_cursor(cursor, "does not point at the start of a line"));
        }
    }
    Ok(())
}

/// One page of the entries matching `query`, from its cursor on.
/// Every entry goes through `redactor` before it is matched or kept: a
/// filter cannot find a secret that the page would not show.
pub fn read_page(file: &Path, query: &LogQuery, redactor: &Redactor) -> Result<LogPage, ReadError> {
    let (mut offset, mut line) = match &query.cursor {
        Some(cursor) => parse_cursor(cursor)?,
        None => (0, 0),
    };
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let max_bytes = query
        .max_bytes
        .unwrap_or(DEFAULT_MAX_BYTES)
        .clamp(256, MAX_MAX_BYTES);
    let mut page = LogPage::default();
    let mut handle = match crate::workspace::runlog::open_own(file) {
        Ok(handle) => Some(handle),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(cursor) = &query.cursor {
        check_cursor(cursor, (offset, line), handle.as_mut())?;
    }
    let Some(mut handle) = handle else {
        return Ok(page);
    };
    handle.seek(SeekFrom::Start(offset))?;
    let mut reader = BufReader::with_capacity(64 * 1024, handle);
    let mut raw = Vec::new();
    let mut used = 0usize;
    loop {
        // A line longer than the cap is never held whole.
        let Some((read, whole)) = read_line_capped(&mut reader, &mut raw, max_bytes + 2)? else {
            return Ok(page);
        };
        let here = (offset, line);
        offset += read;
        line += 1;
        if !whole {
            page.oversized.push(line);
            if page.oversized.len() == OVERSIZED_LISTED {
                // The list stays short: the next page goes on from here.
                page.next_cursor = Some(format!("{offset}:{line}"));
                return Ok(page);
            }
            continue;
        }
        let text = String::from_utf8_lossy(&raw);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let mut entry = match serde_json::from_str::<Value>(text) {
            Ok(entry @ Value::Object(_)) => entry,
            _ => {
                page.malformed.note(line);
                continue;
            }
        };
        let redacted;
        let text = if redactor.record(&mut entry) > 0 {
            redacted = entry.to_string();
            redacted.as_str()
        } else {
            text
        };
        if !matches(&entry, text, query) {
            continue;
        }
        if text.len() > max_bytes {
            page.oversized.push(line);
            if page.oversized.len() == OVERSIZED_LISTED {
                page.next_cursor = Some(format!("{offset}:{line}"));
                return Ok(page);
            }
            continue;
        }
        if page.entries.len() == limit || used + text.len() > max_bytes {
            page.next_cursor = Some(format!("{}:{}", here.0, here.1));
            return Ok(page);
        }
        used += text.len();
        page.entries.push(LogEntry { line, entry });
    }
}

fn matches(entry: &Value, text: &str, query: &LogQuery) -> bool {
    let field = |name: &str, wanted: &Option<String>| {
        wanted
            .as_deref()
            .is_none_or(|wanted| entry.get(name).and_then(Value::as_str) == Some(wanted))
    };
    field("probeId", &query.probe)
        && field("hypothesisId", &query.hypothesis)
        && query
            .contains
            .as_deref()
            .is_none_or(|needle| text.contains(needle))
}

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
}

impl ProbeFigures {
    /// One line for a reader: `p1 (H1) x3 at cart.py:4: {"n":1} | {"n":2}`.
    pub fn describe(&self) -> String {
        let values: Vec<String> = self.values.iter().map(Value::to_string).collect();
        // The program wrote every field: none may start a line of its own.
        use crate::core::budget::{ID, LOCATION, SUMMARY_VALUES};
        use crate::core::escape::inline_cut;
        format!(
            "{} ({}) x{} at {}: {}",
            inline_cut(&self.probe_id, ID),
            inline_cut(self.hypothesis_id.as_deref().unwrap_or("-"), ID),
            self.count,
            inline_cut(self.location.as_deref().unwrap_or("?"), LOCATION),
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
}

/// Distinct sources a summary names.
const SOURCES_NAMED: usize = 8;
/// The longest source name kept.
const SOURCE_NAME: usize = 32;

impl LogSummary {
    fn count_source(&mut self, source: &str) {
        if let Some(n) = self.sources.get_mut(source) {
            *n += 1;
            return;
        }
        let key = if self.sources.len() < SOURCES_NAMED && source.len() <= SOURCE_NAME {
            source.to_string()
        } else {
            "other".to_string()
        };
        *self.sources.entry(key).or_default() += 1;
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

struct Figures {
    figures: ProbeFigures,
    /// Hashes of the raw text of the values kept, to compare cheaply.
    raw_values: Vec<u64>,
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

/// Count, first and last timestamp, a few distinct values and the location
/// of every probe in the file, in one pass with memory bounded by the number
/// of probes.
pub fn summarize(file: &Path, redactor: &Redactor) -> io::Result<LogSummary> {
    let mut summary = LogSummary::default();
    let handle = match crate::workspace::runlog::open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(summary),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, handle);
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut unlisted: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut probes: Vec<Figures> = Vec::new();
    let mut raw = Vec::new();
    let mut number = 0u64;
    while let Some((_, whole)) = read_line_capped(&mut reader, &mut raw, MAX_SUMMARY_LINE)? {
        number += 1;
        let skimmed;
        let line = if whole {
            let text = trim_line(&raw);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            summary.lines += 1;
            let Ok(line) = serde_json::from_slice::<SummaryLine>(text) else {
                summary.malformed.note(number);
                continue;
            };
            line
        } else {
            // Not held whole: its small fields are read from the part that
            // is, and the line is counted where they say.
            summary.lines += 1;
            summary.too_long += 1;
            skimmed = skim_summary_line(&raw);
            SummaryLine {
                probe_id: skimmed.probe_id.as_deref().map(Cow::Borrowed),
                hypothesis_id: skimmed.hypothesis_id.as_deref().map(Cow::Borrowed),
                location: skimmed.location.as_deref().map(Cow::Borrowed),
                timestamp: skimmed.timestamp.as_deref(),
                data: None,
                source: skimmed.source.as_deref().map(Cow::Borrowed),
            }
        };
        if let Some(source) = &line.source {
            summary.count_source(source);
        }
        let Some(probe_id) = line.probe_id else {
            summary.without_probe += 1;
            continue;
        };
        // Ids are keyed as kept: a megabyte id is not held whole.
        let probe_id = if probe_id.len() <= SUMMARY_FIELD {
            probe_id
        } else {
            Cow::Owned(kept_field(&probe_id))
        };
        let at = match index.get(probe_id.as_ref()) {
            Some(at) => *at,
            None if probes.len() >= SUMMARY_PROBES => {
                unlisted.insert(hash_of(&probe_id));
                summary.unlisted_lines += 1;
                continue;
            }
            None => {
                let probe_id = probe_id.into_owned();
                index.insert(probe_id.clone(), probes.len());
                probes.push(Figures {
                    figures: ProbeFigures {
                        probe_id,
                        hypothesis_id: None,
                        location: None,
                        count: 0,
                        first_timestamp: None,
                        last_timestamp: None,
                        values: Vec::new(),
                    },
                    raw_values: Vec::new(),
                });
                probes.len() - 1
            }
        };
        let probe = &mut probes[at];
        let figures = &mut probe.figures;
        figures.count += 1;
        if figures.hypothesis_id.is_none() {
            figures.hypothesis_id = line.hypothesis_id.as_deref().map(kept_field);
        }
        if let Some(location) = line.location {
            // The latest location wins: the probe may have moved.
            let location = kept_field(&location);
            if figures.location.as_deref() != Some(location.as_str()) {
                figures.location = Some(location);
            }
        }
        if let Some(timestamp) = line.timestamp {
            let timestamp = kept_value(timestamp.get());
            if figures.first_timestamp.is_none() {
                figures.first_timestamp = Some(timestamp.clone());
            }
            figures.last_timestamp = Some(timestamp);
        }
        if let Some(data) = line.data {
            let raw = data.get();
            let hash = hash_of(raw);
            if probe.raw_values.len() < VALUES_KEPT && !probe.raw_values.contains(&hash) {
                probe.raw_values.push(hash);
                figures.values.push(kept_redacted(raw, redactor));
            }
        }
    }
    summary.probes = probes.into_iter().map(|p| p.figures).collect();
    summary.unlisted_probes = unlisted.len() as u64;
    Ok(summary)
}

/// The longest line a summary reads whole; a longer one is counted from
/// the fields before its long value (`skim_summary_line`).
const MAX_SUMMARY_LINE: usize = 4 * 1024 * 1024;

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

/// One line (through `\n`) into `buf`, keeping at most `cap` bytes of it:
/// the bytes consumed and whether the line fit; None at the end of input.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<(u64, bool)>> {
    buf.clear();
    let (mut consumed, mut whole) = (0u64, true);
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok((consumed > 0).then_some((consumed, whole)));
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            whole = false;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let taken = chunk.len();
        consumed += taken as u64;
        reader.consume(taken);
        if done {
            return Ok(Some((consumed, whole)));
        }
    }
}

fn trim_line(raw: &[u8]) -> &[u8] {
    let mut end = raw.len();
    while end > 0 && matches!(raw[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    &raw[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The readers as a workspace with the built-in redaction uses them.
    fn read_page(file: &Path, query: &LogQuery) -> Result<LogPage, ReadError> {
        super::read_page(file, query, &Redactor::default())
    }

    fn summarize(file: &Path) -> io::Result<LogSummary> {
        super::summarize(file, &Redactor::default())
    }
    use serde_json::json;

    fn log(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ds-logread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    }

    const LOG: &str = "{\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:3\",\"data\":{\"n\":1},\"timestamp\":10}\n\
                       not json\n\
                       {\"probeId\":\"p2\",\"hypothesisId\":\"H2\",\"data\":{\"n\":2},\"timestamp\":11}\n\
                       \n\
                       {\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:3\",\"data\":{\"n\":1},\"timestamp\":12}\r\n\
                       [1,2]\n\
                       {\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:4\",\"data\":{\"n\":3},\"timestamp\":13}";

    #[test]
    fn pages_follow_the_cursor_and_filters() {
        let file = log("page.jsonl", LOG);
        let query = LogQuery {
            probe: Some("p1".into()),
            limit: Some(2),
            ..LogQuery::default()
        };
        let first = read_page(&file, &query).unwrap();
        assert_eq!(
            first.entries.iter().map(|e| e.line).collect::<Vec<_>>(),
            [1, 5]
        );
        // Looking for a third match read line 6 too.
        assert_eq!(first.malformed.lines, [2, 6]);
        let cursor = first.next_cursor.clone().expect("more to read");
        let next = read_page(
            &file,
            &LogQuery {
                cursor: Some(cursor),
                ..query.clone()
            },
        )
        .unwrap();
        assert_eq!(next.entries.iter().map(|e| e.line).collect::<Vec<_>>(), [7]);
        assert!(next.malformed.lines.is_empty());
        assert_eq!(next.next_cursor, None);
        let text = read_page(
            &file,
            &LogQuery {
                contains: Some("\"n\":2".into()),
                ..LogQuery::default()
            },
        )
        .unwrap();
        assert_eq!(text.entries[0].entry["probeId"], "p2");
        let by_hypothesis = read_page(
            &file,
            &LogQuery {
                hypothesis: Some("H2".into()),
                ..LogQuery::default()
            },
        )
        .unwrap();
        assert_eq!(by_hypothesis.entries.len(), 1);
    }

    #[test]
    fn the_byte_cap_holds_and_oversized_lines_are_named() {
        let big = format!("{{\"probeId\":\"p9\",\"data\":\"{}\"}}\n", "x".repeat(400));
        let small = "{\"probeId\":\"p1\"}\n".repeat(40);
        let file = log("cap.jsonl", &format!("{big}{small}"));
        let page = read_page(
            &file,
            &LogQuery {
                max_bytes: Some(256),
                ..LogQuery::default()
            },
        )
        .unwrap();
        assert_eq!(page.oversized, [1]);
        let bytes: usize = page.entries.iter().map(|e| e.entry.to_string().len()).sum();
        assert!(bytes <= 256, "{bytes}");
        assert!(page.next_cursor.is_some());
        assert!(matches!(
            read_page(
                &file,
                &LogQuery {
                    cursor: Some("x".into()),
                    ..LogQuery::default()
                }
            ),
            Err(ReadError::BadCursor { .. })
        ));
    }

    #[test]
    fn a_cursor_not_given_out_for_this_file_is_refused_before_any_seek() {
        let file = log("range.jsonl", "{\"n\":1}\n{\"n\":2}\n");
        let page = |cursor: &str| {
            read_page(
                &file,
                &LogQuery {
                    cursor: Some(cursor.into()),
                    ..LogQuery::default()
                },
            )
        };
        let lines = |cursor| {
            page(cursor)
                .unwrap()
                .entries
                .iter()
                .map(|e| e.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines("0:0"), [1, 2]);
        assert_eq!(lines("8:1"), [2]);
        assert_eq!(lines("16:2"), Vec::<u64>::new(), "the end is a cursor too");
        for (cursor, why) in [
            ("18446744073709551615:0", "past the end"),
            ("17:2", "past the end"),
            ("3:0", "start of a line"),
            ("8:9", "more lines than"),
            ("0:18446744073709551615", "more lines than"),
            ("-1:0", "not a cursor"),
        ] {
            let error = page(cursor).unwrap_err();
            assert!(
                matches!(error, ReadError::BadCursor { .. }),
                "{cursor}: {error:?}"
            );
            assert!(error.to_string().contains(why), "{cursor}: {error}");
        }
        let missing = file.with_file_name("missing.jsonl");
        let query = |cursor: &str| LogQuery {
            cursor: Some(cursor.into()),
            ..LogQuery::default()
        };
        assert!(read_page(&missing, &query("0:0"))
            .unwrap()
            .entries
            .is_empty());
        assert!(matches!(
            read_page(&missing, &query("8:1")),
            Err(ReadError::BadCursor { .. })
        ));
    }

    #[test]
    fn lines_are_read_within_a_cap() {
        let mut input = std::io::Cursor::new(b"short\nloooooooooong\n\nend".to_vec());
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        while let Some((read, whole)) = read_line_capped(&mut input, &mut buf, 8).unwrap() {
            lines.push((read, whole, String::from_utf8(buf.clone()).unwrap()));
        }
        assert_eq!(
            lines,
            [
                (6, true, "short\n".into()),
                (14, false, "looooooo".into()),
                (1, true, "\n".into()),
                (3, true, "end".into())
            ]
        );
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
}
