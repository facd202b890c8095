//! Probe snippets (DESIGN section 7): for a file's language, a ready block,
//! wrapped in the marker grammar (`core::markers`) inside that language's line
//! comment, that appends one JSON line to the run's log file when it runs:
//! `sessionId, hypothesisId, probeId, location, message, data, timestamp`
//! (`hypothesisId` is null when the probe has none, `timestamp` is
//! milliseconds since the epoch; Go's encoder writes the keys sorted).
//! Browser JavaScript posts the same line to the ingest URL instead.
//!
//! What every snippet keeps to:
//! - Short: at most 12 lines, the markers included, whatever the number of
//!   variables (the `data` entries share one line). Lines are long rather
//!   than many: one per part of the record (header, data, timestamp) or per
//!   step of a value writer. Go's block is laid out as gofmt lays it out.
//! - Every failure is swallowed: a probe never crashes or changes the program
//!   (shell resets `$?` to 0, as any command does).
//! - Self-contained where the language allows. Go, Swift, C and C++ cannot
//!   import inside a function, so the first line of their block says in a
//!   comment which imports or headers the file needs (and they stay when the
//!   probe is removed: Go then needs goimports to drop them; Go names `fmt`
//!   only for a block that logs variables). Java, Kotlin and C# use fully
//!   qualified names (C#'s LINQ call needs System.Core, which every project
//!   references); Python imports in place, Ruby requires in place, Node takes
//!   `fs` from `require` or `process.getBuiltinModule`.
//! - Names the block introduces start with `dbg` (`DEBUG_PROBE_VALUE` for
//!   C's macro, undefined at the end of the block) and stay inside it where
//!   the language has block scope; Python's `_dbg_log` and PHP's `$dbgError`
//!   are the exceptions the language forces.
//! - Authored text (ids, location, message, log path, variable names) is
//!   escaped for the target's string literal, and for JSON first where the
//!   line is assembled by hand. Nothing is dropped: control characters are
//!   written as escapes, so a literal never spans lines.
//! - `variables` are names or simple expressions in the target language; each
//!   becomes a `data` key holding its value at run time, JSON-escaped by the
//!   standard JSON library where there is one (Python, JavaScript, Ruby, PHP,
//!   Go, Swift), else by a small value writer in the block (a lambda in Java,
//!   Kotlin, C# and C++, a closure in Rust, a macro in C, a function in
//!   shell). Numbers and booleans stay JSON values where the type is known at
//!   run time; Rust writes each value's `{:?}` text as a string (no type is
//!   known to it) and shell every value as a string (shell has no types); C
//!   handles numbers and `char *` only (see `fn c`).
//! - The fingerprint another scanner reads: between the markers, a line of
//!   code (one that does not open with a comment or a `#`) holds the log path
//!   as the language's literal renders it (the ingest URL for browser), and
//!   one holds `probeId` followed, a few punctuation characters later, by the
//!   probe id. The tests below hold every language to it.

use crate::core::markers::{end_marker, start_marker};
use crate::core::model::Probe;
use std::fmt;

/// Canonical names, with the file extensions and the other names that pick
/// them (case-insensitive). A requested language may be any of the three.
const LANGUAGES: &[(&str, &[&str], &[&str])] = &[
    (
        "javascript",
        &["js", "mjs", "cjs"],
        &["node", "nodejs", "javascript-node"],
    ),
    ("typescript", &["ts", "mts", "cts"], &["typescript-node"]),
    (
        "browser",
        &["jsx", "tsx"],
        &["javascript-browser", "typescript-browser", "web"],
    ),
    ("python", &["py", "pyw"], &["python3"]),
    ("go", &["go"], &["golang"]),
    ("rust", &["rs"], &[]),
    ("java", &["java"], &[]),
    ("kotlin", &["kt", "kts"], &[]),
    ("csharp", &["cs", "csx"], &["c#"]),
    ("c", &["c", "h"], &[]),
    ("cpp", &["cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx"], &[]),
    ("ruby", &["rb"], &[]),
    ("php", &["php"], &[]),
    ("swift", &["swift"], &[]),
    ("shell", &["sh", "bash", "zsh", "ksh"], &[]),
];

/// No snippet for this language (or not now: browser needs the ingest URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedLanguage {
    pub language: String,
    pub reason: Option<String>,
}

impl UnsupportedLanguage {
    fn new(language: impl Into<String>) -> Self {
        Self {
            language: language.into(),
            reason: None,
        }
    }

    fn because(language: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            language: language.into(),
            reason: Some(reason.into()),
        }
    }
}

impl fmt::Display for UnsupportedLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no probe snippet for `{}`", self.language)?;
        if let Some(reason) = &self.reason {
            write!(f, " ({reason})")?;
        }
        let names: Vec<&str> = LANGUAGES.iter().map(|(name, _, _)| *name).collect();
        write!(
            f,
            "; supported: {} (extensions and common aliases accepted)",
            names.join(", ")
        )
    }
}

impl std::error::Error for UnsupportedLanguage {}

pub struct SnippetInput<'a> {
    pub probe: &'a Probe,
    pub session_id: &'a str,
    pub session_tag: &'a str,
    pub log_file: &'a str,
    pub message: &'a str,
    /// Names or simple expressions in the target language whose runtime
    /// values go into `data`, keyed by the text given.
    pub variables: &'a [&'a str],
    /// Where browser snippets post their line; needed for `browser` only.
    pub ingest_url: Option<&'a str>,
}

/// The snippet language for a file: the requested one when given, else the
/// one its extension names.
pub fn language_for(
    file: &str,
    requested: Option<&str>,
) -> Result<&'static str, UnsupportedLanguage> {
    if let Some(requested) = requested.map(str::trim).filter(|r| !r.is_empty()) {
        return canonical(requested).ok_or_else(|| UnsupportedLanguage::new(requested));
    }
    let Some(extension) = std::path::Path::new(file).extension() else {
        return Err(UnsupportedLanguage::because(
            file,
            "the file has no extension; pass `language`",
        ));
    };
    let extension = extension.to_string_lossy().to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|(_, extensions, _)| extensions.contains(&extension.as_str()))
        .map(|(name, _, _)| *name)
        .ok_or_else(|| UnsupportedLanguage::because(file, format!("extension .{extension}")))
}

