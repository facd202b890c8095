//! Secrets made inert before they reach the model, a screen or a file the
//! sidecar writes (DESIGN section 4: the program's output is untrusted). A
//! probe logs whatever is in scope and `run` records every line a program
//! prints, so credentials would otherwise travel to the model's provider.
//!
//! Two rules, both replacing the secret with a marker that keeps its kind
//! and a short stable hash (`[redacted:github-token#a1b2]`), so two equal
//! values still compare equal:
//! - **keys**: a string under a key that names a secret (`password`,
//!   `token`, `cookie`, ...; case and `_`/`-` ignored, at any depth);
//! - **shapes**: a string that looks like a secret wherever it stands:
//!   provider key prefixes, JWTs, private key blocks, the password of a URL,
//!   a bearer header, `password=...` in text.
//!
//! What it cannot catch (a secret of no known shape under an innocent key)
//! is listed in the README. Pure: the workspace reads the settings.

use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

mod anchor_tables;
mod markers;
mod scan;
mod shapes;
mod spans;
mod starts;
mod stream;
mod tables;
use markers::{holds_marker, is_marker_at, kind_name};
pub use markers::{marker, markers_in};
use scan::AnchorScan;
use shapes::LazyShapes;
pub use stream::{holds_private_key_mark, LineStream, PRIVATE_KEY_MARK};
use tables::*;

/// What a workspace may change (`.debug-sidecar/redaction.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// `false` turns redaction off; only ever explicitly.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// More key words (a key holding one is a secret's).
    #[serde(default)]
    pub keys: Vec<String>,
    /// More shapes: a kind and a regular expression each.
    #[serde(default)]
    pub patterns: Vec<Pattern>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pattern {
    pub kind: String,
    pub regex: String,
}

/// The largest compiled form of a workspace's pattern.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// The redactor: built once per process from the built-in rules and the
/// workspace's settings. Its regular expressions are compiled the first
/// time text holds an anchor (issue 33: a hook whose texts hold none pays
/// for no compilation, which took most of its time).
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
    keys: Vec<String>,
    /// Key words the workspace added (the built-in ones are `key_words`).
    extra_keys: bool,
    shapes: std::sync::Arc<LazyShapes>,
    extra_patterns: bool,
}

/// Two redactors are the same when they would redact alike.
impl PartialEq for Redactor {
    fn eq(&self, other: &Self) -> bool {
        self.enabled == other.enabled
            && self.keys == other.keys
            && self.extra_patterns == other.extra_patterns
            && self.shapes.patterns == other.shapes.patterns
            && self.shapes.keys == other.shapes.keys
    }
}

impl Eq for Redactor {}

impl Default for Redactor {
    fn default() -> Self {
        builtin().clone()
    }
}

fn builtin() -> &'static Redactor {
    static BUILTIN: OnceLock<Redactor> = OnceLock::new();
    BUILTIN.get_or_init(|| Redactor::build(true, Vec::new(), LazyShapes::later(&[], &[]), false))
}

/// The anchors' matcher, built once needed: which anchors a line holds
/// (by pattern), for the lines the scan found one in.
fn anchors() -> &'static aho_corasick::AhoCorasick {
    static ANCHORS_MATCHER: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    ANCHORS_MATCHER.get_or_init(|| matcher(anchor_words()))
}

/// The anchors' scan over every byte a door lets through (`scan.rs`).
fn anchor_scan() -> &'static AnchorScan {
    static ANCHOR_SCAN: OnceLock<AnchorScan> = OnceLock::new();
    ANCHOR_SCAN.get_or_init(|| AnchorScan::new(built_in::ANCHORS.clone()))
}

/// Anchors and key words in one scan: one pass over a record.
fn anchors_or_key_words() -> &'static AnchorScan {
    static BOTH: OnceLock<AnchorScan> = OnceLock::new();
    BOTH.get_or_init(|| AnchorScan::new(built_in::ANCHORS_OR_KEY_WORDS.clone()))
}

