//! The secret shapes: the built-in ones and a workspace's, each compiled
//! the first time a text holds one of its anchors, and their replacement
//! in a text (`Shapes::replace_in`).

use super::markers::{holds_marker, kind_name, push_marker, MARKER_ROOM, MARKER_START};
use super::tables::*;
use super::{anchor_words, anchors, spans, Pattern, PATTERN_SIZE_LIMIT};
use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// The shapes as written, and compiled once needed.
#[derive(Debug)]
pub(super) struct LazyShapes {
    pub(super) patterns: Vec<Pattern>,
    pub(super) keys: Vec<String>,
    pub(super) compiled: OnceLock<Shapes>,
}

#[derive(Debug)]
pub(super) struct Shapes {
    /// In the order they are tried: the built-in ones, then a workspace's.
    pub(super) shapes: Vec<Shape>,
    /// Per anchor (an index of `anchor_words`), the shapes a text holding it
    /// may match.
    pub(super) by_anchor: Vec<Vec<usize>>,
}

/// One shape, compiled the first time a text may hold it: a hook or a
/// run whose text holds `://` compiles the URL shape and no other.
#[derive(Debug)]
pub(super) struct Shape {
    pub(super) kind: String,
    pub(super) pattern: String,
    /// Every text holding it is tried (a workspace's own pattern, whose
    /// literals are unknown); else only one holding one of its anchors.
    pub(super) always: bool,
    /// The largest compiled form it may take (a workspace's own pattern).
    pub(super) size_limit: Option<usize>,
    regex: OnceLock<Option<Compiled>>,
}

#[derive(Debug)]
struct Compiled {
    regex: Regex,
    /// Whether the pattern has a group `s`: only it is replaced.
    secret_group: bool,
}

impl Compiled {
    fn new(regex: Regex) -> Self {
        let secret_group = regex.capture_names().any(|name| name == Some("s"));
        Compiled {
            regex,
            secret_group,
        }
    }
}

impl Shape {
    pub(super) fn new(kind: &str, pattern: String, always: bool) -> Self {
        Shape {
            kind: kind.to_string(),
            pattern,
            always,
            size_limit: None,
            regex: OnceLock::new(),
        }
    }

    pub(super) fn compile(&self) -> Result<Regex, regex::Error> {
        let mut builder = regex::RegexBuilder::new(&self.pattern);
        if let Some(limit) = self.size_limit {
            builder.size_limit(limit);
        }
        builder.build()
    }

    /// Whether it was compiled yet.
    #[cfg(test)]
    pub(super) fn is_compiled(&self) -> bool {
        self.regex.get().is_some()
    }

    #[cfg(test)]
    pub(super) fn regex(&self) -> Option<&Regex> {
        self.compiled().map(|c| &c.regex)
    }

    /// The compiled shape; None for one that does not compile (only a
    /// workspace's, which is compiled where its settings are read).
    fn compiled(&self) -> Option<&Compiled> {
        self.regex
            .get_or_init(|| self.compile().ok().map(Compiled::new))
            .as_ref()
    }
}

impl LazyShapes {
    /// Compiled now: what a workspace wrote must fail where it is read.
    pub(super) fn compiled_now(patterns: &[Pattern], keys: &[String]) -> Result<Self, String> {
        let shapes = all_shapes(patterns, keys);
        for shape in shapes.shapes.iter().filter(|s| s.always) {
            let regex = shape.compile().map_err(|e| {
                format!("pattern {:?} of kind {:?}: {e}", shape.pattern, shape.kind)
            })?;
            let _ = shape.regex.set(Some(Compiled::new(regex)));
        }
        let lazy = LazyShapes::later(patterns, keys);
        let _ = lazy.compiled.set(shapes);
        Ok(lazy)
    }

    pub(super) fn later(patterns: &[Pattern], keys: &[String]) -> Self {
        LazyShapes {
            patterns: patterns.to_vec(),
            keys: keys.to_vec(),
            compiled: OnceLock::new(),
        }
    }

    /// The shapes, each compiled when first tried.
    pub(super) fn get(&self) -> &Shapes {
        self.compiled
            .get_or_init(|| all_shapes(&self.patterns, &self.keys))
    }
}

/// The shapes a text is tried against: a bit each for the first 64 (the
/// built-in ones and a few of a workspace's, on the stack), a flag each
/// past them.
struct Tried {
    few: u64,
    more: Vec<bool>,
}

impl Tried {
    fn new(shapes: usize) -> Self {
        Tried {
            few: 0,
            more: vec![false; shapes.saturating_sub(64)],
        }
    }

    fn set(&mut self, index: usize) {
        match index.checked_sub(64) {
            None => self.few |= 1 << index,
            Some(beyond) => self.more[beyond] = true,
        }
    }

    fn get(&self, index: usize) -> bool {
        match index.checked_sub(64) {
            None => self.few & (1 << index) != 0,
            Some(beyond) => self.more[beyond],
        }
    }
}