/// The canonical name for a requested language, extension or alias.
fn canonical(requested: &str) -> Option<&'static str> {
    let wanted = requested
        .trim()
        .trim_start_matches('.')
        .to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|(name, extensions, aliases)| {
            *name == wanted
                || extensions.contains(&wanted.as_str())
                || aliases.contains(&wanted.as_str())
        })
        .map(|(name, _, _)| *name)
}

/// Refuses what `snippet` would refuse for lack of an ingest URL, so a
/// caller can check before it registers a probe.
pub fn check_writable(language: &str, ingest_url: Option<&str>) -> Result<(), UnsupportedLanguage> {
    match canonical(language) {
        None => Err(UnsupportedLanguage::new(language)),
        Some("browser") if ingest_url.is_none() => Err(no_ingest_url()),
        Some(_) => Ok(()),
    }
}

fn no_ingest_url() -> UnsupportedLanguage {
    UnsupportedLanguage::because(
        "browser",
        "browser snippets post to the ingest URL and the ingest server is not running; \
         pass language `javascript` for Node",
    )
}

/// The block for `language` (a canonical name or any name `language_for`
/// accepts), markers included.
pub fn snippet(language: &str, input: &SnippetInput) -> Result<String, UnsupportedLanguage> {
    let language = canonical(language).ok_or_else(|| UnsupportedLanguage::new(language))?;
    // A blank entry names nothing, and a repeated key breaks Go's map literal.
    let mut variables: Vec<&str> = Vec::new();
    for name in input.variables.iter().map(|name| name.trim()) {
        if !name.is_empty() && !variables.contains(&name) {
            variables.push(name);
        }
    }
    let input = &SnippetInput {
        variables: &variables,
        ..*input
    };
    let body = match language {
        "javascript" => node(input, false),
        "typescript" => node(input, true),
        "browser" => browser(input)?,
        "python" => python(input),
        "go" => go(input),
        "rust" => rust(input),
        "java" => java(input),
        "kotlin" => kotlin(input),
        "csharp" => csharp(input),
        "c" => c(input),
        "cpp" => cpp(input),
        "ruby" => ruby(input),
        "php" => php(input),
        "swift" => swift(input),
        "shell" => shell(input),
        other => unreachable!("`{other}` is in LANGUAGES but has no writer"),
    };
    let comment = match language {
        "python" | "ruby" | "shell" => "#",
        _ => "//",
    };
    let probe = input.probe;
    Ok(format!(
        "{comment} {start}\n{body}{comment} {end}\n",
        start = start_marker(&probe.id, input.session_tag),
        end = end_marker(&probe.id),
    ))
}

// ------------------------------------------------------------- the line

/// The authored fields every line starts with, in order; `None` is null.
fn header(input: &SnippetInput) -> [(&'static str, Option<String>); 5] {
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
fn json_head(input: &SnippetInput) -> Vec<String> {
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
fn json_key(index: usize, name: &str) -> String {
    let comma = if index == 0 { "" } else { "," };
    format!("{comma}{}:", json_string(name))
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}

// ------------------------------------------------------ string literals

/// String literal syntaxes of the target languages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lit {
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
fn lit(style: Lit, text: &str) -> String {
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

fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_char(style: Lit, c: char) -> String {
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
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Fills `@@NAME@@` slots in one pass, so filled text is never read again.
fn fill(template: &str, slots: &[(&str, &str)]) -> String {
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
fn header_entries(
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
fn data_entries(
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
fn json_head_text(input: &SnippetInput) -> String {
    json_head(input).concat()
}

/// A value helper, left out of a block that logs no value: compilers warn
/// about an unused one (C# fails the build under warnings as errors).
fn with_values(input: &SnippetInput, helper: &'static str) -> &'static str {
    if input.variables.is_empty() {
        ""
    } else {
        helper
    }
}

/// Whether a `variables` entry is a plain name: shell reads it as `${name-}`
/// (so `set -u` does not abort), PHP adds its `$`, Rust inlines it in
/// `format!`; anything else is pasted as written.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

// ------------------------------------------- languages with a JSON library

/// Python 3.7+: `json` and `time` imported in place; anything `json` cannot
/// write goes in as its `repr`.
fn python(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Python, n);
    fill(
        r#"try:
    with open(@@LOG@@, "a", encoding="utf-8") as _dbg_log:
        _dbg_log.write(__import__("json").dumps({
            @@HEADER@@,
            "data": {@@DATA@@},
            "timestamp": __import__("time").time_ns() // 1000000,
        }, default=repr) + "\n")
except Exception:
    pass
"#,
        &[
            ("LOG", &lit(Lit::Python, input.log_file)),
            (
                "HEADER",
                &header_entries(input, key, ": ", |v| lit(Lit::Python, v), "None"),
            ),
            ("DATA", &data_entries(input, key, ": ", str::to_string)),
        ],
    )
}

/// Ruby: `json` required in place; `rescue` covers a missing gem too.
fn ruby(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Ruby, n);
    fill(
        r#"begin
  require "json"
  File.open(@@LOG@@, "a") { |dbg_log| dbg_log.puts(JSON.generate({
    @@HEADER@@,
    "data" => {@@DATA@@},
    "timestamp" => Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond),
  })) }
rescue StandardError, ScriptError
end
"#,
        &[
            ("LOG", &lit(Lit::Ruby, input.log_file)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Ruby, v), "nil"),
            ),
            ("DATA", &data_entries(input, key, " => ", str::to_string)),
        ],
    )
}

/// PHP 7+: `@` silences warnings (an undefined variable, a missing
/// directory), `(object)` keeps an empty `data` an object, partial output
/// writes null for what JSON cannot hold. Bare names get their `$`.
fn php(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Php, n);
    let data = data_entries(input, key, " => ", |n| {
        if is_identifier(n) {
            format!("${n}")
        } else {
            n.to_string()
        }
    });
    fill(
        r#"try {
    @file_put_contents(@@LOG@@, json_encode([
        @@HEADER@@,
        "data" => (object) [@@DATA@@],
        "timestamp" => (int) floor(microtime(true) * 1000),
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n", FILE_APPEND | LOCK_EX);
} catch (\Throwable $dbgError) {
}
"#,
        &[
            ("LOG", &lit(Lit::Php, input.log_file)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Php, v), "null"),
            ),
            ("DATA", &data),
        ],
    )
}

/// The header and `data` of a JavaScript object literal, shared by Node and
/// browser.
fn js_fields(input: &SnippetInput) -> (String, String) {
    let header = header_entries(input, str::to_string, ": ", |v| lit(Lit::Js, v), "null");
    let data = data_entries(input, |n| lit(Lit::Js, n), ": ", str::to_string);
    let data = if data.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {data} }}")
    };
    (header, data)
}