/// The built-in key words' scan: whether a key may name a secret.
fn key_words() -> &'static AnchorScan {
    static KEY_WORDS: OnceLock<AnchorScan> = OnceLock::new();
    KEY_WORDS.get_or_init(|| AnchorScan::new(built_in::KEY_WORDS.clone()))
}

/// The built-in words' scan tables, made by the build script
/// (`anchor_tables.rs`, `built_in_words`).
mod built_in {
    include!(concat!(env!("OUT_DIR"), "/anchor_tables.rs"));
}

/// Literals every built-in shape holds (compared without case): text that
/// holds none of them is let through without running a regular
/// expression. `run` scans a program's output for them on its reader
/// threads, beside the recording (`anchors_in`, with `scan.rs`).
fn anchor_words() -> &'static [&'static str] {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    WORDS.get_or_init(anchor_union)
}

/// The longest anchor: a chunk boundary is scanned with this much before it.
pub const LONGEST_ANCHOR: usize = 15;

fn matcher<W: AsRef<[u8]>>(words: &[W]) -> aho_corasick::AhoCorasick {
    // A DFA: it reads every line that holds an anchor.
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(words)
        .expect("fixed words build")
}

fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

impl Redactor {
    fn build(
        enabled: bool,
        extra_keys: Vec<String>,
        shapes: LazyShapes,
        extra_patterns: bool,
    ) -> Self {
        let mut keys: Vec<String> = secret_keys().collect();
        keys.extend(
            extra_keys
                .iter()
                .map(|k| normalized(k))
                .filter(|k| !k.is_empty()),
        );
        Redactor {
            enabled,
            extra_keys: keys.len() > SECRET_KEYS.len(),
            keys,
            shapes: std::sync::Arc::new(shapes),
            extra_patterns: extra_patterns || !extra_keys.is_empty(),
        }
    }

    /// The built-in rules and a workspace's settings; an error names the
    /// pattern that does not compile.
    pub fn with_settings(settings: &Settings) -> Result<Self, String> {
        let enabled = settings.enabled != Some(false);
        if settings.keys.is_empty() && settings.patterns.is_empty() {
            let mut redactor = builtin().clone();
            redactor.enabled = enabled;
            return Ok(redactor);
        }
        Ok(Redactor::build(
            enabled,
            settings.keys.clone(),
            LazyShapes::compiled_now(&settings.patterns, &settings.keys)?,
            !settings.patterns.is_empty(),
        ))
    }

