//! The workspace's redaction settings, `<state dir>/redaction.json`:
//! `{"enabled": false}` turns redaction off (only ever explicitly), `keys`
//! and `patterns` add to the built-in rules (`core::redact`). A settings
//! file that is not this user's own, or that came with a state directory
//! committed to git, is not read: a repository cannot switch redaction off
//! for the person who clones it. A file that does not parse keeps the
//! built-in rules, and says why on stderr.

use crate::core::redact::{Redactor, Settings};
use std::path::Path;

pub const SETTINGS_FILE: &str = "redaction.json";

/// The redactor for the workspace at `root` with its state in `state_dir`.
pub fn load(root: &Path, state_dir: &Path) -> Redactor {
    let file = state_dir.join(SETTINGS_FILE);
    let Some(text) = crate::workspace::settings::read_trusted(root, state_dir, SETTINGS_FILE)
    else {
        return Redactor::default();
    };
    let settings = match serde_json::from_str::<Settings>(&text) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!(
                "debug-sidecar: {} is not valid ({error}); the built-in redaction applies",
                file.display()
            );
            return Redactor::default();
        }
    };
    Redactor::with_settings(&settings).unwrap_or_else(|error| {
        eprintln!(
            "debug-sidecar: {}: {error}; the built-in redaction applies",
            file.display()
        );
        Redactor::default()
    })
}

