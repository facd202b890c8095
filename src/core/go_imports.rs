//! The imports a Go probe block needs (its first line names them) and that
//! may be left behind, used by nothing, when the block is removed: Go does
//! not build a file with an import it does not use. Found from the file's
//! text alone: its import declarations, and whether each imported name is
//! ever followed by `.` outside them, its strings and its comments.

/// The packages a Go block imports; only these are reported.
pub const PROBE_PACKAGES: [&str; 4] = ["encoding/json", "fmt", "os", "time"];

/// One import of a probe package that nothing in the file uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusedImport {
    /// The 1-based line of its import spec.
    pub line: u32,
    pub path: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'a> {
    Ident(&'a str),
    Str(String),
    Punct(char),
}

/// Go's tokens with their lines: comments dropped, string and rune
/// literals read (interpreted strings unescaped only as far as the import
/// paths need: they hold no escapes).
fn tokens(source: &str) -> Vec<(u32, Token<'_>)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            b'"' | b'\'' | b'`' => {
                let at = line;
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    if c != b'`' && bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                        if c != b'`' {
                            break;
                        }
                    }
                    i += 1;
                }
                let end = i.min(bytes.len());
                let text = source.get(start..end).unwrap_or_default().to_string();
                i += 1;
                if c != b'\'' {
                    out.push((at, Token::Str(text)));
                }
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric() || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                out.push((line, Token::Ident(&source[start..i])));
            }
            c if c.is_ascii_whitespace() || c.is_ascii_digit() => i += 1,
            c => {
                out.push((line, Token::Punct(c as char)));
                i += 1;
            }
        }
    }
    out
}

/// The imports of probe packages in `source` that nothing uses, in line
/// order. An import under `_` or `.` is never reported; one under another
/// name is looked for by that name.
pub fn unused_probe_imports(source: &str) -> Vec<UnusedImport> {
    let tokens = tokens(source);
    // (line, path, the name it is used by); and where the declarations are.
    let mut imports: Vec<(u32, &'static str, String)> = Vec::new();
    let mut in_decls = vec![false; tokens.len()];
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].1 != Token::Ident("import") {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let grouped = tokens.get(i).is_some_and(|t| t.1 == Token::Punct('('));
        if grouped {
            i += 1;
        }
        loop {
            let name = match tokens.get(i).map(|t| &t.1) {
                Some(Token::Ident(name)) => {
                    i += 1;
                    Some((*name).to_string())
                }
                Some(Token::Punct('.')) => {
                    i += 1;
                    Some(".".to_string())
                }
                _ => None,
            };
            let Some((line, Token::Str(path))) = tokens.get(i) else {
                break;
            };
            i += 1;
            if let Some(probe) = PROBE_PACKAGES.iter().find(|p| **p == path.as_str()) {
                let name =
                    name.unwrap_or_else(|| probe.rsplit('/').next().unwrap_or(probe).to_string());
                if name != "_" && name != "." {
                    imports.push((*line, probe, name));
                }
            }
            if !grouped {
                break;
            }
            if tokens.get(i).is_some_and(|t| t.1 == Token::Punct(';')) {
                i += 1;
            }
            if tokens.get(i).is_some_and(|t| t.1 == Token::Punct(')')) {
                i += 1;
                break;
            }
        }
        for flag in &mut in_decls[start..i.min(tokens.len())] {
            *flag = true;
        }
    }
    imports
        .into_iter()
        .filter(|(_, _, name)| {
            // `name.` that is not itself a field (`s.time.Before`).
            !tokens.windows(2).enumerate().any(|(k, pair)| {
                !in_decls[k]
                    && pair[0].1 == Token::Ident(name.as_str())
                    && pair[1].1 == Token::Punct('.')
                    && (k == 0 || tokens[k - 1].1 != Token::Punct('.'))
            })
        })
        .map(|(line, path, _)| UnusedImport { line, path })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER_CLEANUP: &str = r#"package main

import (
	"encoding/json" // the probe's
	"fmt"
	"os"
	t "time"
	"strings"
)

func main() {
	// json.Marshal was the probe's; "os.Exit" in a string is not a use.
	s := "os.Exit(1)"
	fmt.Println(strings.ToUpper(s), `time.Now()`)
}
"#;

    #[test]
    fn imports_used_only_in_comments_and_strings_are_unused() {
        let unused = unused_probe_imports(AFTER_CLEANUP);
        let paths: Vec<(u32, &str)> = unused.iter().map(|u| (u.line, u.path)).collect();
        assert_eq!(paths, [(4, "encoding/json"), (6, "os"), (7, "time")]);
    }

    #[test]
    fn used_renamed_blank_and_single_imports_are_not_reported() {
        let source = "package p\n\nimport \"os\"\nimport j \"encoding/json\"\nimport _ \"fmt\"\nimport . \"time\"\n\nfunc f() { _, _ = j.Marshal(os.Args) ; _ = Now() }\n";
        assert_eq!(unused_probe_imports(source), []);
        let source = "package p\n\nimport \"os\"\n\nfunc f(s S) { _ = s.os.Args }\n";
        assert_eq!(
            unused_probe_imports(source),
            [UnusedImport {
                line: 3,
                path: "os"
            }]
        );
    }

    #[test]
    fn a_file_with_a_block_uses_its_imports() {
        let source = "package p\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc f() {\n\tfunc(f *os.File, _ error) { _ = json.NewEncoder(f).Encode(fmt.Sprint(time.Now())) }(os.Stdout, nil)\n}\n";
        assert_eq!(unused_probe_imports(source), []);
    }

    #[test]
    fn any_text_is_read_without_panic() {
        for text in [
            "import",
            "import (",
            "import \"os",
            "/* import \"os\"",
            "import x",
            "`",
            "import ( \"os\" ; \"fmt\" )",
        ] {
            let _ = unused_probe_imports(text);
        }
    }
}