    /// Nothing is redacted (the workspace turned it off).
    pub fn off() -> Self {
        let mut redactor = builtin().clone();
        redactor.enabled = false;
        redactor
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether `bytes` may hold a secret of a known shape at all: one scan
    /// for the literals every shape holds. A door checks a whole chunk of
    /// output with it and redacts line by line only where it may.
    pub fn may_hold_secret(&self, bytes: &[u8]) -> bool {
        self.enabled && (self.extra_patterns || anchor_scan().is_match(bytes))
    }

    /// Where in `bytes` an anchor ends (the index of its last byte; all of
    /// them, in order): a door redacts only the lines that hold one. With a
    /// workspace's own patterns, whose anchors are unknown, every line
    /// holds one (the caller marks all).
    pub fn anchors_in(&self, bytes: &[u8]) -> Vec<usize> {
        if !self.enabled {
            return Vec::new();
        }
        anchor_scan().last_bytes(bytes)
    }

    /// Where in `bytes` (many records, raw JSON) a word ends that may make
    /// redacting a record change something: the last byte of each anchor
    /// and key word, in order (a record that holds none, and no backslash,
    /// which may escape one, needs no parsing). `None` when every record
    /// must be looked at (a workspace's own keys or patterns); none when
    /// redaction is off.
    pub fn redaction_words_in(&self, bytes: &[u8]) -> Option<Vec<usize>> {
        if !self.enabled {
            return Some(Vec::new());
        }
        if self.extra_patterns || self.extra_keys {
            return None;
        }
        Some(anchors_or_key_words().last_bytes(bytes))
    }

    /// Log records as a door received them: `raw` their JSON (one, an array
    /// or lines), `records` the same parsed, each redacted as `record` does.
    /// A body that holds nothing the rules would change (most of what
    /// probes post) is told so by one scan, without walking its records.
    /// The count of values replaced.
    pub fn records(&self, raw: &[u8], records: &mut [Value]) -> usize {
        let envelope_keys = records
            .iter()
            .filter(|r| r.get("sessionId").is_some())
            .count();
        if self.leaves_records_unchanged(raw, envelope_keys) {
            return 0;
        }
        records.iter_mut().map(|record| self.record(record)).sum()
    }

    /// Whether the records written as `raw` surely leave `record` unchanged:
    /// the built-in rules only, no backslash (which may spell a word), and
    /// every anchor and key word in them inside a `"sessionId"` that is one
    /// of `envelope_keys`, the records' own top-level `sessionId` fields
    /// (any other `"sessionId"` makes more).
    fn leaves_records_unchanged(&self, raw: &[u8], envelope_keys: usize) -> bool {
        const SESSION_KEY: &[u8] = b"\"sessionId\"";
        if !self.enabled {
            return true;
        }
        if self.extra_patterns || self.extra_keys || memchr::memchr(b'\\', raw).is_some() {
            return false;
        }
        // Each word found lies in a `"sessionId"` (every one holds the key
        // word `session`, so each is found), and there are as many as the
        // records have of their own.
        let (mut keys, mut last_key) = (0, None);
        let only_in_keys = anchors_or_key_words().each_end(raw, |end| {
            // No word ends at a `"` (a test holds them to it), and inside
            // the key the only `"` is its first: the last one up to `end`
            // starts the key `end` is in, if any.
            let window = end.saturating_sub(SESSION_KEY.len() - 1);
            let key = memchr::memrchr(b'"', &raw[window..=end])
                .map(|quote| window + quote)
                .filter(|&at| raw[at..].starts_with(SESSION_KEY));
            if key.is_some() && key != last_key {
                keys += 1;
                last_key = key;
            }
            key.is_some()
        });
        only_in_keys && keys == envelope_keys
    }

    /// Whether every line must be looked at (a workspace's own patterns).
    pub fn checks_every_line(&self) -> bool {
        self.enabled && self.extra_patterns
    }

    /// Whether a value under `key` is a secret.
    pub fn is_secret_key(&self, key: &str) -> bool {
        // Most keys hold no key word: no allocation for them.
        if !self.extra_keys && !key_words().is_match(key.as_bytes()) {
            return false;
        }
        let key = normalized(key);
        !INNOCENT_KEYS.contains(&key.as_str()) && self.keys.iter().any(|k| key.contains(k.as_str()))
    }

    /// `text` with every secret shape in it replaced, and how many were.
    pub fn text<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        if !self.enabled || (text.len() < 8 && !self.extra_patterns) {
            return (Cow::Borrowed(text), 0);
        }
        if !self.may_hold_secret(text.as_bytes()) {
            return (Cow::Borrowed(text), 0);
        }
        self.shapes.get().replace_in(text)
    }

    /// A command's words: each redacted, and a word that completes a secret
    /// with the one before it (`Bearer` then the token, `--password` then
    /// the password) replaced whole.
    pub fn words(&self, words: &[String]) -> Vec<String> {
        let mut out: Vec<String> = words.iter().map(|w| self.text(w).0.into_owned()).collect();
        for i in 1..words.len() {
            if holds_marker(out[i].as_bytes()) {
                continue;
            }
            // `--password hunter2`: a flag naming a secret, then its value.
            let flag = words[i - 1].trim_start_matches('-');
            if words[i - 1].starts_with('-') && self.is_secret_key(flag) {
                out[i] = marker("command", &words[i]);
                continue;
            }
            let pair = format!("{} {}", words[i - 1], words[i]);
            let (redacted, count) = self.text(&pair);
            if count > 0 && !redacted.ends_with(&format!(" {}", words[i])) {
                out[i] = marker("command", &words[i]);
            }
        }
        out
    }

