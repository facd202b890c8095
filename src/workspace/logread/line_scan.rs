//! The summary's fast path (issue 33): one pass over a log line's bytes
//! that finds the six fields a summary reads and checks the rest is JSON
//! in UTF-8 (a string's non-ASCII characters are checked where they stand),
//! without building anything. It answers only for lines it reads whole
//! under a stricter grammar than JSON's (no `\u` escape anywhere, no escape
//! in a key or in a text field it returns, no exponent, no repeated field,
//! at most 64 levels below the line's object); every other line goes to
//! `serde_json`, which decides. So whatever this accepts is UTF-8 and
//! `serde_json` accepts it with the same fields (property tests hold it to
//! that). The keys of the lines before are remembered by place
//! (`KeyMemo`): a program's lines repeat them.

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

/// Containers a value may nest (`serde_json` passes over a value it does not
/// build at any depth, so this only bounds the scanner): one bit each in
/// `skip_value`'s stack.
const MAX_DEPTH: u32 = 64;
// The stack is a u64: a 65th bit would be lost.
const _: () = assert!(MAX_DEPTH <= u64::BITS);

/// What a key names: a field's place in `scan`'s spans (0-3 the texts, 4
/// the timestamp, 5 the data), `probeError`, or anything else.
const PROBE_ERROR_KEY: u8 = 6;
const OTHER_KEY: u8 = 7;

fn kind_of(key: &[u8]) -> u8 {
    // As arrays of known length: compared in place, without a call.
    fn is<const N: usize>(key: &[u8], name: &[u8; N]) -> bool {
        <&[u8; N]>::try_from(key).is_ok_and(|key| key == name)
    }
    match key.len() {
        7 if is(key, b"probeId") => 0,
        12 if is(key, b"hypothesisId") => 1,
        8 if is(key, b"location") => 2,
        6 if is(key, b"source") => 3,
        9 if is(key, b"timestamp") => 4,
        4 if is(key, b"data") => 5,
        _ if key == super::outcomes::PROBE_ERROR.as_bytes() => PROBE_ERROR_KEY,
        _ => OTHER_KEY,
    }
}

/// Keys remembered in order, at most.
const MEMO_KEYS: usize = 32;

/// The keys of the lines read before, by their place in the line: the
/// lines of one program repeat their keys in one order, so the key
/// remembered at a place is compared whole (`"key":`, quotes and colon, 16
/// bytes at most, in one comparison) before a key is read byte by byte.
/// Bytes equal to a key read whole before are that key.
#[derive(Default)]
pub(super) struct KeyMemo {
    keys: Vec<MemoKey>,
}

#[derive(Clone, Copy, Default)]
struct MemoKey {
    /// `"key":` as written, zero past its end.
    bytes: [u8; 16],
    /// The bytes compared: `len` of them.
    mask: u128,
    /// 0 for a key too long, or written with space before its colon: it
    /// is read byte by byte each time.
    len: u8,
    kind: u8,
}

impl MemoKey {
    /// Whether `line` holds this key, written the same way, at `at`.
    #[inline(always)]
    fn starts(&self, line: &[u8], at: usize) -> bool {
        let len = usize::from(self.len);
        if len == 0 {
            return false;
        }
        match line.get(at..at + 16).map(<[u8; 16]>::try_from) {
            Some(Ok(window)) => {
                (u128::from_le_bytes(window) ^ u128::from_le_bytes(self.bytes)) & self.mask == 0
            }
            _ => line.get(at..at + len) == self.bytes.get(..len),
        }
    }
}

impl KeyMemo {
    /// The key read at place `member`, `written` as `"key":` when it was
    /// (None: with space before its colon).
    fn keep(&mut self, member: usize, written: Option<&[u8]>, kind: u8) {
        if member >= MEMO_KEYS || member > self.keys.len() {
            return;
        }
        let mut key = MemoKey {
            kind,
            ..MemoKey::default()
        };
        if let Some(written) = written.filter(|w| w.len() <= 16) {
            key.bytes[..written.len()].copy_from_slice(written);
            key.len = written.len() as u8;
            key.mask = u128::MAX >> (128 - 8 * written.len());
        }
        match self.keys.get_mut(member) {
            Some(place) => *place = key,
            None => self.keys.push(key),
        }
    }
}

