//! How authored text becomes part of a block: the line's fixed fields as
//! JSON, string literals of every target language, shell quoting, and the
//! template slots.

use super::SnippetInput;

/// The authored fields every line starts with, in order; `None` is null.
pub(super) fn header(input: &SnippetInput) -> [(&'static str, Option<String>); 5] {
    let probe = input.probe;
    [
        ("sessionId", Some(input.session_id.to_string())),
        ("hypothesisId", probe.hypothesis_id.clone()),
        ("probeId", Some(probe.id.clone())),
        ("location", Some(probe.location())),
        ("message", Some(input.message.to_string())),
    ]
}

/// The line's authored start as JSON text, for languages that assemble it by
/// hand: one piece per field, the last one opening `data`.
pub(super) fn json_head(input: &SnippetInput) -> Vec<String> {
    let mut pieces: Vec<String> = header(input)
        .iter()
        .enumerate()
        .map(|(i, (key, value))| {
            let value = value.as_deref().map_or("null".to_string(), json_string);
            let comma = if i == 0 { "{" } else { "," };
            format!("{comma}{}:{value}", json_string(key))
        })
        .collect();
    pieces.push(",\"data\":{".to_string());
    pieces
}

/// The JSON text that precedes one `data` value.
pub(super) fn json_key(index: usize, name: &str) -> String {
    let comma = if index == 0 { "" } else { "," };
    format!("{comma}{}:", json_string(name))
}

pub(super) fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}

/// String literal syntaxes of the target languages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lit {
    Python,
    Js,
    Go,
    Rust,
    Java,
    Kotlin,
    CSharp,
    C,
    Swift,
    Ruby,
    Php,
}

/// `text` as a double-quoted literal of `style`. The quote and the backslash
/// always get a backslash, and so does what the language would interpolate
/// (`$` in Kotlin and PHP, `#` in Ruby) or read as a trigraph (`?` in C).
/// Control characters, line and paragraph separators and bidirectional
/// overrides become escapes, so a literal never spans lines or hides text.
pub(super) fn lit(style: Lit, text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '$' if matches!(style, Lit::Kotlin | Lit::Php) => out.push_str("\\$"),
            '#' if style == Lit::Ruby => out.push_str("\\#"),
            '?' if style == Lit::C => out.push_str("\\?"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) => out.push_str(&escape_char(style, c)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(super) fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

pub(super) fn escape_char(style: Lit, c: char) -> String {
    let code = c as u32;
    match style {
        Lit::Python | Lit::Js | Lit::Go | Lit::Kotlin | Lit::CSharp => format!("\\u{code:04x}"),
        Lit::Rust | Lit::Swift | Lit::Ruby | Lit::Php => format!("\\u{{{code:x}}}"),
        // Java turns `\uXXXX` into the character before it reads the
        // literal, so `\u000a` would end it: octal escapes stay escapes.
        Lit::Java if code < 0x100 => format!("\\{code:03o}"),
        Lit::Java => format!("\\u{code:04x}"),
        // C strings are bytes: one octal escape per UTF-8 byte (an octal
        // escape stops after three digits; `\x` would swallow what follows).
        Lit::C => c
            .to_string()
            .bytes()
            .map(|b| format!("\\{b:03o}"))
            .collect(),
    }
}

/// `text` as one single-quoted shell word: nothing inside is special.
pub(super) fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Fills `@@NAME@@` slots in one pass, so filled text is never read again.
pub(super) fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(at) = rest.find("@@") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find("@@").expect("a slot is closed");
        let name = &after[..end];
        let (_, value) = slots
            .iter()
            .find(|(slot, _)| *slot == name)
            .unwrap_or_else(|| panic!("no value for slot {name}"));
        out.push_str(value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The authored header as entries of a map literal on one line:
/// `<key><sep><value>, ...`, `null` where a field has no value.
pub(super) fn header_entries(
    input: &SnippetInput,
    key: impl Fn(&str) -> String,
    sep: &str,
    value: impl Fn(&str) -> String,
    null: &str,
) -> String {
    header(input)
        .iter()
        .map(|(name, v)| {
            let v = v.as_deref().map_or(null.to_string(), &value);
            format!("{}{sep}{v}", key(name))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `data` entries of a map literal on one line: `<key><sep><value>, ...`.
pub(super) fn data_entries(
    input: &SnippetInput,
    key: impl Fn(&str) -> String,
    sep: &str,
    value: impl Fn(&str) -> String,
) -> String {
    input
        .variables
        .iter()
        .map(|name| format!("{}{sep}{}", key(name), value(name)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line's authored start as one JSON text, through `"data":{`.
pub(super) fn json_head_text(input: &SnippetInput) -> String {
    json_head(input).concat()
}

/// A value helper, left out of a block that logs no value: compilers warn
/// about an unused one (C# fails the build under warnings as errors).
pub(super) fn with_values(input: &SnippetInput, helper: &'static str) -> &'static str {
    if input.variables.is_empty() {
        ""
    } else {
        helper
    }
}

/// Whether a `variables` entry is a plain name: shell reads it as `${name-}`
/// (so `set -u` does not abort), PHP adds its `$`, Rust inlines it in
/// `format!`; anything else is pasted as written.
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// JavaScript that runs `statement` once per program for this probe of
/// this session, however often the block runs: a flag under a registered
/// symbol on `globalThis` (no name the program could hold, nothing typed).
pub(super) fn js_once(input: &SnippetInput, statement: &str) -> String {
    let flag = lit(
        Lit::Js,
        &format!("debug-sidecar {} {}", input.session_tag, input.probe.id),
    );
    format!(
        "if (!Reflect.has(globalThis, Symbol.for({flag}))) {{ Reflect.set(globalThis, Symbol.for({flag}), true); {statement} }}"
    )
}