    /// A log record: the key rule everywhere but the record's own envelope
    /// fields at its top level, the shape rule on every string. The count
    /// of values replaced.
    pub fn record(&self, record: &mut Value) -> usize {
        self.walk(record, ENVELOPE)
    }

    /// Any JSON value: the key rule at every depth, the shape rule on
    /// every string. The count of values replaced.
    pub fn value(&self, value: &mut Value) -> usize {
        self.walk(value, &[])
    }

    /// `value`, whose own keys in `exempt` get the shape rule only.
    fn walk(&self, value: &mut Value, exempt: &[&str]) -> usize {
        if !self.enabled {
            return 0;
        }
        match value {
            Value::Object(fields) => fields
                .iter_mut()
                .map(|(key, value)| {
                    if exempt.contains(&key.as_str()) {
                        self.shapes_in(value)
                    } else {
                        self.value_under(key, value)
                    }
                })
                .sum(),
            other => self.shapes_in(other),
        }
    }

    fn value_under(&self, key: &str, value: &mut Value) -> usize {
        if self.is_secret_key(key) {
            self.secret_leaves(&key_kind(self, key), value)
        } else {
            self.value(value)
        }
    }

    /// Every string under a secret key is one.
    fn secret_leaves(&self, kind: &str, value: &mut Value) -> usize {
        match value {
            Value::String(text) if !text.is_empty() && !is_marker_at(text, 0) => {
                *text = marker(kind, text);
                1
            }
            Value::Array(items) => items.iter_mut().map(|v| self.secret_leaves(kind, v)).sum(),
            Value::Object(fields) => fields
                .values_mut()
                .map(|v| self.secret_leaves(kind, v))
                .sum(),
            _ => 0,
        }
    }

    /// The shape rule on every string of `value`.
    fn shapes_in(&self, value: &mut Value) -> usize {
        match value {
            Value::String(text) => match self.text(text) {
                (Cow::Owned(redacted), count) => {
                    *text = redacted;
                    count
                }
                _ => 0,
            },
            Value::Array(items) => items.iter_mut().map(|v| self.value(v)).sum(),
            Value::Object(_) => self.value(value),
            _ => 0,
        }
    }
}

/// The kind a secret key gives its value: its first key word.
fn key_kind(redactor: &Redactor, key: &str) -> String {
    let key = normalized(key);
    redactor
        .keys
        .iter()
        .find(|k| key.contains(k.as_str()))
        .map_or_else(|| "secret".to_string(), |k| kind_name(k))
}

#[cfg(test)]
mod tests {
    use super::shapes::all_shapes;
    use super::stream::KEY_LINES;
    use super::*;
    use serde_json::json;

    fn redacted(text: &str) -> String {
        Redactor::default().text(text).0.into_owned()
    }

    #[test]
    fn shapes_are_replaced_by_a_marker_of_their_kind() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE here", "aws-access-key"),
            ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
            ("xoxb-1234567890-abcdefghij", "slack-token"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            ("Authorization: Bearer abcdef0123456789abcdef", "bearer"),
            ("postgres://app:s3cr3t-pw@db:5432/shop", "url-password"),
            ("password=hunter22", "assignment"),
            ("Cookie: sid=abc123; theme=dark", "cookie"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private-key"),
        ];
        for (text, kind) in cases {
            let out = redacted(text);
            assert!(
                out.contains(&format!("[redacted:{kind}#")),
                "{text} -> {out}"
            );
        }
        let url = redacted("postgres://app:s3cr3t-pw@db:5432/shop");
        assert!(
            url.starts_with("postgres://app:[redacted:url-password#"),
            "{url}"
        );
        assert!(url.ends_with("]@db:5432/shop"), "{url}");
    }

