//! Reading a file for probes in bounded memory: the file is streamed line by
//! line and only the lines that may hold a finding are kept, each at most a
//! window of `LINE_WINDOW` bytes. A 150 MB one-line file costs a window, not
//! 150 MB, and a probe hidden at the end of a minified line is still found:
//! a long line is searched window by window, with an overlap so that no
//! fingerprint is split between two windows.

use crate::core::findings::{self, Clues, Finding};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// A file with a NUL in its first 8 KiB is binary and not read further.
const BINARY_SNIFF: usize = 8 * 1024;
/// The most of one line held at once.
const LINE_WINDOW: usize = 64 * 1024;
/// Bytes a window keeps from the one before it: longer than any
/// fingerprint, so none is cut in two.
const OVERLAP: usize = 1024;
/// Bytes of a block's seam looked at for a sign split in two: longer than
/// any of `may_hold_findings`' needles.
const SEAM: usize = 16;

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
    let mut reader = io::Cursor::new(head).chain(input);
    let mut block = vec![0u8; LINE_WINDOW];
    let mut kept = Vec::new();
    let mut line = LineWindow::default();
    let mut number: u32 = 1;
    // The end of the block before, so a sign split between two blocks is seen.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let read = match reader.read(&mut block) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if read == 0 {
            if let Some(text) = line.finish() {
                kept.push((number, text));
            }
            return Ok(Some(kept));
        }
        let bytes = &block[..read];
        let mut seam = std::mem::take(&mut carry);
        seam.extend_from_slice(&bytes[..read.min(SEAM)]);
        if findings::may_hold_findings(bytes) || findings::may_hold_findings(&seam) {
            // Line by line: this block may hold a finding.
            for piece in bytes.split_inclusive(|b| *b == b'\n') {
                let ends = piece.last() == Some(&b'\n');
                line.push(if ends {
                    &piece[..piece.len() - 1]
                } else {
                    piece
                });
                if ends {
                    if let Some(text) = line.finish() {
                        kept.push((number, text));
                    }
                    number = number.saturating_add(1);
                }
            }
        } else if let (Some(first), Some(last)) =
            (memchr::memchr(b'\n', bytes), memchr::memrchr(b'\n', bytes))
        {
            // Nothing here: end the line in progress, count the lines that
            // pass whole, and start the one that runs on.
            line.push(&bytes[..first]);
            if let Some(text) = line.finish() {
                kept.push((number, text));
            }
            let ends = memchr::memchr_iter(b'\n', bytes).count();
            number = number.saturating_add(u32::try_from(ends).unwrap_or(u32::MAX));
            line.push(&bytes[last + 1..]);
        } else {
            line.push(bytes);
        }
        carry.extend_from_slice(&bytes[read.saturating_sub(SEAM)..]);
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
    fn line_numbers_hold_across_blocks_with_and_without_signs() {
        let mut text = String::new();
        for i in 0..40_000 {
            text.push_str(&format!("plain line {i}\n"));
        }
        text.push_str("tail probeId p9\n");
        let kept = lines(text.as_bytes());
        assert_eq!(kept, [(40_001, "tail probeId p9".to_string())]);
        // A sign split by the block boundary is still seen.
        // (The first block ends where the binary sniff did.)
        for at in [
            BINARY_SNIFF - 3,
            BINARY_SNIFF - 7,
            LINE_WINDOW - 3,
            LINE_WINDOW,
        ] {
            let mut text = "\n".repeat(at);
            text.push_str("probeId p1\n");
            let kept = lines(text.as_bytes());
            assert_eq!(kept, [(at as u32 + 1, "probeId p1".to_string())], "at {at}");
        }
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