/// Node (CommonJS or ES module): `fs` from `require` where it exists, else
/// from `process.getBuiltinModule` (Node 20.16+), since an ES module cannot
/// import inside a block.
fn node(input: &SnippetInput, typescript: bool) -> String {
    let fs = if typescript {
        r#"const dbgFs: any = typeof require === "function" ? require("fs") : (process as any).getBuiltinModule("fs");"#
    } else {
        r#"const dbgFs = typeof require === "function" ? require("fs") : process.getBuiltinModule("fs");"#
    };
    let (header, data) = js_fields(input);
    fill(
        r#"try {
  @@FS@@
  dbgFs.appendFileSync(@@LOG@@, JSON.stringify({
    @@HEADER@@,
    data: @@DATA@@,
    timestamp: Date.now(),
  }) + "\n");
} catch {}
"#,
        &[
            ("FS", fs),
            ("LOG", &lit(Lit::Js, input.log_file)),
            ("HEADER", &header),
            ("DATA", &data),
        ],
    )
}

/// Browser JavaScript or TypeScript: posted to the ingest server, since a
/// page cannot write files; a rejected or failed request is ignored.
fn browser(input: &SnippetInput) -> Result<String, UnsupportedLanguage> {
    let url = input.ingest_url.ok_or_else(no_ingest_url)?;
    let (header, data) = js_fields(input);
    Ok(fill(
        r#"try {
  fetch(@@URL@@, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({
    @@HEADER@@,
    data: @@DATA@@,
    timestamp: Date.now(),
  }) }).catch(() => {});
} catch {}
"#,
        &[
            ("URL", &lit(Lit::Js, url)),
            ("HEADER", &header),
            ("DATA", &data),
        ],
    ))
}

/// Go's value check: a value `encoding/json` cannot write goes in as
/// `fmt.Sprint`.
const GO_VALUE_CHECK: &str = "\tfor dbgKey, dbgValue := range dbgData {
\t\tif _, dbgErr := json.Marshal(dbgValue); dbgErr != nil {
\t\t\tdbgData[dbgKey] = fmt.Sprint(dbgValue)
\t\t}
\t}
";

/// Go: imports are per file, so the block names the ones it needs (goimports
/// adds them). The func literal takes the opened file as its arguments, so
/// its names stay local; the deferred func swallows a panic and closes the
/// file (a nil one too: its methods only return an error). The encoder
/// writes the line and its newline in one write. The block is gofmt's
/// layout, so formatting on save leaves it as it is.
fn go(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Go, n);
    let header = header_entries(input, key, ": ", |v| lit(Lit::Go, v), "nil");
    let (imports, data) = if input.variables.is_empty() {
        (
            r#""encoding/json", "os", "time""#,
            "map[string]interface{}{}",
        )
    } else {
        (r#""encoding/json", "fmt", "os", "time""#, "dbgData")
    };
    let values = if input.variables.is_empty() {
        String::new()
    } else {
        format!(
            "\tdbgData := map[string]interface{{}}{{{}}}\n{GO_VALUE_CHECK}",
            data_entries(input, key, ": ", str::to_string)
        )
    };
    fill(
        r#"func(dbgFile *os.File, _ error) { // needs imports @@IMPORTS@@
	defer func() { _ = recover(); _ = dbgFile.Close() }()
@@VALUES@@	_ = json.NewEncoder(dbgFile).Encode(map[string]interface{}{@@HEADER@@, "data": @@DATA@@, "timestamp": time.Now().UnixNano() / int64(time.Millisecond)})
}(os.OpenFile(@@LOG@@, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0644))
"#,
        &[
            ("IMPORTS", imports),
            ("VALUES", &values),
            ("HEADER", &header),
            ("DATA", data),
            ("LOG", &lit(Lit::Go, input.log_file)),
        ],
    )
}

/// Swift's value check.
const SWIFT_VALUE_FN: &str = "    let dbgValue: (Any) -> Any = { JSONSerialization.isValidJSONObject([$0]) ? $0 : String(describing: $0) }\n";