    #[test]
    fn what_review_found_is_redacted_whole() {
        for (text, secret) in [
            (r#"password: Some("hunter22")"#, "hunter22"),
            ("token=b'abcd1234efgh'", "abcd1234efgh"),
            (r#"passphrase="correct horse battery""#, "horse battery"),
            (r#""secret":{"value":"s3cr3t-v"}"#, "s3cr3t-v"),
            ("API Key = zz9-plural-alpha", "zz9-plural-alpha"),
        ] {
            let out = redacted(text);
            assert!(!out.contains(secret), "{text} -> {out}");
        }
        let url = redacted("https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/x.git");
        let again = redacted(&url);
        assert_eq!(again, url, "a marker is not redacted again");
        assert_eq!(url.matches("[redacted:").count(), 1, "{url}");
        for innocent in ["Bearer authentication failed", "using basic authentication"] {
            assert_eq!(redacted(innocent), innocent);
        }
        let mut value = serde_json::json!({"api.key": "k-123", "API Key": "k-456"});
        assert_eq!(Redactor::default().value(&mut value), 2);
    }

    #[test]
    fn a_begin_line_without_its_end_silences_at_most_a_key_of_lines() {
        let redactor = Redactor::default();
        let mut stream = LineStream::default();
        stream.line(&redactor, "error: expected -----BEGIN RSA PRIVATE KEY-----");
        for _ in 0..KEY_LINES {
            stream.line(&redactor, "body");
        }
        assert_eq!(stream.line(&redactor, "later output").0, "later output");
        // An END and a new BEGIN on one line: the next key is redacted too.
        let mut stream = LineStream::default();
        stream.line(&redactor, "-----BEGIN EC PRIVATE KEY-----");
        stream.line(
            &redactor,
            "-----END EC PRIVATE KEY----- -----BEGIN EC PRIVATE KEY-----",
        );
        assert!(stream
            .line(&redactor, "MHcCAQEEIB")
            .0
            .starts_with("[redacted:"));
    }

    #[test]
    fn a_command_line_keeps_no_secret_split_over_its_words() {
        let words: Vec<String> = [
            "curl",
            "-H",
            "Authorization: Bearer",
            "tok123456789abcdef",
            "https://x",
        ]
        .map(String::from)
        .to_vec();
        let out = Redactor::default().words(&words);
        assert_eq!(out[0], "curl");
        assert_eq!(out[4], "https://x");
        assert!(out[3].starts_with("[redacted:command#"), "{out:?}");
        let words: Vec<String> = ["tool", "--password", "hunter22"]
            .map(String::from)
            .to_vec();
        assert!(Redactor::default().words(&words)[2].starts_with("[redacted:"));
    }

    #[test]
    fn the_built_in_shapes_compile_and_each_only_when_a_text_may_hold_it() {
        let shapes = all_shapes(&[], &[]);
        assert_eq!(shapes.shapes.len(), SHAPES.len() + 1);
        for shape in &shapes.shapes {
            assert!(shape.regex().is_some(), "{} does not compile", shape.kind);
        }
        // A redactor of its own (the built-in one is shared by the tests).
        let redactor = Redactor::build(true, Vec::new(), LazyShapes::later(&[], &[]), false);
        assert_eq!(redactor.text("nothing to see").1, 0);
        assert!(
            redactor.shapes.compiled.get().is_none(),
            "compiled without an anchor"
        );
        assert_eq!(
            redactor.text("connect postgres://app:hunter22@db/shop").1,
            1
        );
        let compiled: Vec<&str> = redactor
            .shapes
            .get()
            .shapes
            .iter()
            .filter(|s| s.is_compiled())
            .map(|s| s.kind.as_str())
            .collect();
        assert_eq!(compiled, ["url-password"]);
        assert_eq!(redactor.text("token=abcdef123").1, 1);
    }

    #[test]
    fn letters_that_fold_to_ascii_do_not_hide_a_secret() {
        for text in [
            "see https://x.io pa\u{17f}\u{17f}word=hunter22",
            "see https://x.io to\u{212a}en=hunter22",
            "Coo\u{212a}ie: sid=abcdef0123456789",
            "Authorization: Ba\u{17f}ic dXNlcjpwYXNzd29yZA==",
        ] {
            let (out, count) = Redactor::default().text(text);
            assert!(count >= 1 && !out.contains("hunter22"), "{text} -> {out}");
        }
    }

    #[test]
    fn a_quoted_value_of_any_length_is_redacted_whole() {
        let long = "x".repeat(2000);
        let text = format!("password=\"{long}\" then");
        let (out, count) = Redactor::default().text(&text);
        assert_eq!(count, 1);
        assert!(!out.contains("xxxx") && out.ends_with(" then"), "{out}");
    }

    #[test]
    fn every_shape_has_anchors_and_the_anchors_are_theirs() {
        let mut kinds: Vec<&str> = SHAPES.iter().map(|(kind, _)| *kind).collect();
        kinds.push("assignment");
        let mapped: Vec<&str> = SHAPE_ANCHORS.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds, mapped);
        assert!(SHAPE_ANCHORS.iter().all(|(_, anchors)| !anchors.is_empty()));
        assert!(anchor_words()
            .iter()
            .filter(|a| a.is_ascii())
            .all(|a| *a == a.to_lowercase()));
    }

    #[test]
    fn the_tables_compiled_in_are_those_of_the_words_they_scan_for() {
        let built = [
            &built_in::ANCHORS,
            &built_in::KEY_WORDS,
            &built_in::ANCHORS_OR_KEY_WORDS,
        ];
        for ((name, words), tables) in anchor_tables::built_in_words().into_iter().zip(built) {
            assert_eq!(
                Some(tables),
                anchor_tables::Tables::new(&words).as_ref(),
                "{name}"
            );
        }
        let anchors: Vec<&str> = anchor_words().to_vec();
        assert_eq!(anchor_tables::built_in_words()[0].1, anchors);
        assert_eq!(anchor_tables::built_in_words()[1].1, key_spellings());
        let written = include_str!(concat!(env!("OUT_DIR"), "/anchor_tables.rs"));
        assert_eq!(written, anchor_tables::built_in_source());
    }

    #[test]
    fn every_anchor_fits_the_boundary_overlap() {
        assert!(anchor_words().iter().all(|a| a.len() <= LONGEST_ANCHOR));
    }

    #[test]
    fn innocent_text_passes_unchanged() {
        for text in [
            "total: 12",
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "id 3fa85f64-5717-4562-b3fc-2c963f66afa6",
            "max_tokens=1000",
            "https://example.com/a?b=c",
            "the token was missing",
        ] {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn keys_name_secrets_at_any_depth_and_equal_values_keep_equal_markers() {
        let mut record = json!({
            "sessionId": "s1",
            "probeId": "p1",
            "data": {"user": "ada", "db": {"Password": "hunter2", "api-key": ["k1", "k1"]},
                     "max_tokens": "100", "count": 3}
        });
        let count = Redactor::default().record(&mut record);
        assert_eq!(count, 3);
        assert_eq!(record["sessionId"], "s1");
        assert_eq!(record["data"]["user"], "ada");
        assert_eq!(record["data"]["max_tokens"], "100");
        let keys = &record["data"]["db"]["api-key"];
        assert_eq!(keys[0], keys[1]);
        assert!(keys[0].as_str().unwrap().starts_with("[redacted:apikey#"));
        assert!(record["data"]["db"]["Password"]
            .as_str()
            .unwrap()
            .starts_with("[redacted:password#"));
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let once = redacted("a ghp_0123456789abcdefghijABCDEFGHIJ012345 and password=hunter22");
        let (twice, count) = Redactor::default().text(&once);
        assert_eq!(twice, once);
        assert_eq!(count, 0);
    }

    #[test]
    fn a_private_key_printed_line_by_line_is_redacted_whole() {
        let redactor = Redactor::default();
        let mut stream = LineStream::default();
        let lines = [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "-----END OPENSSH PRIVATE KEY-----",
            "done",
        ];
        let out: Vec<String> = lines
            .iter()
            .map(|line| stream.line(&redactor, line).0.into_owned())
            .collect();
        assert!(
            out[..3]
                .iter()
                .all(|l| l.starts_with("[redacted:private-key#")
                    || l.contains("[redacted:private-key#")),
            "{out:?}"
        );
        assert_eq!(out[3], "done");
    }

    #[test]
    fn settings_add_keys_and_patterns_or_turn_it_off() {
        let settings = Settings {
            enabled: None,
            keys: vec!["pin".into()],
            patterns: vec![Pattern {
                kind: "Order Ref".into(),
                regex: r"ORD-\d{6}".into(),
            }],
        };
        let redactor = Redactor::with_settings(&settings).unwrap();
        let mut value = json!({"pin": "1234", "note": "order ORD-123456 shipped"});
        assert_eq!(redactor.value(&mut value), 2);
        assert!(value["note"]
            .as_str()
            .unwrap()
            .contains("[redacted:order-ref#"));
        let off = Redactor::with_settings(&Settings {
            enabled: Some(false),
            ..Settings::default()
        })
        .unwrap();
        assert_eq!(off.text("password=hunter22").1, 0);
        let bad = Settings {
            patterns: vec![Pattern {
                kind: "x".into(),
                regex: "(".into(),
            }],
            ..Settings::default()
        };
        assert!(Redactor::with_settings(&bad).unwrap_err().contains("\"(\""));
    }

    #[test]
    fn after_an_http_scheme_the_credential_is_replaced_not_the_scheme() {
        for (line, kept, kind) in [
            (
                "Authorization: Bearer abc123",
                "Authorization: Bearer [redacted:",
                "assignment",
            ),
            (
                "Authorization: Basic dXNlcjpw",
                "Authorization: Basic [redacted:",
                "assignment",
            ),
            (
                "authorization=Token 9f8e7d6c5b4a",
                "authorization=Token [redacted:",
                "assignment",
            ),
            // A token long enough for the bearer shape: one marker, not two.
            (
                "Authorization: Bearer abcdef0123456789abcdef",
                "Authorization: Bearer [redacted:",
                "bearer",
            ),
        ] {
            let (out, count) = Redactor::default().text(line);
            assert!(out.starts_with(kept), "{line} -> {out}");
            assert!(
                out.contains(&format!("[redacted:{kind}#")),
                "{line} -> {out}"
            );
            assert_eq!(count, 1, "{line} -> {out}");
            let secret = line.rsplit(' ').next().unwrap().rsplit('=').next().unwrap();
            assert!(!out.contains(secret), "{line} -> {out}");
        }
        // A word that follows a marker and is no scheme is still a value.
        let (out, _) = Redactor::default().text("password: hunter22 [redacted:x#0000]");
        assert!(!out.contains("hunter22"), "{out}");
        // Digits only, which a value alone never is: still the credential.
        let (out, count) = Redactor::default().text("Authorization: Token 123456789012");
        assert_eq!(
            out,
            format!(
                "Authorization: Token {}",
                marker("assignment", "123456789012")
            )
        );
        assert_eq!(count, 1);
        // The scheme folded as `(?i)` folds it: one marker, the credential's.
        let (out, count) =
            Redactor::default().text("Authorization: Ba\u{17f}ic dXNlcjpwYXNzd29yZA==");
        assert!(
            out.starts_with("Authorization: Ba\u{17f}ic [redacted:basic-auth#"),
            "{out}"
        );
        assert_eq!(count, 1, "{out}");
        // The scheme's word alone is the value.
        let (out, count) = Redactor::default().text("password: basic");
        assert_eq!(out, format!("password: {}", marker("assignment", "basic")));
        assert_eq!(count, 1);
        let (out, _) = Redactor::default().text("password = token");
        assert!(!out.contains("token"), "{out}");
    }

    #[test]
    fn no_word_the_ingest_check_looks_for_ends_at_a_quote() {
        // `leaves_records_unchanged` finds the key a word ends in by the
        // last quote up to its end.
        let words = anchor_words()
            .iter()
            .map(|w| w.to_string())
            .chain(key_spellings());
        for word in words {
            assert!(!word.ends_with('"'), "{word:?}");
        }
    }

    #[test]
    fn a_workspace_with_more_than_64_shapes_tries_every_one() {
        // The built-in shapes and 70 of a workspace's: the last ones are
        // past the bits kept on the stack.
        let patterns = (0..70)
            .map(|i| Pattern {
                kind: format!("ref-{i}"),
                regex: format!(r"REF{i}-\d{{4}}"),
            })
            .collect();
        let settings = Settings {
            patterns,
            ..Settings::default()
        };
        let redactor = Redactor::with_settings(&settings).unwrap();
        let (out, count) = redactor.text("a REF3-1234, a REF69-5678 and a REF68-0000");
        assert_eq!(count, 3, "{out}");
        for kind in ["ref-3", "ref-69", "ref-68"] {
            assert!(out.contains(&format!("[redacted:{kind}#")), "{out}");
        }
    }

    #[test]
    fn markers_are_the_kind_and_four_hex_digits_of_the_secret() {
        // Fixed: a marker written today equals one written by any version.
        assert_eq!(marker("jwt", "abc"), "[redacted:jwt#f552]");
        assert_eq!(marker("k", ""), "[redacted:k#bfc1]");
        let hex = marker("bearer", "0123456789");
        assert_eq!(hex.len(), "[redacted:bearer#0000]".len());
    }

    #[test]
    fn a_body_is_walked_unless_only_its_envelope_holds_a_word() {
        let redactor = Redactor::default();
        let clean = br#"{"sessionId":"s1","probeId":"p1","data":{"total":3}}"#;
        assert!(redactor.leaves_records_unchanged(clean, 1));
        for (raw, envelope_keys) in [
            // A `sessionId` deeper than the envelope is a secret's key.
            (&br#"{"sessionId":"s1","data":{"sessionId":"abc"}}"#[..], 1),
            (br#"{"data":{"sessionId":"abc"}}"#, 0),
            (br#"{"sessionId":"s1","token":"t0ken"}"#, 1),
            (
                br#"{"sessionId":"s1","note":"Bearer abcdefabcdefabcdef"}"#,
                1,
            ),
            (br#"{"sessionId":"s1","note":"token=x"}"#, 1),
        ] {
            assert!(
                !redactor.leaves_records_unchanged(raw, envelope_keys),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// A door's records come out as each record walked alone would.
        #[test]
        fn records_of_a_body_are_redacted_as_each_alone(
            records in proptest::collection::vec(
                proptest::collection::btree_map(
                    proptest::sample::select(vec![
                        "sessionId", "probeId", "data", "note", "token", "user", "session", "total",
                    ]),
                    proptest::prop_oneof![
                        proptest::sample::select(vec![
                            "s1", "ok", "sessionId", "Bearer abcdefabcdefabcdef", "pass\\word=x",
                            "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "caf\u{e9}", "key-", "",
                        ])
                        .prop_map(|text| json!(text)),
                        proptest::num::u32::ANY.prop_map(|n| json!(n)),
                        proptest::collection::btree_map(
                            proptest::sample::select(vec!["sessionId", "token", "n"]),
                            proptest::sample::select(vec!["abc", "s1", "x"]),
                            0..3,
                        )
                        .prop_map(|m| json!(m)),
                    ],
                    0..6,
                ),
                1..4,
            ),
            as_array in proptest::bool::ANY,
        ) {
            let mut values: Vec<Value> = records.into_iter().map(|r| json!(r)).collect();
            let raw = if as_array {
                serde_json::to_string(&values).unwrap()
            } else {
                values.iter().map(|v| v.to_string() + "\n").collect()
            };
            let redactor = Redactor::default();
            let mut alone = values.clone();
            let expected: usize = alone.iter_mut().map(|v| redactor.record(v)).sum();
            let counted = redactor.records(raw.as_bytes(), &mut values);
            proptest::prop_assert_eq!(&values, &alone);
            proptest::prop_assert_eq!(counted, expected);
        }
    }
}
