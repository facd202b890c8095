//! Probe snippets (DESIGN section 7): for a file's language, a ready block,
//! wrapped in the marker grammar (`core::markers`) inside that language's line
//! comment, that appends one JSON line to the run's log file when it runs:
//! `sessionId, hypothesisId, probeId, location, message, data, timestamp`
//! (`hypothesisId` is null when the probe has none, `timestamp` is
//! milliseconds since the epoch; Go's encoder writes the keys sorted).
//! Browser JavaScript posts the same line to the ingest URL instead.
//!
//! What every snippet keeps to:
//! - Short: at most 12 lines, the markers included (lines that only keep
//!   linters and formatters off the block or choose what a C or C++
//!   compiler has, `is_guard_line`, left out), whatever the number of
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

mod by_hand;
mod json_libs;
pub mod page;
mod posting;
mod text;

use crate::core::markers::{end_marker, start_marker};
use crate::core::model::Probe;
use by_hand::*;
use json_libs::*;
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
    ("deno", &[], &["deno-typescript", "deno-javascript"]),
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
    /// Where posting blocks send their line; needed for `browser` and
    /// whenever `post`.
    pub ingest_url: Option<&'a str>,
    /// Post the line to `ingest_url` instead of appending it to `log_file`
    /// (a program in a container, an emulator or on a device).
    pub post: bool,
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

/// Refuses a language with no block of the kind asked for (one that must
/// `post`), before any address or URL is known: a target's listener is
/// started only for a block that can post to it.
pub fn check_language(language: &str, post: bool) -> Result<(), UnsupportedLanguage> {
    match canonical(language) {
        None => Err(UnsupportedLanguage::new(language)),
        Some(language) if post && !posting::posts(language) => Err(posting::cannot_post(language)),
        Some(_) => Ok(()),
    }
}