/// Swift: Foundation cannot be imported inside a block, so the comment names
/// it. `JSONSerialization` raises an uncatchable exception on values it
/// cannot write, so each value is checked first and described otherwise.
fn swift(input: &SnippetInput) -> String {
    let data = if input.variables.is_empty() {
        "[String: Any]()".to_string()
    } else {
        let entries = data_entries(
            input,
            |n| lit(Lit::Swift, n),
            ": ",
            |n| format!("dbgValue({n})"),
        );
        format!("[{entries}]")
    };
    fill(
        r#"do { // needs `import Foundation`
@@VALUE_FN@@    let dbgLine: [String: Any] = [@@HEADER@@,
        "data": @@DATA@@, "timestamp": Int(Date().timeIntervalSince1970 * 1000)]
    if JSONSerialization.isValidJSONObject(dbgLine), var dbgBytes = try? JSONSerialization.data(withJSONObject: dbgLine) {
        let dbgPath = @@LOG@@; dbgBytes.append(0x0A)
        if !FileManager.default.fileExists(atPath: dbgPath) { FileManager.default.createFile(atPath: dbgPath, contents: nil) }
        if let dbgFile = FileHandle(forWritingAtPath: dbgPath) { dbgFile.seekToEndOfFile(); dbgFile.write(dbgBytes); dbgFile.closeFile() }
    }
}
"#,
        &[
            ("LOG", &lit(Lit::Swift, input.log_file)),
            ("VALUE_FN", with_values(input, SWIFT_VALUE_FN)),
            (
                "HEADER",
                &header_entries(
                    input,
                    |n| lit(Lit::Swift, n),
                    ": ",
                    |v| lit(Lit::Swift, v),
                    "NSNull()",
                ),
            ),
            ("DATA", &data),
        ],
    )
}

// ---------------------------------------- languages that write JSON by hand

/// The line as a concatenation in `style` over three lines at most: the
/// header, the `data` entries (each value wrapped by `value`), and the
/// timestamp with the closing text; `join` goes between two lines.
fn concatenation(
    input: &SnippetInput,
    style: Lit,
    join: &str,
    value: impl Fn(&str) -> String,
    timestamp: &str,
) -> String {
    let mut lines = vec![lit(style, &json_head_text(input))];
    if !input.variables.is_empty() {
        let data: Vec<String> = input
            .variables
            .iter()
            .enumerate()
            .map(|(i, name)| format!("{} + {}", lit(style, &json_key(i, name)), value(name)))
            .collect();
        lines.push(data.join(" + "));
    }
    lines.push(format!(
        "{} + {timestamp} + {}",
        lit(style, "},\"timestamp\":"),
        lit(style, "}\n")
    ));
    lines.join(join)
}

/// Java's value writer.
const JAVA_JSON_FN: &str = r#"    java.util.function.Function<Object, String> dbgJson = dbgValue -> dbgValue == null || dbgValue instanceof Boolean
        || dbgValue instanceof Number && String.valueOf(dbgValue).matches("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?") ? String.valueOf(dbgValue)
        : String.valueOf(dbgValue).chars().mapToObj(dbgC -> dbgC == '"' || dbgC == '\\' ? "\\" + (char) dbgC : dbgC < 0x20 ? String.format("\\u%04x", dbgC) : String.valueOf((char) dbgC))
            .collect(java.util.stream.Collectors.joining("", "\"", "\""));
"#;

/// Java 8+: the JDK has no JSON writer, so a lambda writes each value:
/// null, booleans and finite numbers as JSON, the rest as its escaped
/// `toString`. `Throwable` is caught so not even an `Error` escapes.
fn java(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    String dbgLine = @@LINE@@;
    java.nio.file.Files.write(java.nio.file.Paths.get(@@LOG@@), dbgLine.getBytes(java.nio.charset.StandardCharsets.UTF_8), java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
} catch (Throwable dbgIgnored) {}
"#,
        &[
            ("LOG", &lit(Lit::Java, input.log_file)),
            ("VALUE_FN", with_values(input, JAVA_JSON_FN)),
            (
                "LINE",
                &concatenation(
                    input,
                    Lit::Java,
                    "\n        + ",
                    |n| format!("dbgJson.apply({n})"),
                    "System.currentTimeMillis()",
                ),
            ),
        ],
    )
}

/// Kotlin's value writer.
const KOTLIN_JSON_FN: &str = r#"    val dbgJson = { dbgValue: Any? -> if (dbgValue == null || dbgValue is Boolean || (dbgValue is Number && dbgValue.toString().matches(Regex("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?")))) dbgValue.toString()
        else dbgValue.toString().map { dbgC -> when { dbgC == '"' || dbgC == '\\' -> "\\$dbgC"; dbgC < ' ' -> String.format("\\u%04x", dbgC - '\u0000'); else -> "$dbgC" } }.joinToString("", "\"", "\"") }
"#;

/// Kotlin/JVM: the same value writer as Java (Char minus Char is the code on
/// every Kotlin version); `java.io.File` appends.
fn kotlin(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    java.io.File(@@LOG@@).appendText(@@LINE@@)
} catch (dbgIgnored: Throwable) {
}
"#,
        &[
            ("LOG", &lit(Lit::Kotlin, input.log_file)),
            ("VALUE_FN", with_values(input, KOTLIN_JSON_FN)),
            (
                "LINE",
                &concatenation(
                    input,
                    Lit::Kotlin,
                    " +\n        ",
                    |n| format!("dbgJson({n})"),
                    "System.currentTimeMillis()",
                ),
            ),
        ],
    )
}

/// C#'s value writer.
const CSHARP_JSON_FN: &str = r#"    System.Func<object, string> dbgText = dbgValue => System.Convert.ToString(dbgValue, System.Globalization.CultureInfo.InvariantCulture) ?? "";
    System.Func<object, string> dbgJson = dbgValue => dbgValue == null ? "null" : (dbgValue is bool) ? ((bool)dbgValue ? "true" : "false")
        : (dbgValue is System.IConvertible) && !(dbgValue is string) && !(dbgValue is char) && System.Text.RegularExpressions.Regex.IsMatch(dbgText(dbgValue), "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$") ? dbgText(dbgValue)
        : "\"" + string.Concat(System.Linq.Enumerable.Select(dbgText(dbgValue), dbgC => dbgC == '"' || dbgC == '\\' ? "\\" + dbgC : dbgC < ' ' ? "\\u" + ((int)dbgC).ToString("x4") : dbgC.ToString())) + "\"";
"#;

