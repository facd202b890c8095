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

/// Reads a marker from one line of any language: the comment syntax around it
/// does not matter, only the tokens after the keyword.
pub fn parse_marker(line: &str) -> Option<Marker> {
    if let Some(at) = line.find(END) {
        let probe_id = token(&line[at + END.len()..])?;
        return Some(Marker::End { probe_id });
    }
    let at = line.find(START)?;
    let mut rest = line[at + START.len()..].split_whitespace();
    let probe_id = rest.next().map(clean)?;
    let session_tag = rest.next().map(clean).unwrap_or_default();
    (!probe_id.is_empty()).then_some(Marker::Start {
        probe_id,
        session_tag,
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
        assert_eq!(parse_marker("# #region debug-probe "), None);
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