impl Shapes {
    /// `text` with every secret shape in it replaced, and how many were:
    /// each shape whose anchors it holds (and every one of a workspace's)
    /// tried in order, on the text the earlier ones left.
    pub(super) fn replace_in<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        // The shapes the text may match: those of the anchors it holds.
        let mut tried = Tried::new(self.shapes.len());
        for (index, shape) in self.shapes.iter().enumerate() {
            if shape.always {
                tried.set(index);
            }
        }
        for found in anchors().find_overlapping_iter(text) {
            for &index in &self.by_anchor[found.pattern().as_usize()] {
                tried.set(index);
            }
        }
        let mut out = Cow::Borrowed(text);
        let mut count = 0;
        // One buffer for every shape's rewrite, swapped with `out`.
        let mut next = String::new();
        for (index, shape) in self.shapes.iter().enumerate() {
            if !tried.get(index) {
                continue;
            }
            let Some(Compiled {
                regex,
                secret_group,
            }) = shape.compiled()
            else {
                continue;
            };
            let kind = &shape.kind;
            let mut last = 0;
            next.clear();
            for whole in regex.find_iter(&out) {
                // The group `s` if the pattern has one: read from the match
                // where its form allows (`spans.rs`), else captured.
                let span = if !secret_group {
                    whole.range()
                } else if let Some(span) = spans::secret_in(kind, whole.as_str())
                    // A workspace's own pattern or key words may carry a
                    // built-in kind's name (`assignment`), not its form.
                    .filter(|_| !shape.always)
                {
                    whole.start() + span.start..whole.start() + span.end
                } else {
                    regex
                        .captures_at(&out, whole.start())
                        .and_then(|c| c.name("s"))
                        .map_or(whole.range(), |secret| secret.range())
                };
                let span = match kind.as_str() {
                    "assignment" => match past_scheme(&out, span) {
                        Some(span) => span,
                        None => continue,
                    },
                    _ => span,
                };
                // A word past the match may hold the next match's start.
                if span.start < last {
                    continue;
                }
                let secret = &out[span.clone()];
                // A marker is never taken for a secret again (an earlier
                // shape's marker inside this match: `https://[redacted:…]@`).
                if secret.is_empty() || holds_marker(whole.as_str().as_bytes()) {
                    continue;
                }
                // `Bearer authentication failed`: a word, not a credential.
                if matches!(kind.as_str(), "bearer" | "basic-auth")
                    && secret.bytes().all(|b| b.is_ascii_lowercase())
                {
                    continue;
                }
                if last == 0 {
                    // Room for the text and a few markers: one allocation.
                    next.reserve(out.len() + 4 * MARKER_ROOM);
                }
                next.push_str(&out[last..span.start]);
                push_marker(&mut next, kind, secret);
                last = span.end;
                count += 1;
            }
            if last > 0 {
                next.push_str(&out[last..]);
                let previous = std::mem::replace(&mut out, Cow::Owned(std::mem::take(&mut next)));
                if let Cow::Owned(buffer) = previous {
                    next = buffer;
                }
            }
        }
        (out, count)
    }
}

/// Every shape in the order they are tried (the built-in ones first, so a
/// workspace's own cannot take the text a built-in one needs whole:
/// `Bearer <token>`), none compiled yet, and which anchor points at which.
pub(super) fn all_shapes(extra: &[Pattern], keys: &[String]) -> Shapes {
    let anchors_of = |kind: &str| {
        SHAPE_ANCHORS
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(&[][..], |(_, anchors)| *anchors)
    };
    let mut shapes: Vec<Shape> = SHAPES
        .iter()
        .map(|(kind, pattern)| Shape::new(kind, (*pattern).to_string(), false))
        .collect();
    shapes.push(Shape::new(
        "assignment",
        format!(r"(?i)(?-u:\b)[A-Za-z0-9_.-]*(?:{ASSIGNED_KEYS}){ASSIGNED}"),
        false,
    ));
    let mut by_anchor = vec![Vec::new(); anchor_words().len()];
    for (index, shape) in shapes.iter().enumerate() {
        for anchor in anchors_of(&shape.kind) {
            if let Some(at) = anchor_words().iter().position(|a| a == anchor) {
                by_anchor[at].push(index);
            }
        }
    }
    for pattern in extra {
        shapes.push(Shape {
            size_limit: Some(PATTERN_SIZE_LIMIT),
            ..Shape::new(&kind_name(&pattern.kind), pattern.regex.clone(), true)
        });
    }
    let keys: Vec<String> = keys
        .iter()
        .map(|k| k.trim())
        .filter(|k| !k.is_empty())
        .map(regex::escape)
        .collect();
    if !keys.is_empty() {
        // A workspace's own key words, assigned in text as the built-in are.
        let pattern = format!(
            r"(?i)(?-u:\b)[A-Za-z0-9_.-]*(?:{}){ASSIGNED}",
            keys.join("|")
        );
        shapes.push(Shape::new("assignment", pattern, true));
    }
    Shapes { shapes, by_anchor }
}

/// An assignment's secret at `span` of `text`, past an HTTP scheme: when
/// it is one (`Token 123456`, whose credential of digits only the value's
/// pattern cannot take), the word after it; None when a marker follows it
/// (`Bearer [redacted:bearer#…]`, replaced by an earlier shape); else
/// `span` itself (`password: basic`, the scheme word as the value).
fn past_scheme(text: &str, span: Range<usize>) -> Option<Range<usize>> {
    if !is_scheme(&text[span.clone()]) {
        return Some(span);
    }
    let rest = &text[span.end..];
    let start = span.end + (rest.len() - rest.trim_start().len());
    let word = &text[start..];
    if start == span.end || word.is_empty() {
        return Some(span);
    }
    if word.starts_with(MARKER_START) {
        return None;
    }
    let length = word
        .find(|c: char| c.is_whitespace() || "\"'&;,(){}[]<>".contains(c))
        .unwrap_or(word.len());
    Some(match length {
        0 => span,
        _ => start..start + length,
    })
}

/// Whether `word` is an HTTP scheme the assignment's pattern knows, case
/// folded as its `(?i)` folds (`ſ` is an `s`, the Kelvin sign a `k`).
fn is_scheme(word: &str) -> bool {
    let folded = word.chars().map(|c| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    });
    ["bearer", "basic", "token"]
        .iter()
        .any(|scheme| folded.clone().eq(scheme.chars()))
}