/// C#: System.Text.Json is missing on .NET Framework, Mono and Unity, so a
/// lambda writes each value: null, booleans and finite numbers as JSON, the
/// rest as its escaped invariant-culture text (escaped with LINQ, in
/// System.Core). `catch` takes everything.
fn csharp(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    System.IO.File.AppendAllText(@@LOG@@, @@LINE@@);
} catch {}
"#,
        &[
            ("LOG", &lit(Lit::CSharp, input.log_file)),
            ("VALUE_FN", with_values(input, CSHARP_JSON_FN)),
            (
                "LINE",
                &concatenation(
                    input,
                    Lit::CSharp,
                    "\n        + ",
                    |n| format!("dbgJson({n})"),
                    "System.DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()",
                ),
            ),
        ],
    )
}

/// Rust's value escaper: the body of a JSON string.
const RUST_JSON_FN: &str = r#"    let dbg_json = |dbg_text: &str| -> String { dbg_text.chars().map(|dbg_c| match dbg_c { '"' | '\\' => format!("\\{dbg_c}"), _ if dbg_c < ' ' => format!("\\u{:04x}", dbg_c as u32), _ => dbg_c.to_string() }).collect() };
"#;

/// Rust: no JSON crate assumed, and the sidecar cannot know the types, so
/// each value is its `{:?}` text in a JSON string (every std type has Debug;
/// a string shows with its quotes). The line is built before the file is
/// opened, and writing never panics.
fn rust(input: &SnippetInput) -> String {
    let data = if input.variables.is_empty() {
        String::new()
    } else {
        let pairs: Vec<String> = input
            .variables
            .iter()
            .map(|name| {
                // A plain name goes inside the braces (clippy asks for that).
                let debug = if is_identifier(name) {
                    format!("format!(\"{{{name}:?}}\")")
                } else {
                    format!("format!(\"{{:?}}\", {name})")
                };
                format!("({}, {debug})", lit(Lit::Rust, name))
            })
            .collect();
        format!(
            "{RUST_JSON_FN}    let dbg_data = [{}];\n    let dbg_data: Vec<String> = dbg_data.iter().map(|(dbg_key, dbg_value)| format!(\"\\\"{{}}\\\":\\\"{{}}\\\"\", dbg_json(dbg_key), dbg_json(dbg_value))).collect();\n",
            pairs.join(", ")
        )
    };
    let joined = if input.variables.is_empty() {
        ""
    } else {
        "&dbg_data.join(\",\"), "
    };
    fill(
        r#"{
@@DATA@@    let dbg_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |dbg_age| dbg_age.as_millis());
    let dbg_line = [@@HEAD@@, @@JOINED@@"},\"timestamp\":", &dbg_ms.to_string(), "}\n"].concat();
    if let Ok(mut dbg_file) = std::fs::OpenOptions::new().create(true).append(true).open(@@LOG@@) {
        let _ = std::io::Write::write_all(&mut dbg_file, dbg_line.as_bytes());
    }
}
"#,
        &[
            ("DATA", &data),
            ("HEAD", &lit(Lit::Rust, &json_head_text(input))),
            ("JOINED", joined),
            ("LOG", &lit(Lit::Rust, input.log_file)),
        ],
    )
}

/// C's value writer, a macro because only `_Generic` knows a value's type:
/// the printf format per arithmetic type; the value's text (a `char *` as it
/// is, a number printed into `dbg_num`); then null, a number as it is, or
/// the text escaped into a JSON string.
const C_VALUE_MACRO: &str = r#"#define DEBUG_PROBE_VALUE(key, v) do { char dbg_num[64] = ""; const char *dbg_format = _Generic((v), _Bool: "%d", char: "%d", signed char: "%d", unsigned char: "%d", short: "%d", unsigned short: "%d", int: "%d", unsigned: "%u", long: "%ld", unsigned long: "%lu", long long: "%lld", unsigned long long: "%llu", float: "%.9g", double: "%.17g", long double: "%.21Lg", default: NULL); \
        const char *dbg_text = _Generic((v), char *: (v), const char *: (v), default: dbg_format ? dbg_num : "(unsupported type: cast it to a number or char *)"); if (dbg_format) snprintf(dbg_num, sizeof dbg_num, dbg_format, _Generic((v), char *: 0, const char *: 0, default: (v))); fputs(key, dbg_log); \
        if (!dbg_text || (dbg_text == dbg_num && (unsigned)(dbg_num[dbg_num[0] == '-'] - '0') < 10u)) { fputs(dbg_text ? dbg_text : "null", dbg_log); break; } fputc('"', dbg_log); \
        for (const char *dbg_c = dbg_text; *dbg_c; dbg_c++) { fprintf(dbg_log, (unsigned char)*dbg_c < 0x20 ? "\\u%04x" : *dbg_c == '"' || *dbg_c == '\\' ? "\\%c" : "%c", (unsigned char)*dbg_c); } fputc('"', dbg_log); } while (0)
"#;

/// C11: no JSON writer and no way to know the types, so `_Generic` picks:
/// `char *` and char arrays are written as escaped strings (NULL as null),
/// integers, booleans (0/1) and finite floats as numbers, NaN and infinities
/// as strings, any other type as a string asking for a cast. Headers cannot
/// be included inside a function, so the comment names them. The macro is
/// undefined at the end of the block.
fn c(input: &SnippetInput) -> String {
    let values: Vec<String> = input
        .variables
        .iter()
        .enumerate()
        .map(|(i, name)| {
            format!(
                "DEBUG_PROBE_VALUE({}, {name});",
                lit(Lit::C, &json_key(i, name))
            )
        })
        .collect();
    let (values, undef) = if values.is_empty() {
        (String::new(), "")
    } else {
        (
            format!("    {}\n", values.join(" ")),
            "#undef DEBUG_PROBE_VALUE\n",
        )
    };
    fill(
        r#"do { // needs #include <stdio.h> and <time.h> (C11)
@@MACRO@@    FILE *dbg_log = fopen(@@LOG@@, "a"); if (!dbg_log) break; fputs(@@HEAD@@, dbg_log);
@@VALUES@@    struct timespec dbg_now = {0}; timespec_get(&dbg_now, TIME_UTC); fprintf(dbg_log, "},\"timestamp\":%lld}\n", (long long)dbg_now.tv_sec * 1000 + dbg_now.tv_nsec / 1000000); fclose(dbg_log);
@@UNDEF@@} while (0);
"#,
        &[
            ("MACRO", with_values(input, C_VALUE_MACRO)),
            ("LOG", &lit(Lit::C, input.log_file)),
            ("HEAD", &lit(Lit::C, &json_head_text(input))),
            ("VALUES", &values),
            ("UNDEF", undef),
        ],
    )
}

