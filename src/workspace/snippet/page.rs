//! Whether a JavaScript or TypeScript file runs in a page rather than in
//! Node, so it gets the block that posts to the ingest URL: a Node block in
//! page code finds no `process` and logs nothing. Told from the file's own
//! text first (what it uses: `document`, `window`, a UI framework; or
//! Node's modules and globals), then from its project (a `tsconfig.json`
//! whose `lib` has the DOM and whose `types` leave Node out, beside a
//! bundler's config). And whether that project sets a Content Security
//! Policy, which must let the page post to the ingest origin. And whether
//! the file runs under Deno, whose block must not open a permission prompt.

use std::path::{Path, PathBuf};

/// Files read for the signs: their first 256 KiB.
const MOST: u64 = 256 << 10;

/// What the file's text says about where it runs.
fn signs(text: &str) -> (Option<&'static str>, Option<&'static str>) {
    const PAGE: [(&str, &str); 9] = [
        ("document.", "it uses `document`"),
        ("window.", "it uses `window`"),
        ("navigator.", "it uses `navigator`"),
        ("localStorage", "it uses `localStorage`"),
        ("from \"react\"", "it imports React"),
        ("from 'react'", "it imports React"),
        ("from \"vue\"", "it imports Vue"),
        ("from 'vue'", "it imports Vue"),
        ("customElements.", "it defines custom elements"),
    ];
    const NODE: [(&str, &str); 15] = [
        ("require(", "it calls `require`"),
        ("from \"puppeteer", "it drives a browser from Node"),
        ("from \"playwright", "it drives a browser from Node"),
        ("from \"jsdom", "it runs a page in Node"),
        ("from \"path\"", "it imports `path`"),
        ("from \"http\"", "it imports `http`"),
        ("from \"fs/promises\"", "it imports `fs/promises`"),
        ("from \"node:", "it imports Node's modules"),
        ("from 'node:", "it imports Node's modules"),
        ("process.", "it uses `process`"),
        ("__dirname", "it uses `__dirname`"),
        ("module.exports", "it sets `module.exports`"),
        ("from \"fs\"", "it imports `fs`"),
        ("from 'fs'", "it imports `fs`"),
        ("Deno.", "it uses `Deno`"),
    ];
    let find = |list: &[(&str, &'static str)]| {
        list.iter()
            .find(|(sign, _)| uses(text, sign))
            .map(|(_, why)| *why)
    };
    (find(&PAGE), find(&NODE))
}

/// Whether `sign` starts a word somewhere in `text` (`document.`, not
/// `mydocument.` or `page.document.`).
fn uses(text: &str, sign: &str) -> bool {
    text.match_indices(sign).any(|(at, _)| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
    })
}

fn read_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    file.take(MOST).read_to_end(&mut bytes).ok()?;
    // Cut inside a character, or not UTF-8 at all: read what is there.
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The file's code without its comments and the text of its strings, so a
/// word in either is no sign (a lexer's rough cut: a `/` starting a regular
/// expression is read as code).
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if c == b'"' || c == b'\'' || c == b'`' {
            // The quotes stay, so an import's `from "react"` still reads.
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != c && (c == b'`' || bytes[i] != b'\n') {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            let end = (i + 1).min(bytes.len());
            let literal = &text[start..end.max(start)];
            // Module names are kept (what an import names); other text is not.
            if literal.len() <= 40 && !literal.contains(' ') {
                out.push_str(literal);
            } else {
                out.push_str("\"\"");
            }
            i = end;
            continue;
        } else {
            out.push(c as char);
            i += 1;
            continue;
        }
        out.push(' ');
    }
    out
}

/// The folders from `file`'s own up to `root`, nearest first.
fn folders_up(root: &Path, file: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = root.join(file);
    while dir.pop() && dir.starts_with(root) {
        out.push(dir.clone());
    }
    out
}

/// The nearest `tsconfig.json` or `jsconfig.json` says the code has the
/// DOM and not Node's types.
fn config_says_page(folders: &[PathBuf]) -> bool {
    for dir in folders {
        for name in ["tsconfig.json", "jsconfig.json"] {
            let Some(text) = read_head(&dir.join(name)) else {
                continue;
            };
            // tsconfig allows comments and trailing commas: read loosely.
            let lower = text.to_ascii_lowercase();
            let has = |key: &str, value: &str| {
                lower.find(&format!("\"{key}\"")).is_some_and(|at| {
                    let rest = &lower[at..];
                    let end = rest.find(']').unwrap_or(rest.len());
                    rest[..end].contains(&format!("\"{value}\""))
                })
            };
            // No `types` at all loads every `@types` package, Node's too.
            return has("lib", "dom") && lower.contains("\"types\"") && !has("types", "node");
        }
    }
    false
}

const BUNDLERS: [&str; 12] = [
    "vite.config.ts",
    "vite.config.js",
    "vite.config.mjs",
    "webpack.config.js",
    "webpack.config.ts",
    "rollup.config.js",
    "rollup.config.mjs",
    "esbuild.config.mjs",
    ".parcelrc",
    "svelte.config.js",
    "angular.json",
    "index.html",
];

