//! How a stream's bytes become the run's lines: split where they lie,
//! recorded many at once where they need nothing but their bytes, redacted
//! where a secret's anchor is, counted in one pass past the run's cap, and
//! the last of them kept for the tail.

use super::recorder::{index, Recorder};
use crate::core::redact::holds_private_key_mark;
use crate::core::reproduction::{Source, TailLine, LINE_CAP, TAIL_LINES, TAIL_LINE_BYTES};

/// The most a cut line drops of the word it was cut in.
const CUT_WORD: usize = 128;

impl Recorder<'_> {
    /// A chunk of a stream; `anchors` are where in it a secret's anchor
    /// ends (in order), so only the lines holding one are redacted; None
    /// when the chunk was not scanned (every line it ends is checked).
    pub(super) fn take(
        &mut self,
        source: Source,
        mut bytes: &[u8],
        at: u64,
        anchors: Option<&[usize]>,
    ) {
        let i = index(source);
        let every_line = anchors.is_none() || self.target.redactor.checks_every_line();
        let anchors = anchors.unwrap_or_default();
        // The chunk checked as UTF-8 once, at memory speed: its whole lines
        // need no check of their own (a chunk that ends inside a character
        // leaves its lines to theirs).
        let checked = std::str::from_utf8(bytes).ok();
        // Only a chunk's last `TAIL_LINES` lines can still be in the tail
        // when it is read: each later line pushes the oldest out.
        let ended = memchr::memchr_iter(b'\n', bytes).count();
        let tail_from = ended.saturating_sub(TAIL_LINES);
        let (mut offset, mut next_anchor, mut line) = (0usize, 0usize, 0usize);
        let plain = checked.filter(|_| !every_line && self.takes_plain_lines());
        while !bytes.is_empty() {
            let fresh = self.partial[i].0.is_empty() && self.partial[i].1 == 0;
            if let (Some(text), true) = (plain, fresh && !self.capped && !self.streams[i].is_open())
            {
                // Up to the line of the next anchor, if any.
                let until = anchors.get(next_anchor).copied().unwrap_or(text.len());
                let (to, lines) =
                    self.plain_lines(source, text, offset, until, line, tail_from, at);
                if lines > 0 {
                    bytes = &bytes[to - offset..];
                    (offset, line) = (to, line + lines);
                    continue;
                }
            }
            if self.capped && fresh && line < tail_from {
                if let Some(skipped) = self.count_past_cap(i, bytes, tail_from - line) {
                    bytes = &bytes[skipped..];
                    offset += skipped;
                    line = tail_from;
                    while next_anchor < anchors.len() && anchors[next_anchor] < offset {
                        next_anchor += 1;
                    }
                    continue;
                }
            }
            let newline = memchr::memchr(b'\n', bytes);
            let piece_end = offset + newline.map_or(bytes.len(), |n| n + 1);
            while next_anchor < anchors.len() && anchors[next_anchor] < piece_end {
                self.dirty[i] = true;
                next_anchor += 1;
            }
            self.dirty[i] |= every_line;
            let (piece, ends) = match newline {
                Some(n) => (&bytes[..n], Some(n + 1)),
                None => (bytes, None),
            };
            let to_tail = line >= tail_from;
            if let (true, Some(n)) = (fresh, ends) {
                // A whole line in the chunk: recorded from where it lies.
                let whole = piece.len();
                let text = checked
                    .filter(|_| whole <= LINE_CAP)
                    .and_then(|text| text.get(offset..offset + whole));
                self.record_line(
                    source,
                    &piece[..whole.min(LINE_CAP)],
                    text,
                    whole,
                    at,
                    to_tail,
                );
                bytes = &bytes[n..];
                offset += n;
                line += 1;
                continue;
            }
            let (kept, length, first_at) = &mut self.partial[i];
            if fresh {
                *first_at = at;
            }
            let room = LINE_CAP.saturating_sub(kept.len());
            kept.extend_from_slice(&piece[..piece.len().min(room)]);
            *length += piece.len();
            match ends {
                Some(n) => {
                    self.line(source, to_tail);
                    bytes = &bytes[n..];
                    offset += n;
                    line += 1;
                }
                None => break,
            }
        }
    }

    #[cfg(not(test))]
    fn takes_plain_lines(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn takes_plain_lines(&self) -> bool {
        !self.line_by_line
    }

    /// The whole lines of `text` from `from` that need nothing but their
    /// bytes between quotes (no escape, no cut, no carriage return) and end
    /// before `until` (where an anchor of a secret ends), recorded in one
    /// pass that finds their ends and what would need escaping at once:
    /// where they end, and how many there were. Most output is such lines.
    #[allow(clippy::too_many_arguments)]
    fn plain_lines(
        &mut self,
        source: Source,
        text: &str,
        from: usize,
        until: usize,
        mut line: usize,
        tail_from: usize,
        at: u64,
    ) -> (usize, usize) {
        let (i, bytes, first) = (index(source), text.as_bytes(), line);
        let mut start = from;
        while let Some(end) = crate::core::json_string::text_end(bytes, start) {
            if bytes[end] != b'\n' || end >= until || end - start > LINE_CAP {
                break;
            }
            let piece = &text[start..end];
            self.lines[i] += 1;
            if line >= tail_from {
                self.keep_in_tail(source, piece);
            }
            line += 1;
            start = end + 1;
            if !self.append_plain_line(source, piece, at) {
                break;
            }
        }
        (start, line - first)
    }

    /// Past the cap, the whole lines of `bytes` before its last
    /// `TAIL_LINES` (`lines` of them) are only counted: how many bytes they
    /// take. None when a private key block may open or run in them, which
    /// the stream's redaction must follow line by line.
    fn count_past_cap(&mut self, i: usize, bytes: &[u8], lines: usize) -> Option<usize> {
        if self.streams[i].is_open() {
            return None;
        }
        // From the end: the newline with the tail's lines after it.
        let end = memchr::memrchr_iter(b'\n', bytes).nth(TAIL_LINES)? + 1;
        if holds_private_key_mark(&bytes[..end]) {
            return None;
        }
        self.lines[i] += lines as u64;
        self.dropped += lines as u64;
        Some(end)
    }

    /// The stream ended: its unfinished line, if any, is a line.
    pub(super) fn close(&mut self, source: Source, at: u64) {
        let (_, length, first_at) = &mut self.partial[index(source)];
        if *length > 0 {
            if *first_at == 0 {
                *first_at = at;
            }
            self.line(source, true);
        }
    }

    /// The stream's unfinished line is whole: recorded (and kept for the
    /// tail when `to_tail`), and its buffer kept for the next one.
    pub(super) fn line(&mut self, source: Source, to_tail: bool) {
        let i = index(source);
        let mut kept = std::mem::take(&mut self.partial[i].0);
        let (length, at) = (self.partial[i].1, self.partial[i].2);
        self.partial[i].1 = 0;
        self.partial[i].2 = 0;
        self.record_line(source, &kept, None, length, at, to_tail);
        kept.clear();
        self.partial[i].0 = kept;
    }

    /// One line of output: `kept` its first bytes (all of them unless it
    /// was longer than `LINE_CAP`), `checked` the same when they are known
    /// to be UTF-8, `length` its whole length; `to_tail` when it may still
    /// be among the stream's last lines.
    fn record_line(
        &mut self,
        source: Source,
        kept: &[u8],
        checked: Option<&str>,
        length: usize,
        at: u64,
        to_tail: bool,
    ) {
        let i = index(source);
        self.lines[i] += 1;
        let cut = length > kept.len();
        let kept = match kept.split_last() {
            Some((b'\r', rest)) if !cut => rest,
            _ => kept,
        };
        // Most output is valid UTF-8: checked at memory speed (with its
        // chunk, or here), and only a line that is not is rebuilt with
        // replacement characters.
        let text = match checked.and_then(|text| text.get(..kept.len())) {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => match std::str::from_utf8(kept) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(kept),
            },
        };
        // A line cut inside a character keeps what is whole, and a line cut
        // inside a word drops that word's last `CUT_WORD` bytes at most: it
        // may be the start of a secret the cut left too short to be
        // recognized.
        let text = if cut {
            let whole = text.trim_end_matches('\u{fffd}');
            let word_start = whole
                .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || "_-.+/=:~".contains(c))
                .len();
            // Past `word_start` every byte is ASCII: any cut there is whole.
            &whole[..word_start.max(whole.len().saturating_sub(CUT_WORD))]
        } else {
            text.as_ref()
        };
        // Before it is kept anywhere: the tail goes to the model. A line
        // whose chunks held no anchor of a secret goes as it is.
        let dirty = std::mem::take(&mut self.dirty[i]);
        let (text, _) = if dirty || self.streams[i].is_open() {
            self.streams[i].line(&self.target.redactor, text)
        } else {
            (std::borrow::Cow::Borrowed(text), 0)
        };
        let text = text.as_ref();
        if to_tail {
            self.keep_in_tail(source, text);
        }
        if self.capped {
            // Over the cap: counted, not written.
            self.dropped += 1;
            return;
        }
        self.append_line(source, text, at, cut.then_some(length));
    }

    fn keep_in_tail(&mut self, source: Source, text: &str) {
        // The oldest line's buffer is reused: no allocation per line.
        let mut tail = match self.tail.len() >= TAIL_LINES {
            true => self.tail.pop_front(),
            false => None,
        }
        .unwrap_or(TailLine {
            source,
            text: String::new(),
        });
        tail.source = source;
        tail.text.clear();
        if text.len() <= TAIL_LINE_BYTES {
            tail.text.push_str(text);
        } else {
            tail.text = crate::core::budget::cut(text, TAIL_LINE_BYTES);
        }
        self.tail.push_back(tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::reproduce::recorder::tests::target;
    use crate::workspace::reproduce::Target;

    #[test]
    fn a_crlf_line_is_not_called_cut_and_lines_split_over_chunks_are_whole() {
        let target = target(false);
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(&target, file, u64::MAX);
        recorder.take(Source::Stdout, b"one\r\ntw", 1, Some(&[]));
        recorder.take(Source::Stdout, b"o\nthree", 2, Some(&[]));
        recorder.close(Source::Stdout, 3);
        let text = String::from_utf8(recorder.batch.clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let messages: Vec<&str> = lines
            .iter()
            .map(|l| l["message"].as_str().unwrap())
            .collect();
        assert_eq!(messages, ["one", "two", "three"]);
        assert!(
            lines.iter().all(|l| l.get("truncatedFrom").is_none()),
            "{text}"
        );
        assert_eq!(
            lines[1]["timestamp"], 1,
            "a line is timed by its first byte"
        );
        assert_eq!(recorder.lines, [3, 0]);
    }
    #[test]
    fn lines_of_checked_chunks_and_of_chunks_cut_inside_a_character_read_alike() {
        let target = target(false);
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(&target, file, u64::MAX);
        // Whole and valid; then "é" cut between two chunks; then a chunk
        // that is not UTF-8 at all.
        recorder.take(Source::Stdout, "café\r\nnaïve\n".as_bytes(), 1, Some(&[]));
        recorder.take(Source::Stdout, b"r\xc3", 2, Some(&[]));
        recorder.take(Source::Stdout, b"\xa9sum\xc3\nok\n\xff\xfe\n", 3, Some(&[]));
        recorder.close(Source::Stdout, 4);
        let text = String::from_utf8(recorder.batch.clone()).unwrap();
        let messages: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message"].to_string())
            .collect();
        assert_eq!(
            messages,
            [
                "\"café\"",
                "\"naïve\"",
                "\"résum\u{fffd}\"",
                "\"ok\"",
                "\"\u{fffd}\u{fffd}\""
            ]
        );
    }

    /// A recorder given `stream` in `chunks`: anchors where the reader
    /// finds them, and none scanned once the run is capped (as the reader
    /// stops then); `line_by_line`, the reference, reads each line alone.
    fn recorded<'t>(
        target: &'t Target,
        stream: &[u8],
        chunks: &[usize],
        cap: u64,
        line_by_line: bool,
    ) -> Recorder<'t> {
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut recorder = Recorder::new(target, file, cap);
        recorder.line_by_line = line_by_line;
        let anchors = target.redactor.anchors_in(stream);
        let mut start = 0;
        for &end in chunks.iter().chain([&stream.len()]) {
            let end = end.clamp(start, stream.len());
            if end == start {
                continue;
            }
            let found: Vec<usize> = anchors
                .iter()
                .filter(|&&a| (start..end).contains(&a))
                .map(|a| a - start)
                .collect();
            let scanned = (!recorder.capped).then_some(found.as_slice());
            recorder.take(Source::Stdout, &stream[start..end], 1, scanned);
            start = end;
        }
        recorder.close(Source::Stdout, 1);
        recorder
    }

    proptest::proptest! {
        /// Plain lines are recorded many at once, lines past the cap are
        /// counted in one pass, and only a chunk's last lines are kept for
        /// the tail: the records, counts and tail are those of a recorder
        /// given one line at a time that reads each alone.
        #[test]
        fn chunks_past_the_cap_count_and_keep_what_lines_one_by_one_do(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z ]{0,20}",
                    "[a-z \"\\\\\t\r\u{e9}\u{2028}]{0,20}",
                    "Authorization: Bearer [a-zA-Z0-9]{12,20}",
                    proptest::strategy::Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
                    proptest::strategy::Just("-----END RSA PRIVATE KEY-----".to_string()),
                    "[A-Za-z0-9+/]{40,64}",
                    proptest::strategy::Just("x".repeat(LINE_CAP + 10)),
                ],
                0..200,
            ),
            chunks in proptest::collection::vec(0usize..20_000, 0..12),
            cap in 0u64..6_000,
            ends_with_newline in proptest::bool::ANY,
        ) {
            let target = Target { redactor: crate::core::redact::Redactor::default(), ..target(false) };
            let mut stream = lines.join("\n").into_bytes();
            if ends_with_newline {
                stream.push(b'\n');
            }
            let mut chunks = chunks;
            chunks.sort_unstable();
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &stream).map(|n| n + 1).collect();
            let chunked = recorded(&target, &stream, &chunks, cap, false);
            let by_line = recorded(&target, &stream, &ends, cap, true);
            proptest::prop_assert_eq!(&chunked.lines, &by_line.lines);
            proptest::prop_assert_eq!(chunked.dropped, by_line.dropped);
            proptest::prop_assert_eq!(&chunked.tail, &by_line.tail);
            proptest::prop_assert_eq!(
                String::from_utf8_lossy(&chunked.batch),
                String::from_utf8_lossy(&by_line.batch)
            );
        }
    }
}