/// C++'s value writer, one `if constexpr` branch per kind of type.
const CPP_VALUE_FN: &str = r#"    auto dbg_value = [](std::FILE *dbg_log, const char *dbg_key, const auto &dbg_v) { using dbg_type = std::decay_t<decltype(dbg_v)>; std::fputs(dbg_key, dbg_log); if constexpr (std::is_same_v<dbg_type, bool>) std::fputs(dbg_v ? "true" : "false", dbg_log);
        else if constexpr (std::is_integral_v<dbg_type> || std::is_enum_v<dbg_type>) std::is_unsigned_v<dbg_type> ? std::fprintf(dbg_log, "%llu", static_cast<unsigned long long>(dbg_v)) : std::fprintf(dbg_log, "%lld", static_cast<long long>(dbg_v));
        else if constexpr (std::is_floating_point_v<dbg_type>) std::fprintf(dbg_log, dbg_v - dbg_v == 0 ? "%.17g" : "\"%.17g\"", static_cast<double>(dbg_v)); // NaN and infinities as strings
        else if constexpr (std::is_convertible_v<const dbg_type &, std::string_view>) { if constexpr (std::is_pointer_v<std::remove_reference_t<decltype(dbg_v)>>) { if (!dbg_v) { std::fputs("null", dbg_log); return; } } std::fputc('"', dbg_log); for (unsigned char dbg_c : std::string_view(dbg_v)) { std::fprintf(dbg_log, dbg_c < 0x20 ? "\\u%04x" : dbg_c == '"' || dbg_c == '\\' ? "\\%c" : "%c", dbg_c); } std::fputc('"', dbg_log); }
        else std::fputs("\"(unsupported type: convert it to a number or string)\"", dbg_log); };
"#;

/// C++17: a generic lambda writes each value by its type: booleans, integers,
/// enums and finite floats as JSON, anything convertible to `string_view`
/// escaped (a null `char *` as null), other types as a string asking for a
/// conversion. Headers cannot be included inside a function, so the comment
/// names them; `catch (...)` swallows what a variable's expression throws.
fn cpp(input: &SnippetInput) -> String {
    let values: Vec<String> = input
        .variables
        .iter()
        .enumerate()
        .map(|(i, name)| {
            format!(
                "dbg_value(dbg_log, {}, {name});",
                lit(Lit::C, &json_key(i, name))
            )
        })
        .collect();
    let values = if values.is_empty() {
        String::new()
    } else {
        format!("        {}\n", values.join(" "))
    };
    fill(
        r#"try { // needs #include <cstdio>, <ctime>, <string_view> and <type_traits> (C++17)
@@VALUE_FN@@    if (std::FILE *dbg_log = std::fopen(@@LOG@@, "a")) { std::fputs(@@HEAD@@, dbg_log);
@@VALUES@@        std::timespec dbg_now{}; std::timespec_get(&dbg_now, TIME_UTC); std::fprintf(dbg_log, "},\"timestamp\":%lld}\n", static_cast<long long>(dbg_now.tv_sec) * 1000 + dbg_now.tv_nsec / 1000000); std::fclose(dbg_log); }
} catch (...) {}
"#,
        &[
            ("VALUE_FN", with_values(input, CPP_VALUE_FN)),
            ("LOG", &lit(Lit::C, input.log_file)),
            ("HEAD", &lit(Lit::C, &json_head_text(input))),
            ("VALUES", &values),
        ],
    )
}

/// Shell's value escaper: its argument as a JSON string.
const SHELL_JSON_FN: &str = r#"  dbg_json() {
    dbg_rest=$1 dbg_out=
    while [ -n "$dbg_rest" ]; do dbg_tail=${dbg_rest#?}; dbg_char=${dbg_rest%"$dbg_tail"}; dbg_rest=$dbg_tail
      case $dbg_char in '"' | \\) dbg_out=$dbg_out\\$dbg_char ;; [[:cntrl:]]) dbg_out=$dbg_out$(printf '\\u%04x' "'$dbg_char") ;; *) dbg_out=$dbg_out$dbg_char ;; esac
    done; printf '"%s"' "$dbg_out"; }
"#;