/// Values redacted in run files, counted by offset so a recount reads only
/// complete lines appended since: markers the doors on the way in wrote,
/// and secrets probes appended raw, which every read redacts. A line that
/// cannot hold one (`Redactor::redaction_words_in`) is not parsed, and the count
/// is kept beside the run (`<run>.redacted`) for the next process: a hook
/// is a new process each time, and used to read the whole run (1.5 s for
/// a run of 150 MB, issue 33).
#[derive(Debug, Default)]
pub struct RedactionCounter {
    files: std::collections::HashMap<std::path::PathBuf, Counted>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Counted {
    offset: u64,
    count: u64,
    inode: u64,
}

/// The count kept beside a run (`runlog::keep_beside`).
const REDACTED_KEPT: &str = "redacted";

impl RedactionCounter {
    pub fn count(&mut self, file: &Path, redactor: &Redactor) -> std::io::Result<u64> {
        use crate::workspace::runlog::{file_inode, keep_beside, read_beside};
        use std::io::{Read, Seek, SeekFrom};
        if !redactor.is_enabled() {
            return Ok(0);
        }
        let mut handle = match crate::workspace::runlog::open_own(file) {
            Ok(handle) => handle,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let meta = handle.metadata()?;
        let known = match self.files.get(file) {
            Some(known) => Some(*known),
            None => read_beside::<Counted>(file, REDACTED_KEPT),
        };
        let mut counted = known
            .filter(|k| k.offset <= meta.len() && k.inode == file_inode(&meta))
            .unwrap_or(Counted {
                inode: file_inode(&meta),
                ..Counted::default()
            });
        handle.seek(SeekFrom::Start(counted.offset))?;
        // Whole lines a megabyte at a time: the words that may need a
        // record redacted are looked for in the whole at once (`scan.rs`'s
        // lanes pay on a long text, not on one record).
        let left = meta.len().saturating_sub(counted.offset);
        let mut buffer =
            Vec::with_capacity(crate::workspace::runlog::read_size(left, READ_AT_ONCE) + 4096);
        loop {
            let read = (&mut handle)
                .take(READ_AT_ONCE as u64)
                .read_to_end(&mut buffer)?;
            let whole = match memchr::memrchr(b'\n', &buffer) {
                Some(last) => last + 1,
                None if read == 0 => break,
                None => continue,
            };
            counted.count += count_lines(&buffer[..whole], redactor);
            counted.offset += whole as u64;
            buffer.drain(..whole);
            if read == 0 {
                break;
            }
        }
        self.files.insert(file.to_path_buf(), counted);
        if known != Some(counted) {
            keep_beside(file, REDACTED_KEPT, &counted);
        }
        Ok(counted.count)
    }
}

/// How much of a run a count reads at once.
const READ_AT_ONCE: usize = 1 << 20;

/// Every record a door writes starts with the envelope's first key, which
/// names no secret (`record` leaves it alone).
const ENVELOPE_START: &[u8] = b"{\"sessionId\":";

/// The values redacted in `lines` (whole lines): the markers the doors
/// wrote, and what `record` redacts in a line that may need it (it holds a
/// backslash, a secret's anchor or a key word past the envelope's first key).
fn count_lines(lines: &[u8], redactor: &Redactor) -> u64 {
    let words = redactor.redaction_words_in(lines);
    let mut next_word = 0;
    let mut count = 0;
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', lines) {
        let line = &lines[start..=end];
        let skip = if line.starts_with(ENVELOPE_START) {
            ENVELOPE_START.len()
        } else {
            0
        };
        count += crate::core::redact::markers_in(line) as u64;
        let may_redact = match &words {
            None => true,
            Some(ends) => {
                while ends.get(next_word).is_some_and(|&at| at < start + skip) {
                    next_word += 1;
                }
                ends.get(next_word).is_some_and(|&at| at <= end)
                    || memchr::memchr(b'\\', &line[skip..]).is_some()
            }
        };
        if may_redact {
            if let Ok(mut record) = serde_json::from_slice::<serde_json::Value>(line) {
                count += redactor.record(&mut record) as u64;
            }
        }
        start = end + 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Every line parsed and redacted: what the counter must agree with.
    fn reference(text: &str, redactor: &Redactor) -> u64 {
        text.lines()
            .map(|line| {
                let mut count = crate::core::redact::markers_in(line.as_bytes()) as u64;
                if let Ok(mut record) = serde_json::from_str::<serde_json::Value>(line) {
                    count += redactor.record(&mut record) as u64;
                }
                count
            })
            .sum()
    }

    #[test]
    fn lines_skipped_unparsed_hold_nothing_to_redact_and_the_count_carries_over() {
        let redactor = Redactor::default();
        let lines = [
            r#"{"sessionId":"s1","runId":"r1","probeId":"p1","data":{"n":1}}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"password":"hunter22"}}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"url":"https:\/\/me:pa55word@db.example\/x"}}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"key":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"nested":{"sessionId":"abc123secret"}}}"#,
            r#"{"sessionId":"s1","message":"[redacted:github-token#abcd] and [redacted:password#0123]"}"#,
            r#"{"probeId":"p2","data":{"Session-Id":"zz"}}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"text":"plain words only"}}"#,
        ];
        let dir = std::env::temp_dir().join(format!("ds-redaction-count-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r1-a.jsonl");
        let first = lines[..5].join("\n") + "\n";
        std::fs::write(&file, &first).unwrap();
        let counted = RedactionCounter::default().count(&file, &redactor).unwrap();
        assert_eq!(counted, reference(&first, &redactor));
        assert!(counted >= 4, "{counted}");
        let rest = lines[5..].join("\n") + "\n";
        let mut handle = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        handle.write_all(rest.as_bytes()).unwrap();
        // A new process takes up the count the last one left.
        let whole = RedactionCounter::default().count(&file, &redactor).unwrap();
        assert_eq!(whole, reference(&(first + &rest), &redactor));
        assert!(file.with_extension(REDACTED_KEPT).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A run of several reads' worth, secrets spread through it and across
    /// the lanes' seams, a last line not yet whole: counted as every line
    /// parsed would be, the partial line once it is whole.
    #[test]
    fn a_long_run_is_counted_a_megabyte_at_a_time() {
        let redactor = Redactor::default();
        let kinds = [
            r#"{"sessionId":"s1","runId":"r1","source":"stdout","message":"request 12: user=ada total=84 status=ok","timestamp":1}"#,
            r#"{"sessionId":"s1","probeId":"p1","data":{"password":"hunter22"}}"#,
            r#"{"sessionId":"s1","message":"token ghp_abcdefghijklmnopqrstuvwxyz0123456789 seen"}"#,
            r#"{"sessionId":"s1","message":"[redacted:password#0123]"}"#,
            r#"{"sessionId":"s1","data":{"u":"a\u0070ssword"}}"#,
        ];
        let mut text = String::new();
        let mut i = 0usize;
        while text.len() < 3 * READ_AT_ONCE + 777 {
            // Mostly plain lines, the others at uneven intervals.
            let kind = if i.is_multiple_of(97) {
                1 + (i / 97) % 4
            } else {
                0
            };
            text.push_str(kinds[kind]);
            text.push('\n');
            i += 1;
        }
        let dir = std::env::temp_dir().join(format!("ds-redaction-long-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r1-b.jsonl");
        let partial = &kinds[1][..20];
        std::fs::write(&file, format!("{text}{partial}")).unwrap();
        let counted = RedactionCounter::default().count(&file, &redactor).unwrap();
        assert_eq!(counted, reference(&text, &redactor));
        assert!(counted > 100, "{counted}");
        let mut handle = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        handle
            .write_all(format!("{}\n", &kinds[1][20..]).as_bytes())
            .unwrap();
        let whole = RedactionCounter::default().count(&file, &redactor).unwrap();
        assert_eq!(
            whole,
            reference(&format!("{text}{}\n", kinds[1]), &redactor)
        );
        assert_eq!(whole, counted + 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
