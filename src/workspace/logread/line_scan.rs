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
    /// control character (`core::json_string`).
    fn text_end(&self) -> Option<usize> {
        crate::core::json_string::text_end(self.bytes, self.at)
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