/// The fields of `line` when it is a JSON object in UTF-8 this scanner
/// reads whole; None when `serde_json` must decide. `memo` holds the keys
/// of the lines before (and learns this line's).
pub(super) fn scan<'a>(line: &'a [u8], memo: &mut KeyMemo) -> Option<Fields<'a>> {
    let mut scanner = Scanner { bytes: line, at: 0 };
    // Where each field's text or raw value lies, by `kind_of`.
    let mut spans: [Option<(usize, usize)>; 6] = [None; 6];
    let mut seen = 0u8;
    let mut probe_error = false;
    scanner.expect(b'{')?;
    if scanner.token()? == b'}' {
        scanner.at += 1;
    } else {
        let mut member = 0;
        loop {
            let kind = match memo.keys.get(member) {
                Some(known) if known.starts(line, scanner.at) => {
                    scanner.at += usize::from(known.len);
                    known.kind
                }
                _ => {
                    scanner.expect(b'"')?;
                    let key_start = scanner.at;
                    scanner.string_rest(false)?;
                    let key = &line[key_start..scanner.at - 1];
                    let kind = kind_of(key);
                    let tight = line.get(scanner.at) == Some(&b':');
                    scanner.expect(b':')?;
                    let written = tight.then(|| &line[key_start - 1..scanner.at]);
                    memo.keep(member, written, kind);
                    kind
                }
            };
            member += 1;
            let first = scanner.token()?;
            let start = scanner.at;
            match kind {
                0..=5 => {
                    let slot = usize::from(kind);
                    // serde refuses a repeated field: it decides.
                    if seen & (1 << slot) != 0 {
                        return None;
                    }
                    seen |= 1 << slot;
                    if first == b'n' {
                        scanner.word(b"null")?;
                    } else if slot < 4 {
                        scanner.expect(b'"')?;
                        scanner.string_rest(false)?;
                        spans[slot] = Some((start + 1, scanner.at - 1));
                    } else {
                        scanner.skip_value()?;
                        spans[slot] = Some((start, scanner.at));
                    }
                }
                _ => {
                    probe_error |= kind == PROBE_ERROR_KEY;
                    if first == b'"' {
                        // Most values a summary passes over are texts.
                        scanner.at += 1;
                        scanner.string_rest(true)?;
                    } else {
                        scanner.skip_value()?;
                    }
                }
            }
            match scanner.token()? {
                b',' => scanner.at += 1,
                b'}' => {
                    scanner.at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    // Nothing but space after the object.
    if scanner.token().is_some() {
        return None;
    }
    let text = |slot: usize| spans[slot].map(|(start, end)| accepted_text(line, start, end));
    Some(Fields {
        probe_id: text(0),
        hypothesis_id: text(1),
        location: text(2),
        source: text(3),
        timestamp: text(4),
        data: text(5),
        probe_error,
    })
}

/// `line[start..end]` as text, for a line `scan` accepted and a range that
/// starts and ends beside its ASCII bytes (a string's quotes, a value's
/// first and last byte).
fn accepted_text(line: &[u8], start: usize, end: usize) -> &str {
    let bytes = &line[start..end];
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: every byte of an accepted line outside its strings is one of
    // JSON's ASCII bytes, and every non-ASCII byte in a string belongs to a
    // run `std::str::from_utf8` checked (`past_non_ascii`) that ends at an
    // ASCII byte; so the line is UTF-8, and a range that starts and ends
    // beside ASCII bytes holds whole characters. A property test holds
    // `scan` to that on lines of any bytes.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// The end of a run of a string's text from `at`, a non-ASCII byte, when
/// the run is UTF-8: the next `"`, `\\` or control character (all ASCII).
#[cold]
fn past_non_ascii(bytes: &[u8], at: usize) -> Option<usize> {
    let end = crate::core::json_string::text_end(bytes, at)?;
    std::str::from_utf8(&bytes[at..end]).ok()?;
    Some(end)
}

/// Where a run of ASCII digits from `at` ends, eight at a time.
fn digits_end(bytes: &[u8], mut at: usize) -> usize {
    const HIGH_NIBBLES: u64 = u64::from_ne_bytes([0xf0; 8]);
    const THREES: u64 = u64::from_ne_bytes([0x30; 8]);
    const SIXES: u64 = u64::from_ne_bytes([0x06; 8]);
    while let Some(word) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let word = u64::from_le_bytes(word);
        // A digit is 0x3_ and stays 0x3_ with 6 added. A carry out of a byte
        // (from 0xfa up, no digit) reaches only bytes after it: the lowest
        // byte marked is exact.
        let other =
            ((word & HIGH_NIBBLES) ^ THREES) | ((word.wrapping_add(SIXES) & HIGH_NIBBLES) ^ THREES);
        if other != 0 {
            return at + (other.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    /// The next byte that is not JSON's space, left in place; None at the
    /// end of the line.
    #[inline(always)]
    fn token(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        // Compact JSON has no space: one look.
        if byte > b' ' {
            return Some(byte);
        }
        self.at = past_space(self.bytes, self.at);
        self.bytes.get(self.at).copied()
    }

    /// `byte` as the next token, passed over.
    #[inline(always)]
    fn expect(&mut self, byte: u8) -> Option<()> {
        if self.token()? != byte {
            return None;
        }
        self.at += 1;
        Some(())
    }

    /// The rest of a string after its opening quote, up to past its
    /// closing one: with `escapes`, the simple ones (none of `\u`).
    #[inline(always)]
    fn string_rest(&mut self, escapes: bool) -> Option<()> {
        loop {
            let stop = crate::core::json_string::text_or_non_ascii_end(self.bytes, self.at)?;
            let byte = *self.bytes.get(stop)?;
            self.at = stop + 1;
            match byte {
                b'"' => return Some(()),
                b'\\' if escapes => match *self.bytes.get(self.at)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                    _ => return None,
                },
                0x80.. => self.at = past_non_ascii(self.bytes, stop)?,
                _ => return None,
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, and no exponent.
    #[inline(always)]
    fn number(&mut self) -> Option<()> {
        let bytes = self.bytes;
        let mut at = self.at + usize::from(bytes.get(self.at) == Some(&b'-'));
        let first = *bytes.get(at)?;
        let end = digits_end(bytes, at);
        if end == at || (first == b'0' && end - at > 1) {
            return None;
        }
        at = end;
        if bytes.get(at) == Some(&b'.') {
            let end = digits_end(bytes, at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            return None;
        }
        self.at = at;
        Some(())
    }

    #[inline(always)]
    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    /// An object's key and its colon.
    #[inline(always)]
    fn key(&mut self) -> Option<()> {
        self.expect(b'"')?;
        self.string_rest(true)?;
        self.expect(b':')
    }

    /// A value from `at`, checked and passed over (`skip_value`).
    #[inline(always)]
    fn skip_value(&mut self) -> Option<()> {
        self.at = skip_value(self.bytes, self.at)?;
        Some(())
    }
}

/// Where the space from `at` ends (a call apart: compact JSON has none).
#[cold]
#[inline(never)]
fn past_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the value at `at` ends, checked as it is passed over in one loop:
/// the open containers are a stack of bits (set for an object), with no
/// call per level. The position is a value of its own here, so it can stay
/// in a register, not in the caller's memory.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    let mut scanner = Scanner { bytes, at };
    let mut objects = 0u64;
    let mut depth = 0u32;
    'value: loop {
        match scanner.token()? {
            b'"' => {
                scanner.at += 1;
                scanner.string_rest(true)?;
            }
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                scanner.at += 1;
                // `}` and `]` are two past `{` and `[`.
                if scanner.token()? != open + 2 {
                    depth += 1;
                    objects = objects << 1 | u64::from(open == b'{');
                    if open == b'{' {
                        scanner.key()?;
                    }
                    continue 'value;
                }
                scanner.at += 1;
            }
            b't' => scanner.word(b"true")?,
            b'f' => scanner.word(b"false")?,
            b'n' => scanner.word(b"null")?,
            _ => scanner.number()?,
        }
        // After a value: the next in its container, or out of it.
        while depth > 0 {
            let in_object = objects & 1 == 1;
            let byte = scanner.token()?;
            scanner.at += 1;
            match byte {
                b',' => {
                    if in_object {
                        scanner.key()?;
                    }
                    continue 'value;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            depth -= 1;
            objects >>= 1;
        }
        return Some(scanner.at);
    }
}