/// Refuses what `snippet` would refuse (`check_language`, and a browser
/// block without an ingest URL), so a caller can check before it registers
/// a probe.
pub fn check_writable(
    language: &str,
    ingest_url: Option<&str>,
    post: bool,
) -> Result<(), UnsupportedLanguage> {
    check_language(language, post)?;
    match canonical(language) {
        Some("browser") if ingest_url.is_none() => Err(no_ingest_url()),
        _ => Ok(()),
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
        "browser" => posting::block(language, input)?,
        "deno" => deno(input),
        _ if input.post && !posting::posts(language) => return Err(posting::cannot_post(language)),
        _ if input.post => posting::block(language, input)?,
        "javascript" => node(input, false),
        "typescript" => node(input, true),
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
    // Suppressions that live outside a block's own text: Checkstyle's
    // comment filters (where the project's configuration enables them, with
    // their default `CHECKSTYLE:OFF` format) and C#'s compiler and analyzer
    // warnings. Neither language can push and pop: the closing line turns
    // back on everything, also what the person had turned off before.
    let body = match language {
        "java" => format!("// CHECKSTYLE:OFF\n{body}// CHECKSTYLE:ON\n"),
        "csharp" => format!("#pragma warning disable\n{body}#pragma warning restore\n"),
        _ => body,
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

/// A line a block carries only to keep the project's linters, warnings
/// and formatter off it (a Rust block's `#[rustfmt::skip]` and
/// `#[allow(...)]`, a C or C++ block's diagnostic pragmas, a C# block's
/// `#pragma warning`, prettier's, ruff's and black's, pylint's, RuboCop's,
/// PHP_CodeSniffer's and Checkstyle's comments),
/// or only to choose what the compiler in front of it has (a C or C++
/// block's `#if`, `#elif`, `#else` and `#endif`; the code lines between
/// them count): it does not count against the 12-line budget.
pub fn is_guard_line(line: &str) -> bool {
    let line = line.trim_start();
    [
        "#[rustfmt::skip]",
        "// prettier-ignore",
        "# fmt: off",
        "# fmt: on",
        "# pylint: disable=",
        "# pylint: enable=",
        "# rubocop:disable all",
        "# rubocop:enable all",
        "// phpcs:disable",
        "// phpcs:enable",
        "# shellcheck disable=",
        "#[allow(",
        "// CHECKSTYLE:",
        "#pragma warning ",
        "#if defined(",
        "#if !defined(",
        "#elif !defined(",
        "#else",
        "#pragma GCC diagnostic",
        "#endif",
    ]
    .iter()
    .any(|guard| line.starts_with(guard))
}

#[cfg(test)]
mod tests {
    use super::text::*;
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
            kind: Default::default(),
            logpoint: None,
        };
        let mut input = SnippetInput {
            probe: &probe,
            session_id: "s",
            session_tag: "s",
            log_file: "/tmp/log",
            message: "m",
            variables: &[],
            ingest_url: None,
            post: false,
        };
        let err = snippet("browser", &input).unwrap_err();
        assert!(err.to_string().contains("ingest"), "{err}");
        // The engine asks first, so no probe is registered for nothing.
        assert_eq!(check_writable("jsx", None, false), Err(err));
        assert_eq!(check_writable("python", None, false), Ok(()));
        assert!(check_writable("cobol", Some("http://x"), false).is_err());
        // Blocks that must post: every language with an HTTP client at hand.
        assert_eq!(check_writable("python", Some("http://x"), true), Ok(()));
        for language in ["c", "cpp", "swift"] {
            let refused = check_writable(language, Some("http://x"), true).unwrap_err();
            assert!(refused.to_string().contains("cannot post"), "{refused}");
        }
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
            kind: Default::default(),
            logpoint: None,
        };
        let input = SnippetInput {
            probe: &probe,
            session_id: "s",
            session_tag: "s",
            log_file: "/tmp/log",
            message: "m",
            variables: &["count", " ", "count ", "total"],
            ingest_url: None,
            post: false,
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
            kind: Default::default(),
            logpoint: None,
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
            post: false,
        }
    }

    fn every_language() -> impl Iterator<Item = &'static str> {
        LANGUAGES.iter().map(|(name, _, _)| *name)
    }

    /// Every language with a block that posts (for a target elsewhere).
    fn every_poster() -> impl Iterator<Item = &'static str> {
        every_language().filter(|language| posting::posts(language))
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
            "javascript" | "typescript" | "browser" | "deno" => Lit::Js,
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
        // A block that posts names the session's token (the end of the
        // URL) on a line of code, as `check` finds it.
        for language in every_poster() {
            for variables in [&[][..], &["count"][..]] {
                let input = SnippetInput {
                    post: true,
                    ..sample(&probe, "/unused", variables)
                };
                let block = snippet(language, &input).unwrap();
                let lines: Vec<&str> = block.lines().collect();
                let body = &lines[1..lines.len() - 1];
                let code = || body.iter().filter(|line| is_code(line));
                assert!(
                    code().any(|line| line.contains("/ingest/3f9c2a")),
                    "{language}: no line of code holds the ingest token:\n{block}"
                );
                assert!(!block.contains("/unused"), "{language}: {block}");
                assert!(
                    code().any(|line| has_probe_tag(line, "p7")),
                    "{language}: no line of code holds the probe tag:\n{block}"
                );
            }
        }
        assert!(has_probe_tag(r#"fputs(",\"probeId\":\"p7\"", f);"#, "p7"));
        assert!(has_probe_tag("probeId: \"p7\",", "p7"));
        assert!(!has_probe_tag("probeId: \"p70\",", "p7"));
        assert!(!has_probe_tag("probeId = the id of p7", "p7"));
        assert!(!is_code("#define X 1") && !is_code("  // x") && is_code("x = 1 # y"));
    }

    /// At most 12 lines, markers included and the lines that only keep
    /// linters and formatters off the block left out, for any number of
    /// variables: the `data` entries share one line.
    #[test]
    fn every_block_fits_in_twelve_lines_whatever_the_number_of_variables() {
        let probe = sample_probe();
        let names = [
            "count", "ratio", "name", "items", "total", "user_id", "flag", "x",
        ];
        let file_blocks = every_language().map(|language| (language, false));
        for (language, post) in file_blocks.chain(every_poster().map(|language| (language, true))) {
            let counts: Vec<usize> = (0..=names.len())
                .map(|n| {
                    let input = SnippetInput {
                        post,
                        ..sample(&probe, "/tmp/log.jsonl", &names[..n])
                    };
                    snippet(language, &input)
                        .unwrap()
                        .lines()
                        .filter(|line| !is_guard_line(line))
                        .count()
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