/// Why `file` looks like page code, or None when it looks like Node's (or
/// nothing says).
pub fn runs_in_a_page(root: &Path, file: &str) -> Option<String> {
    // A tool's config or a test runs in Node whatever its folder holds.
    let name = file.rsplit('/').next().unwrap_or(file);
    if [".config.", ".test.", ".spec.", "jest.", "vitest."]
        .iter()
        .any(|part| name.contains(part))
    {
        return None;
    }
    let text = code_of(&read_head(&root.join(file)).unwrap_or_default());
    // Both (a page reading `process.env` a bundler fills in) or neither:
    // the project says.
    match signs(&text) {
        (Some(page), None) => return Some(page.to_string()),
        (None, Some(_)) => return None,
        _ => {}
    }
    let folders = folders_up(root, file);
    if !config_says_page(&folders) {
        return None;
    }
    let bundler = folders.iter().find_map(|dir| {
        BUNDLERS
            .iter()
            .find(|name| dir.join(name).is_file())
            .copied()
    })?;
    Some(format!(
        "its tsconfig has the DOM library and not Node's types, and the project has {bundler}"
    ))
}

/// Why `file` looks like Deno's code (a `deno.json` or `deno.jsonc` in its
/// folder or one above it, within the workspace; or its code uses `Deno.`),
/// or None.
pub fn runs_under_deno(root: &Path, file: &str) -> Option<String> {
    if let Some(config) = folders_up(root, file).iter().find_map(|dir| {
        ["deno.json", "deno.jsonc"]
            .into_iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
    }) {
        let shown = config.strip_prefix(root).unwrap_or(&config);
        return Some(format!(
            "the project has {}",
            shown.to_string_lossy().replace('\\', "/")
        ));
    }
    let text = code_of(&read_head(&root.join(file)).unwrap_or_default());
    uses(&text, "Deno.").then(|| "it uses `Deno`".to_string())
}

/// The project's HTML that sets a Content Security Policy (a `<meta
/// http-equiv>`), nearest first: the page's `connect-src` must allow the
/// ingest origin, or the browser blocks the post.
pub fn content_security_policy(root: &Path, file: &str) -> Option<String> {
    for dir in folders_up(root, file) {
        for name in ["index.html", "public/index.html", "src/index.html"] {
            let path = dir.join(name);
            let Some(text) = read_head(&path) else {
                continue;
            };
            if text
                .to_ascii_lowercase()
                .contains("content-security-policy")
            {
                let shown = path.strip_prefix(root).unwrap_or(&path);
                return Some(shown.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!(
            "ds-page-{}-{}",
            std::process::id(),
            files.len() + files.first().map_or(0, |f| f.1.len())
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        root
    }

    #[test]
    fn the_files_own_signs_decide_first() {
        let root = project(&[
            (
                "src/cart.ts",
                "export const total = () => document.title.length;\n",
            ),
            (
                "src/server.ts",
                "import { readFileSync } from \"node:fs\";\nwindow.x = 1;\n",
            ),
            ("src/plain.ts", "export const one = 1;\n"),
        ]);
        assert_eq!(
            runs_in_a_page(&root, "src/cart.ts").as_deref(),
            Some("it uses `document`")
        );
        assert_eq!(runs_in_a_page(&root, "src/server.ts"), None);
        assert_eq!(runs_in_a_page(&root, "src/plain.ts"), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn deno_code_is_told_by_its_config_or_its_own_use_of_deno() {
        let root = project(&[
            ("deno/deno.jsonc", "{ // tasks\n}\n"),
            ("deno/src/main.ts", "export const one = 1;\n"),
            (
                "script/run.ts",
                "const text = await Deno.readTextFile(\"a\");\n",
            ),
            (
                "script/quiet.ts",
                "// Deno.exit is not called here\nconst myDeno = { x: 1 };\nmyDeno.x;\n",
            ),
        ]);
        assert_eq!(
            runs_under_deno(&root, "deno/src/main.ts").as_deref(),
            Some("the project has deno/deno.jsonc")
        );
        assert_eq!(
            runs_under_deno(&root, "script/run.ts").as_deref(),
            Some("it uses `Deno`")
        );
        assert_eq!(runs_under_deno(&root, "script/quiet.ts"), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_dom_tsconfig_beside_a_bundler_makes_a_silent_file_page_code() {
        let root = project(&[
            (
                "web/tsconfig.json",
                "{\n  // the page\n  \"compilerOptions\": {\"lib\": [\"ES2022\", \"DOM\"], \"types\": [],},\n}\n",
            ),
            ("web/vite.config.ts", "export default {};\n"),
            ("web/src/money.ts", "export const cents = (n: number) => n * 100;\n"),
            (
                "web/index.html",
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'\">",
            ),
            ("api/tsconfig.json", "{\"compilerOptions\": {\"lib\": [\"dom\"], \"types\": [\"node\"]}}"),
            ("api/vite.config.ts", "export default {};\n"),
            ("api/money.ts", "export const cents = 1;\n"),
        ]);
        let why = runs_in_a_page(&root, "web/src/money.ts").unwrap();
        assert!(why.contains("vite.config.ts"), "{why}");
        assert_eq!(runs_in_a_page(&root, "api/money.ts"), None);
        assert_eq!(
            content_security_policy(&root, "web/src/money.ts").as_deref(),
            Some("web/index.html")
        );
        assert_eq!(content_security_policy(&root, "api/money.ts"), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
