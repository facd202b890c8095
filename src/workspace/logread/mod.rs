//! Reading run logs for a model (DESIGN section 7): filtered pages with a
//! cursor, a line limit and a byte cap, so a huge log never floods the
//! context; and a per-probe summary that streams the file in bounded memory.
//! Malformed lines are counted and located, never fatal.

use crate::core::redact::Redactor;
use serde::Serialize;
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

mod around_mark;
mod line_scan;
pub mod marks;
pub mod outcomes;
mod piece;
mod ranges;
mod summary;
pub use around_mark::MarkComparison;
pub use summary::{summarize, LogSummary, ProbeFigures, SUMMARY_PROBES};

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 500;
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;
pub const MAX_MAX_BYTES: usize = 1024 * 1024;
/// Malformed lines located per answer; more are only counted.
const MALFORMED_LISTED: usize = 20;
/// Lines over the byte cap named per page; a page ends at the 20th.
const OVERSIZED_LISTED: usize = 20;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    pub probe: Option<String>,
    pub hypothesis: Option<String>,
    pub contains: Option<String>,
    pub cursor: Option<String>,
    pub limit: Option<usize>,
    pub max_bytes: Option<usize>,
    /// Only lines after this one (a mark's line).
    pub after_line: Option<u64>,
    /// Only lines before this one (a later mark's line).
    pub before_line: Option<u64>,
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

/// What an entry costs a page beyond its text: the line number it is
/// shown after (`12345678: `).
const NUMBERED: usize = 10;

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
        if query.before_line.is_some_and(|before| line >= before) {
            // The range ends here: no page after this one.
            return Ok(page);
        }
        if query.after_line.is_some_and(|after| line <= after) {
            continue;
        }
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
        let cost = text.len() + NUMBERED;
        if page.entries.len() == limit || used + cost > max_bytes {
            page.next_cursor = Some(format!("{}:{}", here.0, here.1));
            return Ok(page);
        }
        used += cost;
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

/// One line (through `\n`) into `buf`, keeping at most `cap` bytes of it:
/// the bytes consumed and whether the line fit; None at the end of input.
pub(crate) fn read_line_capped(
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

/// What the readers' tests share: a log file with its lines, and a log
/// with every kind of line.
#[cfg(test)]
mod test_logs {
    use std::path::{Path, PathBuf};

    /// A test's log file, removed when the test is done with it (and its
    /// directory with the last one).
    pub struct LogFile(PathBuf);

    impl std::ops::Deref for LogFile {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl AsRef<Path> for LogFile {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for LogFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
            if let Some(dir) = self.0.parent() {
                // Fails while another test's file is in it.
                let _ = std::fs::remove_dir(dir);
            }
        }
    }

    pub fn log(name: &str, text: &str) -> LogFile {
        let dir = std::env::temp_dir().join(format!("ds-logread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        LogFile(file)
    }

    pub const LOG: &str = "{\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:3\",\"data\":{\"n\":1},\"timestamp\":10}\n\
                       not json\n\
                       {\"probeId\":\"p2\",\"hypothesisId\":\"H2\",\"data\":{\"n\":2},\"timestamp\":11}\n\
                       \n\
                       {\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:3\",\"data\":{\"n\":1},\"timestamp\":12}\r\n\
                       [1,2]\n\
                       {\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"a.py:4\",\"data\":{\"n\":3},\"timestamp\":13}";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The readers as a workspace with the built-in redaction uses them.
    fn read_page(file: &Path, query: &LogQuery) -> Result<LogPage, ReadError> {
        super::read_page(file, query, &Redactor::default())
    }

    use super::test_logs::{log, LOG};

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
}
