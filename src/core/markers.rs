//! The probe marker grammar (DESIGN section 7): every probe is a block between
//! `#region debug-probe <probeId> <sessionTag>` and
//! `#endregion debug-probe <probeId>`, each inside the language's comment, so
//! editors fold it and a removal is exact.

/// Where a marker line sits in its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    Start {
        probe_id: String,
        session_tag: String,
    },
    End {
        probe_id: String,
    },
}

const START: &str = "#region debug-probe ";
const END: &str = "#endregion debug-probe ";

pub fn start_marker(probe_id: &str, session_tag: &str) -> String {
    format!("{START}{probe_id} {session_tag}")
}

pub fn end_marker(probe_id: &str) -> String {
    format!("{END}{probe_id}")
}

/// Reads a marker from one line of any language. A marker counts only as a
/// comment (the line starts with a comment opener, or with the marker
/// itself, as C#'s `#region` directive does): marker text inside a string
/// literal, a log message or prose is not a marker.
pub fn parse_marker(line: &str) -> Option<Marker> {
    let trimmed = line.trim_start();
    let body = if trimmed.starts_with(START) || trimmed.starts_with(END) {
        trimmed
    } else {
        comment_body(trimmed)?
    };
    if let Some(rest) = body.strip_prefix(END) {
        let probe_id = token(rest)?;
        return Some(Marker::End { probe_id });
    }
    let mut rest = body.strip_prefix(START)?.split_whitespace();
    let probe_id = rest.next().map(clean)?;
    let session_tag = rest.next().map(clean).unwrap_or_default();
    (!probe_id.is_empty()).then_some(Marker::Start {
        probe_id,
        session_tag,
    })
}

/// Comment openers of the languages snippets are written in and their kin.
const OPENERS: &[&str] = &[
    "//", "/*", "<!--", "#", "--", ";", "%", "*", "'", "REM ", "rem ",
];

/// Whether a trimmed line is a comment line (every other line is code). `#`
/// and `--` count only when a space, a `#`, a `!` or nothing follows, so C's
/// `#define` and a shell `--flag` line stay code.
pub fn is_comment(trimmed: &str) -> bool {
    comment_body(trimmed).is_some()
}

/// The text after a comment opener, when the trimmed line is a comment.
pub fn comment_body(trimmed: &str) -> Option<&str> {
    OPENERS.iter().find_map(|opener| {
        let rest = trimmed.strip_prefix(opener)?;
        let plain = match *opener {
            "#" | "--" => rest.is_empty() || rest.starts_with([' ', '\t', '#', '!']),
            _ => true,
        };
        plain.then(|| rest.trim_start())
    })
}

fn token(text: &str) -> Option<String> {
    let token = clean(text.split_whitespace().next()?);
    (!token.is_empty()).then_some(token)
}

/// Drops a block-comment closer glued to the token (`p1*/`, `p1-->`).
fn clean(token: &str) -> String {
    token
        .trim_end_matches("*/")
        .trim_end_matches("-->")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_markers_in_every_comment_syntax() {
        for (line, id) in [
            ("    // #region debug-probe p1 s-ab12", "p1"),
            ("# #region debug-probe p2 s-ab12", "p2"),
            ("-- #region debug-probe p3 s-ab12", "p3"),
            ("<!-- #region debug-probe p4 s-ab12 -->", "p4"),
            ("/* #region debug-probe p5 s-ab12 */", "p5"),
        ] {
            assert_eq!(
                parse_marker(line),
                Some(Marker::Start {
                    probe_id: id.into(),
                    session_tag: "s-ab12".into()
                })
            );
        }
        assert_eq!(
            parse_marker("/* #endregion debug-probe p5*/"),
            Some(Marker::End {
                probe_id: "p5".into()
            })
        );
        assert_eq!(parse_marker("// #region agent log"), None);
        // C#'s region directive is a marker too.
        assert!(parse_marker("    #region debug-probe p1 s").is_some());
        assert_eq!(parse_marker("# #region debug-probe "), None);
    }

    #[test]
    fn marker_text_that_is_not_a_comment_is_not_a_marker() {
        for line in [
            "message = \"#endregion debug-probe p1\"",
            "log('x #region debug-probe p1 s')",
            "// delete it through #endregion debug-probe p1",
            "Markers look like `#region debug-probe <id> <tag>`.",
        ] {
            assert_eq!(parse_marker(line), None, "{line}");
        }
    }

    #[test]
    fn comment_lines_are_told_from_code() {
        for comment in [
            "# note",
            "#",
            "-- note",
            "// note",
            "/* x */",
            "; x",
            "#!/bin/sh",
        ] {
            assert!(is_comment(comment), "{comment}");
        }
        for code in [
            "#define LOG \"x\"",
            "#include <x>",
            "--data @x",
            "print(1)",
            "x = 1 # y",
        ] {
            assert!(!is_comment(code), "{code}");
        }
    }

    #[test]
    fn writes_what_it_reads() {
        assert_eq!(
            parse_marker(&format!("# {}", start_marker("p9", "demo"))),
            Some(Marker::Start {
                probe_id: "p9".into(),
                session_tag: "demo".into()
            })
        );
        assert_eq!(
            parse_marker(&format!("# {}", end_marker("p9"))),
            Some(Marker::End {
                probe_id: "p9".into()
            })
        );
    }
}
