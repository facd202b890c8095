//! The person's marks (issue 31): a record `{"source": "marker", "words":
//! ..., "timestamp": ...}` in a run says "it happened here". `debug-sidecar
//! mark` and `debug/mark` write one; a page posts one to the ingest URL.
//! Readers find them by line, so a range of a run is "after this mark,
//! before that one" (`afterLine`, `beforeLine`).

use crate::core::redact::Redactor;
use serde::Serialize;
use serde_json::Value;
use std::io;
use std::path::Path;

/// The `source` of a mark's record.
pub const MARKER: &str = "marker";
/// The longest words a mark keeps (cut beyond).
pub const MARK_WORDS: usize = 500;
/// Marks a listing names; more are only counted.
pub const MARKS_LISTED: usize = 20;

/// A mark as a reader lists it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    /// 1-based line of the run's file.
    pub line: u64,
    pub words: String,
    pub timestamp: Option<Value>,
}

/// The marks of a run, in order (at most `MARKS_LISTED`), and how many
/// there are.
pub fn marks(file: &Path, redactor: &Redactor) -> io::Result<(Vec<Mark>, u64)> {
    let outcomes = super::outcomes::read(file, redactor)?;
    Ok((outcomes.marks, outcomes.marks_total))
}

/// The record of a mark: the person's words (cut to `MARK_WORDS`) and the time.
pub fn mark_record(session_id: &str, words: &str, now_ms: u64) -> Value {
    let words: String = words.trim().chars().take(MARK_WORDS).collect();
    serde_json::json!({
        "source": MARKER,
        "sessionId": session_id,
        "words": words,
        "timestamp": now_ms,
    })
}

/// The 1-based line at which `record` (one line, as written) first appears
/// at or after byte `from` of `file`.
pub fn line_of(file: &Path, record: &[u8], from: u64) -> io::Result<Option<u64>> {
    let bytes = std::fs::read(file)?;
    let from = usize::try_from(from).unwrap_or(usize::MAX).min(bytes.len());
    let Some(at) = memchr::memmem::find(&bytes[from..], record) else {
        return Ok(None);
    };
    let before = &bytes[..from + at];
    Ok(Some(memchr::memchr_iter(b'\n', before).count() as u64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_found_by_line_and_anything_else_is_left() {
        let file = super::super::test_logs::log(
            "marks",
            "{\"probeId\":\"p1\"}\n{\"source\":\"marker\",\"words\":\"clicked Save\",\"timestamp\":5}\nnot json marker\n{\"message\":\"a marker in words\"}\n{\"source\":\"marker\",\"words\":\"token=ghp_0123456789abcdefghijABCDEFGHIJ012345\"}\n",
        );
        let (found, count) = marks(&file, &Redactor::default()).unwrap();
        assert_eq!(count, 2);
        assert_eq!(found[0].line, 2);
        assert_eq!(found[0].words, "clicked Save");
        assert_eq!(found[0].timestamp, Some(serde_json::json!(5)));
        assert_eq!(found[1].line, 5);
        assert!(found[1].words.contains("[redacted:"), "{:?}", found[1]);
        let record = serde_json::to_vec(&mark_record("s", "  x  ", 7)).unwrap();
        assert_eq!(
            String::from_utf8(record.clone()).unwrap(),
            r#"{"sessionId":"s","source":"marker","timestamp":7,"words":"x"}"#
        );
        std::fs::write(&file, [b"a\nb\n".as_slice(), &record, b"\n"].concat()).unwrap();
        assert_eq!(line_of(&file, &record, 0).unwrap(), Some(3));
        assert_eq!(line_of(&file, &record, 100).unwrap(), None);
        let long = mark_record("s", &"é".repeat(MARK_WORDS + 9), 1);
        assert_eq!(long["words"].as_str().unwrap().chars().count(), MARK_WORDS);
        std::fs::remove_file(file).unwrap();
    }
}
