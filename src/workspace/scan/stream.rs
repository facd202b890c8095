//! Reading a file for probes in bounded memory: the file is streamed line by
//! line and only the lines that may hold a finding are kept, each at most a
//! window of `LINE_WINDOW` bytes. A 150 MB one-line file costs a window, not
//! 150 MB, and a probe hidden at the end of a minified line is still found:
//! a long line is searched window by window, with an overlap so that no
//! fingerprint is split between two windows.

use crate::core::findings::{self, Clues, Finding};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// A file with a NUL in its first 8 KiB is binary and not read further.
const BINARY_SNIFF: usize = 8 * 1024;
/// The most of one line held at once.
const LINE_WINDOW: usize = 64 * 1024;
/// Bytes a window keeps from the one before it: longer than any
/// fingerprint, so none is cut in two.
const OVERLAP: usize = 1024;

/// What `file` (read at `path`) holds, or None when it cannot be read or is
/// binary.
pub fn scan_file(path: &Path, file: &str, clues: &Clues) -> Option<Vec<Finding>> {
    let handle = File::open(path).ok()?;
    let lines = candidate_lines(handle).ok()??;
    if lines.is_empty() {
        return Some(Vec::new());
    }
    let borrowed = lines.iter().map(|(number, text)| (*number, text.as_str()));
    Some(findings::find_lines(file, borrowed, clues))
}

/// The lines of `input` that may hold a finding, numbered from 1, each cut
/// to a window around its first sign of one; None for a binary file.
fn candidate_lines(mut input: impl Read) -> io::Result<Option<Vec<(u32, String)>>> {
    // The head first, so a large binary file costs no more than it.
    let mut head = Vec::with_capacity(BINARY_SNIFF);
    (&mut input)
        .take(BINARY_SNIFF as u64)
        .read_to_end(&mut head)?;
    if memchr::memchr(0, &head).is_some() {
        return Ok(None);
    }
    let mut reader = BufReader::with_capacity(LINE_WINDOW, io::Cursor::new(head).chain(input));
    let mut kept = Vec::new();
    let mut line = LineWindow::default();
    let mut number: u32 = 1;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            if let Some(text) = line.finish() {
                kept.push((number, text));
            }
            return Ok(Some(kept));
        }
        let (chunk, ends) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], true),
            None => (available, false),
        };
        line.push(chunk);
        let used = chunk.len() + usize::from(ends);
        reader.consume(used);
        if ends {
            if let Some(text) = line.finish() {
                kept.push((number, text));
            }
            number = number.saturating_add(1);
        }
    }
}

/// One line as far as it is kept: the window being searched, and whether a
/// sign of a finding was seen in it (then the window stops sliding).
#[derive(Default)]
struct LineWindow {
    bytes: Vec<u8>,
    found: bool,
}

impl LineWindow {
    fn push(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let limit = if self.found {
                LINE_WINDOW + OVERLAP
            } else {
                LINE_WINDOW
            };
            let room = limit.saturating_sub(self.bytes.len());
            if room == 0 {
                if self.found {
                    return; // the rest of a line already kept
                }
                if findings::may_hold_findings(&self.bytes) {
                    self.found = true;
                    continue;
                }
                // Slide: keep the overlap, search on.
                let drop = self.bytes.len() - OVERLAP;
                self.bytes.drain(..drop);
                continue;
            }
            let take = room.min(chunk.len());
            self.bytes.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
    }

    /// The line's kept text, when it may hold a finding; ready for the next.
    fn finish(&mut self) -> Option<String> {
        let bytes = std::mem::take(&mut self.bytes);
        let found = std::mem::take(&mut self.found) || findings::may_hold_findings(&bytes);
        found.then(|| {
            let text = String::from_utf8_lossy(&bytes);
            text.trim_end_matches('\r').to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(u32, String)> {
        candidate_lines(input).unwrap().unwrap()
    }

    #[test]
    fn only_lines_that_may_hold_a_finding_are_kept_with_their_numbers() {
        let text = b"a\r\nprobeId: p1\r\nb\n// #region debug-probe p2 s";
        assert_eq!(
            lines(text),
            [
                (2, "probeId: p1".to_string()),
                (4, "// #region debug-probe p2 s".to_string())
            ]
        );
        assert!(candidate_lines(&b"x\0probeId"[..]).unwrap().is_none());
    }

    #[test]
    fn a_sign_deep_in_a_huge_line_is_kept_in_a_window() {
        let mut line = vec![b'x'; 5 * LINE_WINDOW + 17];
        line.extend_from_slice(b" fetch('http://127.0.0.1:7777/ingest/abc')");
        line.extend(vec![b'y'; 3 * LINE_WINDOW]);
        line.extend_from_slice(b"\nnext probeId p3\n");
        let kept = lines(&line);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].0, 1);
        assert!(kept[0].1.contains("/ingest/abc"), "{}", kept[0].1.len());
        assert!(kept[0].1.len() <= LINE_WINDOW + OVERLAP);
        assert_eq!(kept[1], (2, "next probeId p3".to_string()));
    }

    #[test]
    fn a_sign_across_two_windows_is_not_lost() {
        for shift in [0, 1, 3, 6, 500, 1000] {
            let mut line = vec![b'x'; LINE_WINDOW - shift];
            line.extend_from_slice(b"probeId");
            line.extend(vec![b'z'; 2 * LINE_WINDOW]);
            let kept = lines(&line);
            assert_eq!(kept.len(), 1, "shift {shift}");
            assert!(kept[0].1.contains("probeId"), "shift {shift}");
        }
    }
}
