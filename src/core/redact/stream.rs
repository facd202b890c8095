//! A program's stream of lines, redacted one by one: a private key block
//! spans several lines, so the stream keeps whether one is open.

use super::markers::marker;
use super::Redactor;
use std::borrow::Cow;
use std::sync::OnceLock;

/// Streams of lines (a program's stdout and stderr): a private key block
/// spans several lines, so its inner lines are redacted too, up to its END
/// line or `KEY_LINES` lines (a BEGIN line quoted in an error message
/// does not silence the rest of the run).
#[derive(Debug, Clone, Default)]
pub struct LineStream {
    in_private_key: bool,
    lines_inside: usize,
}

/// What every line that opens a private key block holds: lines without it
/// leave a closed block closed (`run` counts such lines past its cap
/// without reading them one by one).
pub const PRIVATE_KEY_MARK: &str = "PRIVATE KEY";

/// Whether `bytes` holds `PRIVATE_KEY_MARK` (its searcher built once: a
/// `str::contains` builds one for every line).
pub fn holds_private_key_mark(bytes: &[u8]) -> bool {
    static FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    FINDER
        .get_or_init(|| memchr::memmem::Finder::new(PRIVATE_KEY_MARK))
        .find(bytes)
        .is_some()
}

/// The most lines a private key block is taken to run (a 4096-bit RSA key
/// in PEM is about 50).
pub(super) const KEY_LINES: usize = 100;

impl LineStream {
    /// Inside a private key block: every line is redacted, whatever it holds.
    pub fn is_open(&self) -> bool {
        self.in_private_key
    }

    /// One line of the stream, redacted.
    pub fn line<'a>(&mut self, redactor: &Redactor, line: &'a str) -> (Cow<'a, str>, usize) {
        if !redactor.enabled {
            return (Cow::Borrowed(line), 0);
        }
        // Open after this line when its last BEGIN comes after its last END
        // (looked for only where it matters: most lines hold no key).
        let key_line = holds_private_key_mark(line.as_bytes());
        let (begin, end) = if key_line || self.in_private_key {
            (line.rfind("-----BEGIN"), line.rfind("-----END"))
        } else {
            (None, None)
        };
        let opens = key_line && begin.is_some() && begin > end;
        if self.in_private_key {
            self.lines_inside += 1;
            self.in_private_key = (opens || end.is_none()) && self.lines_inside < KEY_LINES;
            if !self.in_private_key || opens {
                self.lines_inside = 0;
            }
            return (Cow::Owned(marker("private-key", line)), 1);
        }
        if opens {
            self.in_private_key = true;
            self.lines_inside = 0;
        }
        redactor.text(line)
    }
}