/// POSIX sh (also bash, zsh, ksh): no JSON tool to rely on, so a function
/// escapes each value into a JSON string, character by character. It all runs
/// in a subshell, so no name leaks and `set -e`/`set -u` cannot stop the
/// script; its errors go to /dev/null. Variable names are read as `${name-}`;
/// other entries (`$1`, `$(cmd)`) are pasted inside double quotes.
fn shell(input: &SnippetInput) -> String {
    let data: Vec<String> = input
        .variables
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let value = if is_identifier(name) || name.chars().all(|c| c.is_ascii_digit()) {
                format!("${{{name}-}}")
            } else {
                name.to_string()
            };
            format!(
                "{}\"$(dbg_json \"{value}\")\"",
                sh_quote(&json_key(i, name))
            )
        })
        .collect();
    let data = if data.is_empty() {
        String::new()
    } else {
        format!("{SHELL_JSON_FN}  dbg_data={}\n", data.concat())
    };
    let (format, data_arg) = if input.variables.is_empty() {
        ("%s", "")
    } else {
        ("%s%s", " \"$dbg_data\"")
    };
    fill(
        r#"(
@@DATA@@  dbg_ms=$(date +%s%3N); case $dbg_ms in '' | *[!0-9]*) dbg_ms=$(date +%s)000 ;; esac
  printf '@@FORMAT@@},"timestamp":%s}\n' @@HEAD@@@@DATA_ARG@@ "$dbg_ms" >> @@LOG@@
) 2>/dev/null || true
"#,
        &[
            ("DATA", &data),
            ("FORMAT", format),
            ("HEAD", &sh_quote(&json_head_text(input))),
            ("DATA_ARG", data_arg),
            ("LOG", &sh_quote(input.log_file)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_comes_from_the_extension() {
        for (file, language) in [
            ("src/app.js", "javascript"),
            ("lib/esm.mjs", "javascript"),
            ("lib/old.cjs", "javascript"),
            ("src/app.ts", "typescript"),
            ("src/app.mts", "typescript"),
            ("src/app.cts", "typescript"),
            ("src/App.jsx", "browser"),
            ("src/App.tsx", "browser"),
            ("tool.py", "python"),
            ("main.go", "go"),
            ("src/lib.rs", "rust"),
            ("App.java", "java"),
            ("Main.kt", "kotlin"),
            ("build.gradle.kts", "kotlin"),
            ("Program.cs", "csharp"),
            ("main.c", "c"),
            ("util.h", "c"),
            ("main.cpp", "cpp"),
            ("main.cc", "cpp"),
            ("util.hpp", "cpp"),
            ("app.rb", "ruby"),
            ("index.php", "php"),
            ("App.swift", "swift"),
            ("run.sh", "shell"),
            ("run.bash", "shell"),
            ("RUN.ZSH", "shell"),
        ] {
            assert_eq!(language_for(file, None), Ok(language), "{file}");
        }
    }

    #[test]
    fn a_requested_language_wins_and_aliases_count() {
        for (requested, language) in [
            ("Bash", "shell"),
            ("zsh", "shell"),
            ("node", "javascript"),
            ("TypeScript", "typescript"),
            ("javascript-browser", "browser"),
            ("browser", "browser"),
            ("py", "python"),
            (".py", "python"),
            ("golang", "go"),
            ("C#", "csharp"),
            ("c++", "cpp"),
            ("  ruby ", "ruby"),
        ] {
            assert_eq!(
                language_for("src/App.jsx", Some(requested)),
                Ok(language),
                "{requested}"
            );
        }
        // A blank request falls back to the extension.
        assert_eq!(language_for("tool.py", Some("  ")), Ok("python"));
    }

    #[test]
    fn unknown_languages_are_refused_with_the_supported_list() {
        let err = language_for("tool.py", Some("cobol")).unwrap_err();
        assert_eq!(err.language, "cobol");
        let message = err.to_string();
        for (name, _, _) in LANGUAGES {
            assert!(message.contains(name), "{message} lacks {name}");
        }
        assert!(language_for("Makefile", None)
            .unwrap_err()
            .to_string()
            .contains("no extension"));
        assert!(language_for("notes.txt", None)
            .unwrap_err()
            .to_string()
            .contains(".txt"));
    }

    #[test]
    fn browser_needs_the_ingest_url() {
        let probe = Probe {
            id: "p1".into(),
            file: "App.jsx".into(),
            line: None,
            round: 1,
            hypothesis_id: None,
            language: None,
            state: crate::core::model::ProbeState::Issued,
            trace: None,
        };
        let mut input = SnippetInput {
            probe: &probe,
            session_id: "s",
            session_tag: "s",
            log_file: "/tmp/log",
            message: "m",
            variables: &[],
            ingest_url: None,
        };
        let err = snippet("browser", &input).unwrap_err();
        assert!(err.to_string().contains("ingest"), "{err}");
        // The engine asks first, so no probe is registered for nothing.
        assert_eq!(check_writable("jsx", None), Err(err));
        assert_eq!(check_writable("python", None), Ok(()));
        assert!(check_writable("cobol", Some("http://x")).is_err());
        input.ingest_url = Some("http://127.0.0.1:1/ingest/t");
        assert!(snippet("browser", &input)
            .unwrap()
            .contains("fetch(\"http://127.0.0.1:1/ingest/t\""));
    }

    #[test]
    fn literals_escape_what_each_language_reads_specially() {
        let text = "a\"b\\c$d#e?f\ng\u{1}h";
        assert_eq!(lit(Lit::Python, text), r#""a\"b\\c$d#e?f\ng\u0001h""#);
        assert_eq!(lit(Lit::Kotlin, text), r#""a\"b\\c\$d#e?f\ng\u0001h""#);
        assert_eq!(lit(Lit::Php, text), r#""a\"b\\c\$d#e?f\ng\u{1}h""#);
        assert_eq!(lit(Lit::Ruby, text), r#""a\"b\\c$d\#e?f\ng\u{1}h""#);
        assert_eq!(lit(Lit::C, text), r#""a\"b\\c$d#e\?f\ng\001h""#);
        assert_eq!(lit(Lit::Java, text), r#""a\"b\\c$d#e?f\ng\001h""#);
        assert_eq!(lit(Lit::C, "\u{85}"), r#""\302\205""#);
        assert_eq!(lit(Lit::Js, "\u{2028}é"), r#""\u2028é""#);
        assert_eq!(sh_quote("it's $x"), r#"'it'\''s $x'"#);
    }

    #[test]
    fn blank_and_repeated_variables_are_dropped() {
        let probe = Probe {
            id: "p1".into(),
            file: "main.go".into(),
            line: None,
            round: 1,
            hypothesis_id: None,
            language: None,
            state: crate::core::model::ProbeState::Issued,
            trace: None,
        };
        let input = SnippetInput {
            probe: &probe,
            session_id: "s",
            session_tag: "s",
            log_file: "/tmp/log",
            message: "m",
            variables: &["count", " ", "count ", "total"],
            ingest_url: None,
        };
        let block = snippet("go", &input).unwrap();
        assert_eq!(block.matches("\"count\": count").count(), 1, "{block}");
        assert!(block.contains("\"total\": total}"), "{block}");
        assert!(json_head(&input).contains(&",\"hypothesisId\":null".to_string()));
    }

    #[test]
    fn slots_are_filled_once() {
        assert_eq!(
            fill("<@@A@@|@@B@@>", &[("A", "@@B@@"), ("B", "b")]),
            "<@@B@@|b>"
        );
    }

    /// The snapshot's probe, for the tests that go through every language.
    fn sample_probe() -> Probe {
        Probe {
            id: "p7".into(),
            file: "src/checkout.x".into(),
            line: Some(42),
            round: 1,
            hypothesis_id: Some("H1".into()),
            language: None,
            state: crate::core::model::ProbeState::Issued,
            trace: None,
        }
    }

    const URL: &str = "http://127.0.0.1:7242/ingest/3f9c2a";
    const HOSTILE: &str = "total's \"50% off\" \\ $HOME #{x} ??/ für ✓\tand\nmore\u{2028}";

    fn sample<'a>(
        probe: &'a Probe,
        log_file: &'a str,
        variables: &'a [&'a str],
    ) -> SnippetInput<'a> {
        SnippetInput {
            probe,
            session_id: "s-demo",
            session_tag: "s-demo",
            log_file,
            message: HOSTILE,
            variables,
            ingest_url: Some(URL),
        }
    }

    fn every_language() -> impl Iterator<Item = &'static str> {
        LANGUAGES.iter().map(|(name, _, _)| *name)
    }

    /// A line of code, as the probe scanner reads blocks: one that does not
    /// open with a comment (a C directive's `#` counts as one).
    fn is_code(line: &str) -> bool {
        let line = line.trim_start();
        !["//", "#", "/*", "*", "--"]
            .iter()
            .any(|opener| line.starts_with(opener))
    }

    /// `probeId`, then at most 8 characters that are neither letters nor
    /// digits, then the probe id, which no letter or digit continues.
    fn has_probe_tag(line: &str, id: &str) -> bool {
        line.match_indices("probeId").any(|(at, tag)| {
            let rest = &line[at + tag.len()..];
            let gap: String = rest.chars().take_while(|c| !c.is_alphanumeric()).collect();
            gap.chars().count() <= 8
                && rest[gap.len()..]
                    .strip_prefix(id)
                    .is_some_and(|after| !after.starts_with(char::is_alphanumeric))
        })
    }

    /// The log path as the language's string literal renders it, quotes
    /// left out (shell's single-quoted word kept whole).
    fn rendered_path(language: &str, path: &str) -> String {
        let style = match language {
            "shell" => return sh_quote(path),
            "python" => Lit::Python,
            "javascript" | "typescript" | "browser" => Lit::Js,
            "go" => Lit::Go,
            "rust" => Lit::Rust,
            "java" => Lit::Java,
            "kotlin" => Lit::Kotlin,
            "csharp" => Lit::CSharp,
            "c" | "cpp" => Lit::C,
            "swift" => Lit::Swift,
            "ruby" => Lit::Ruby,
            "php" => Lit::Php,
            other => panic!("no literal style for {other}"),
        };
        let quoted = lit(style, path);
        quoted[1..quoted.len() - 1].to_string()
    }

    /// The fingerprint contract another scanner depends on: between its
    /// markers, every block has a line of code with the log path as the
    /// language's literal renders it (the ingest URL for browser), and a
    /// line of code with the probe tag.
    #[test]
    fn every_block_names_its_log_file_and_probe_on_a_line_of_code() {
        let probe = sample_probe();
        let ascii = "/home/ada/shop/.debug-sidecar/sessions/s-demo/runs/active.jsonl";
        let hostile = "/tmp/it's a \"q\" $HOME #{x} ??/ é\\runs/active.jsonl";
        for language in every_language() {
            for log_file in [ascii, hostile] {
                for variables in [&[][..], &["count", "ratio", "name"][..]] {
                    let block = snippet(language, &sample(&probe, log_file, variables)).unwrap();
                    let lines: Vec<&str> = block.lines().collect();
                    let body = &lines[1..lines.len() - 1];
                    let code = || body.iter().filter(|line| is_code(line));
                    let path = if language == "browser" {
                        URL.to_string()
                    } else {
                        rendered_path(language, log_file)
                    };
                    assert!(
                        code().any(|line| line.contains(&path)),
                        "{language}: no line of code holds {path}:\n{block}"
                    );
                    if log_file == ascii && language != "browser" {
                        assert!(
                            code().any(|line| line.contains(ascii)),
                            "{language}: the ASCII path is not verbatim:\n{block}"
                        );
                    }
                    assert!(
                        code().any(|line| has_probe_tag(line, "p7")),
                        "{language}: no line of code holds the probe tag:\n{block}"
                    );
                }
            }
        }
        assert!(has_probe_tag(r#"fputs(",\"probeId\":\"p7\"", f);"#, "p7"));
        assert!(has_probe_tag("probeId: \"p7\",", "p7"));
        assert!(!has_probe_tag("probeId: \"p70\",", "p7"));
        assert!(!has_probe_tag("probeId = the id of p7", "p7"));
        assert!(!is_code("#define X 1") && !is_code("  // x") && is_code("x = 1 # y"));
    }

    /// At most 12 lines, markers included, for any number of variables: the
    /// `data` entries share one line.
    #[test]
    fn every_block_fits_in_twelve_lines_whatever_the_number_of_variables() {
        let probe = sample_probe();
        let names = [
            "count", "ratio", "name", "items", "total", "user_id", "flag", "x",
        ];
        for language in every_language() {
            let counts: Vec<usize> = (0..=names.len())
                .map(|n| {
                    let input = sample(&probe, "/tmp/log.jsonl", &names[..n]);
                    snippet(language, &input).unwrap().lines().count()
                })
                .collect();
            assert!(
                counts.iter().all(|&count| count <= 12),
                "{language}: {counts:?}"
            );
            assert!(
                counts[1..].iter().all(|&count| count == counts[1]),
                "{language}: the line count grows with the variables: {counts:?}"
            );
        }
    }
}
