//! The summary's fast path (issue 33): one pass over a log line that finds
//! the six fields a summary reads and checks the rest is JSON, without
//! building anything. It answers only for lines it reads whole under a
//! stricter grammar than JSON's (no `\u` escape anywhere, no escape in a
//! key or in a text field it returns, no exponent, no repeated field, at
//! most 64 levels); every other line goes to `serde_json`, which decides.
//! So whatever this accepts, `serde_json` accepts with the same fields
//! (a property test holds it to that).

/// The fields of a summary line: texts borrowed as written, `timestamp`
/// and `data` as their raw JSON.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Fields<'a> {
    pub probe_id: Option<&'a str>,
    pub hypothesis_id: Option<&'a str>,
    pub location: Option<&'a str>,
    pub source: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub data: Option<&'a str>,
    /// Whether the line has a `probeError` (a source block's failure).
    pub probe_error: bool,
}

const MAX_DEPTH: usize = 64;

/// The fields of `line` when it is a JSON object this scanner reads whole;
/// None when `serde_json` must decide.
pub(super) fn scan(line: &str) -> Option<Fields<'_>> {
    let mut scanner = Scanner {
        text: line,
        bytes: line.as_bytes(),
        at: 0,
    };
    let mut fields = Fields::default();
    let mut seen = [false; 6];
    scanner.space();
    scanner.eat(b'{')?;
    scanner.space();
    if scanner.peek() == Some(b'}') {
        scanner.at += 1;
    } else {
        loop {
            let key = scanner.plain_string()?;
            scanner.space();
            scanner.eat(b':')?;
            scanner.space();
            // As bytes: compared in place, without a call per key.
            let slot = match key.as_bytes() {
                b"probeId" => Some(0),
                b"hypothesisId" => Some(1),
                b"location" => Some(2),
                b"source" => Some(3),
                b"timestamp" => Some(4),
                b"data" => Some(5),
                _ => None,
            };
            match slot {
                Some(slot) => {
                    // serde refuses a repeated field: it decides.
                    if std::mem::replace(&mut seen[slot], true) {
                        return None;
                    }
                    let start = scanner.at;
                    let null = scanner.bytes[start..].starts_with(b"null");
                    if slot < 4 {
                        let text = if null {
                            scanner.at += 4;
                            None
                        } else {
                            Some(scanner.plain_string()?)
                        };
                        match slot {
                            0 => fields.probe_id = text,
                            1 => fields.hypothesis_id = text,
                            2 => fields.location = text,
                            _ => fields.source = text,
                        }
                    } else {
                        scanner.value(0)?;
                        let raw = (!null).then(|| &line[start..scanner.at]);
                        if slot == 4 {
                            fields.timestamp = raw;
                        } else {
                            fields.data = raw;
                        }
                    }
                }
                None => {
                    fields.probe_error |= key == super::outcomes::PROBE_ERROR;
                    scanner.value(0)?
                }
            }
            scanner.space();
            match scanner.next()? {
                b',' => scanner.space(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    scanner.space();
    (scanner.at == scanner.bytes.len()).then_some(fields)
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `word` below `limit` (`limit` <= 0x80),
/// exact up to the first such byte (a borrow may mark some after it).
fn below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS
}

/// The high bit of each byte of `word` that ends a string's text (`"`,
/// `\\` or a control character), the lowest one exact.
fn stops_in(word: u64) -> u64 {
    below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
        | below(word, 0x20)
}

/// A bit for each of the 16 bytes that ends a string's text.
#[cfg(target_arch = "x86_64")]
#[inline]
fn sse2_stops(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64, and the load reads the 16 bytes of
    // `block` (unaligned loads allow any address).
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // Unsigned `byte < 0x20`: the larger of it and 0x1f is 0x1f.
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(bytes, low), low);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn space(&mut self) {
        // Compact JSON has none: one look.
        if self.bytes.get(self.at).is_some_and(|b| *b > b' ') {
            return;
        }
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Where the string's text from `at` stops: the first `"`, `\\` or
    /// control character. Sixteen bytes at a time where the processor has
    /// SSE2 (every x86-64), then eight, then one (log strings are short,
    /// too short to set up a general vector search for each).
    fn text_end(&self) -> Option<usize> {
        let mut at = self.at;
        #[cfg(target_arch = "x86_64")]
        while let Some(block) = self.bytes.get(at..at + 16) {
            let stops = sse2_stops(block.try_into().ok()?);
            if stops != 0 {
                return Some(at + stops.trailing_zeros() as usize);
            }
            at += 16;
        }
        while let Some(word) = self.bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(word.try_into().ok()?);
            let stops = stops_in(word);
            if stops != 0 {
                return Some(at + (stops.trailing_zeros() / 8) as usize);
            }
            at += 8;
        }
        let rest = self.bytes.get(at..)?;
        rest.iter()
            .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
            .map(|n| at + n)
    }

    /// A string without any escape: its text.
    fn plain_string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let end = self.text_end()?;
        if self.bytes[end] != b'"' {
            return None;
        }
        self.at = end + 1;
        // `"` is ASCII: both ends fall between characters.
        self.text.get(start..end)
    }

    /// A string with the simple escapes allowed (none of `\u`).
    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let stop = self.text_end()?;
            self.at = stop + 1;
            match self.bytes[stop] {
                b'"' => return Some(()),
                b'\\' => {}
                _ => return None,
            }
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                _ => return None,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, and no exponent.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let first = self.peek()?;
        let whole = self.digits();
        if whole == 0 || (first == b'0' && whole > 1) {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        match self.peek() {
            Some(b'e' | b'E') => None,
            _ => Some(()),
        }
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string(),
            b'{' => {
                self.at += 1;
                self.space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.string()?;
                    self.space();
                    self.eat(b':')?;
                    self.space();
                    self.value(depth + 1)?;
                    self.space();
                    match self.next()? {
                        b',' => self.space(),
                        b'}' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                self.space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.value(depth + 1)?;
                    self.space();
                    match self.next()? {
                        b',' => self.space(),
                        b']' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_end(text: &str, at: usize) -> Option<usize> {
        text.as_bytes()[at..]
            .iter()
            .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
            .map(|n| at + n)
    }

    proptest! {
        /// Sixteen or eight bytes at a time finds the byte one at a time does,
        /// whatever stands before or after it (borrows, high bytes).
        #[test]
        fn a_strings_end_is_found_many_bytes_at_a_time(
            text in "[ -~\u{1}\u{1f}\u{7f}\u{80}-\u{7ff}\u{fffd}\"\\\\]{0,60}",
            at in 0usize..60,
        ) {
            let at = at.min(text.len());
            prop_assume!(text.is_char_boundary(at));
            let scanner = Scanner { text: &text, bytes: text.as_bytes(), at };
            prop_assert_eq!(scanner.text_end(), naive_end(&text, at));
        }
    }

    #[test]
    fn every_byte_below_a_space_ends_a_string_and_no_other_but_quote_and_backslash() {
        for byte in 0u8..=0x7f {
            let text = format!("abcdefghij{}klmnopqrstu", byte as char);
            let scanner = Scanner {
                text: &text,
                bytes: text.as_bytes(),
                at: 0,
            };
            let stops = byte < 0x20 || byte == b'"' || byte == b'\\';
            assert_eq!(scanner.text_end(), stops.then_some(10), "byte {byte:#x}");
        }
    }
}
