//! What one file's text holds of debug probes (DESIGN section 7,
//! "Fingerprints"): a probe is found by what it does, not only by its
//! markers. Every snippet the sidecar hands out writes to its session's run
//! path (`<state dir>/sessions/<id>/runs/`) or posts to the ingest URL with the
//! session's token, and names its probe in the logged record
//! (`"probeId":"p3"`). So a block whose markers were deleted, respelt or
//! retagged is still found and attributed to its probe and session.
//!
//! Only probe *code* counts: markers are read only on lines that are
//! comments (a marker inside a string literal or a message is text), and
//! fingerprints only on lines that are not comments.

use super::markers::{comment_body, is_comment, parse_marker, Marker};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How far (in lines) probe code may sit from a lone marker and still be
/// read as that block's body, and how far apart fingerprint lines may be and
/// still be one unmarked probe. Snippets are at most 12 lines.
const WINDOW: u32 = 14;
/// The marked line as reported, cut to this many characters.
const TEXT_CHARS: usize = 120;

/// What the scan knows that ties code to a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clues {
    /// Path prefixes a session's run path starts with, each ending in `/`:
    /// `.debug-sidecar/` always, and the configured state directory.
    pub state_dirs: Vec<String>,
    /// Ingest tokens and the session each belongs to.
    pub tokens: Vec<(String, String)>,
}

impl Clues {
    pub fn new() -> Self {
        Clues {
            state_dirs: vec![".debug-sidecar/".to_string()],
            tokens: Vec::new(),
        }
    }

    /// Adds a state directory (absolute or relative; separators normalised).
    pub fn with_state_dir(mut self, dir: &str) -> Self {
        let mut dir = dir.replace('\\', "/");
        if !dir.ends_with('/') {
            dir.push('/');
        }
        if dir.len() > 1 && !self.state_dirs.contains(&dir) {
            self.state_dirs.push(dir);
        }
        self
    }

    pub fn with_token(mut self, token: &str, session: &str) -> Self {
        if !token.is_empty() {
            self.tokens.push((token.to_string(), session.to_string()));
        }
        self
    }
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A whole block: start marker, body, end marker.
    Block,
    /// A whole block whose markers name another session than its code.
    Retagged,
    /// Both markers, with no probe code between them: it logs nothing,
    /// and its markers are still litter to remove.
    EmptyBlock,
    /// A start marker (and maybe code) whose end marker is gone.
    MissingEnd,
    /// An end marker (and maybe code) whose start marker is gone.
    MissingStart,
    /// Probe code with no marker around it (deleted or respelt).
    Unmarked,
    /// Cursor's Debug Mode instrumentation (`#region agent log`, its log file).
    CursorAgentLog,
    /// A loopback `/ingest` call no session here is known to own.
    IngestUrl,
}

impl FindingKind {
    /// Whether markers of ours are intact around it.
    pub fn is_whole(self) -> bool {
        matches!(self, FindingKind::Block)
    }

    /// How a person reads this kind of finding.
    pub fn describe(self) -> &'static str {
        match self {
            FindingKind::Block => "probe block",
            FindingKind::Retagged => "probe block whose markers were retagged",
            FindingKind::EmptyBlock => "probe markers around no probe code",
            FindingKind::MissingEnd => "probe whose end marker is gone",
            FindingKind::MissingStart => "probe whose start marker is gone",
            FindingKind::Unmarked => "probe code whose markers are gone",
            FindingKind::CursorAgentLog => "Cursor agent log probe",
            FindingKind::IngestUrl => "loopback ingest call",
        }
    }
}

/// One thing in a file that is, or was, a probe.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub file: String,
    /// 1-based: the start marker, else the first line of probe code, else
    /// the end marker.
    pub line: u32,
    pub kind: FindingKind,
    /// The probe's id, from its markers or its logged record.
    pub probe_id: Option<String>,
    /// The session its code writes to (else the one its markers name).
    pub session: Option<String>,
    /// The session its markers name, when that is not `session`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_session: Option<String>,
    /// The line, trimmed and cut to 120 characters.
    pub text: String,
}

/// What one line says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct LineClues {
    run_session: Option<String>,
    probe_tag: Option<String>,
    /// A loopback ingest call, with its token when the URL has one.
    ingest: Option<Option<String>>,
    cursor: bool,
}

impl LineClues {
    fn any(&self) -> bool {
        self.run_session.is_some()
            || self.probe_tag.is_some()
            || self.ingest.is_some()
            || self.cursor
    }
}

enum Seen {
    Marker(Marker),
    Code(LineClues),
}

/// A line the analysis keeps: its number, what it says and its text.
struct Noted {
    line: u32,
    seen: Seen,
    text: String,
}

/// Cheap test for a file that cannot hold anything `find` reports.
pub fn may_hold_findings(bytes: &[u8]) -> bool {
    const NEEDLES: &[&[u8]] = &[
        b"debug-probe",
        b"agent log",
        b"/ingest",
        b"/runs/",
        b"\\runs\\",
        b"probeId",
        b".cursor",
    ];
    NEEDLES
        .iter()
        .any(|needle| memchr::memmem::find(bytes, needle).is_some())
}

/// Everything `text` holds, in line order.
pub fn find(file: &str, text: &str, clues: &Clues) -> Vec<Finding> {
    let lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (u32::try_from(index + 1).unwrap_or(u32::MAX), line));
    find_lines(file, lines, clues)
}

/// Everything these numbered lines hold (a file's lines, or only those of
/// them that `may_hold_findings`: the others can add nothing), in order.
pub fn find_lines<'a>(
    file: &str,
    lines: impl IntoIterator<Item = (u32, &'a str)>,
    clues: &Clues,
) -> Vec<Finding> {
    let noted = note_lines(lines, clues);
    if noted.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut claimed = vec![false; noted.len()];
    let groups = pair_markers(&noted);

    for group in &groups {
        // The body: code lines between the markers, or within reach of a
        // lone marker up to the next marker.
        let body: Vec<usize> = (0..noted.len())
            .filter(|&i| matches!(noted[i].seen, Seen::Code(_)) && group.holds(&noted, i))
            .collect();
        let mut code_session = None;
        let mut code_tag = None;
        for &i in &body {
            claimed[i] = true;
            if let Seen::Code(c) = &noted[i].seen {
                code_session = code_session.or_else(|| session_of(c, clues));
                code_tag = code_tag.or_else(|| c.probe_tag.clone());
            }
        }
        let marker_tag = group.tag.clone().filter(|t| !t.is_empty());
        let session = code_session.clone().or_else(|| marker_tag.clone());
        let kind = match group.shape {
            Shape::Whole if code_session.is_some() && code_session != marker_tag => {
                FindingKind::Retagged
            }
            Shape::Whole if body.is_empty() => FindingKind::EmptyBlock,
            Shape::Whole => FindingKind::Block,
            Shape::StartOnly => FindingKind::MissingEnd,
            Shape::EndOnly => FindingKind::MissingStart,
        };
        // A block is reported at its start marker; a lone end marker at the
        // first line of the code it kept, where there is some.
        let at = match group.shape {
            Shape::EndOnly => body.first().copied().unwrap_or(group.first),
            _ => group.first,
        };
        out.push(Finding {
            file: file.to_string(),
            line: noted[at].line,
            kind,
            probe_id: Some(group.id.clone()).or(code_tag),
            marker_session: marker_tag.filter(|t| Some(t) != session.as_ref()),
            session,
            text: noted[at].text.clone(),
        });
    }

    // Code no marker claims: grouped into probes by distance, one finding
    // per probe id named in the group.
    let free: Vec<usize> = (0..noted.len())
        .filter(|&i| !claimed[i] && matches!(noted[i].seen, Seen::Code(_)))
        .collect();
    let mut cluster: Vec<usize> = Vec::new();
    for (n, &i) in free.iter().enumerate() {
        cluster.push(i);
        let next_far = free
            .get(n + 1)
            .is_none_or(|&j| noted[j].line - noted[i].line > WINDOW);
        if next_far {
            unmarked(file, &noted, &cluster, clues, &mut out);
            cluster.clear();
        }
    }
    out.sort();
    out
}

/// Reports a group of unclaimed code lines.
fn unmarked(file: &str, noted: &[Noted], cluster: &[usize], clues: &Clues, out: &mut Vec<Finding>) {
    let code = |i: usize| match &noted[i].seen {
        Seen::Code(c) => Some(c),
        Seen::Marker(_) => None,
    };
    let session = cluster
        .iter()
        .find_map(|&i| code(i).and_then(|c| session_of(c, clues)));
    // Other tools' probes are reported line by line: Cursor's, and loopback
    // ingest calls no session here owns. A lone `probeId` is ordinary code.
    for &i in cluster {
        let Some(c) = code(i) else { continue };
        if c.cursor {
            out.push(finding(
                file,
                &noted[i],
                FindingKind::CursorAgentLog,
                None,
                None,
            ));
        } else if c.ingest.is_some() && session_of(c, clues).is_none() && c.run_session.is_none() {
            out.push(finding(file, &noted[i], FindingKind::IngestUrl, None, None));
        }
    }
    let Some(session) = session else {
        return;
    };
    // The probe's own lines: its session's fingerprints and its tags.
    let cluster: Vec<usize> = cluster
        .iter()
        .copied()
        .filter(|&i| {
            code(i).is_some_and(|c| {
                session_of(c, clues).as_ref() == Some(&session)
                    || (c.probe_tag.is_some() && c.ingest.is_none() && !c.cursor)
            })
        })
        .collect();
    let cluster = &cluster[..];
    let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in cluster {
        if let Some(tag) = code(i).and_then(|c| c.probe_tag.as_deref()) {
            by_id.entry(tag).or_insert(i);
        }
    }
    if by_id.is_empty() && is_prose(file) {
        // Documentation quoting a run path (a captured screen, a log
        // location) runs nothing: only a logged record makes it a probe.
        return;
    }
    if by_id.is_empty() {
        let first = cluster
            .iter()
            .copied()
            .find(|&i| code(i).is_some_and(|c| session_of(c, clues).is_some()))
            .unwrap_or(cluster[0]);
        out.push(finding(
            file,
            &noted[first],
            FindingKind::Unmarked,
            None,
            Some(session),
        ));
        return;
    }
    // The probe's first code line: the earliest fingerprint line nearer to
    // its own tag than to another probe's.
    for (id, &tag_at) in &by_id {
        let first = cluster
            .iter()
            .copied()
            .filter(|&i| {
                by_id.values().all(|&other| {
                    noted[i].line.abs_diff(noted[tag_at].line)
                        <= noted[i].line.abs_diff(noted[other].line)
                })
            })
            .min()
            .unwrap_or(tag_at);
        out.push(finding(
            file,
            &noted[first],
            FindingKind::Unmarked,
            Some(id.to_string()),
            Some(session.clone()),
        ));
    }
}

/// Files that are read, not run: markdown, reStructuredText, AsciiDoc, text.
fn is_prose(file: &str) -> bool {
    let extension = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(
        extension.as_deref(),
        Some("md" | "markdown" | "rst" | "adoc" | "asciidoc" | "txt")
    )
}

fn finding(
    file: &str,
    noted: &Noted,
    kind: FindingKind,
    probe_id: Option<String>,
    session: Option<String>,
) -> Finding {
    Finding {
        file: file.to_string(),
        line: noted.line,
        kind,
        probe_id,
        session,
        marker_session: None,
        text: noted.text.clone(),
    }
}

fn session_of(clues_of_line: &LineClues, clues: &Clues) -> Option<String> {
    clues_of_line.run_session.clone().or_else(|| {
        let token = clues_of_line.ingest.as_ref()?.as_ref()?;
        clues
            .tokens
            .iter()
            .find(|(known, _)| known == token)
            .map(|(_, session)| session.clone())
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Whole,
    StartOnly,
    EndOnly,
}

/// Markers paired into blocks; a lone marker is a block with one end.
struct Group {
    id: String,
    tag: Option<String>,
    shape: Shape,
    /// Index (into the noted lines) of the first marker.
    first: usize,
    /// Index of the last marker (the same for a lone one).
    last: usize,
}

impl Group {
    /// Whether noted line `i` is this block's body.
    fn holds(&self, noted: &[Noted], i: usize) -> bool {
        let is_marker = |j: usize| matches!(noted[j].seen, Seen::Marker(_));
        match self.shape {
            Shape::Whole => i > self.first && i < self.last,
            Shape::StartOnly => {
                i > self.first
                    && noted[i].line - noted[self.first].line <= WINDOW
                    && !(self.first + 1..i).any(is_marker)
            }
            Shape::EndOnly => {
                i < self.last
                    && noted[self.last].line - noted[i].line <= WINDOW
                    && !(i + 1..self.last).any(is_marker)
            }
        }
    }
}

fn pair_markers(noted: &[Noted]) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut open: Vec<(String, String, usize)> = Vec::new();
    for (i, n) in noted.iter().enumerate() {
        match &n.seen {
            Seen::Marker(Marker::Start {
                probe_id,
                session_tag,
            }) => open.push((probe_id.clone(), session_tag.clone(), i)),
            Seen::Marker(Marker::End { probe_id }) => {
                match open.iter().rposition(|(id, _, _)| id == probe_id) {
                    Some(at) => {
                        // Starts opened after this block's start lost their ends.
                        for (id, tag, start) in open.drain(at + 1..) {
                            groups.push(lone_start(id, tag, start));
                        }
                        let (id, tag, start) = open.remove(at);
                        groups.push(Group {
                            id,
                            tag: Some(tag),
                            shape: Shape::Whole,
                            first: start,
                            last: i,
                        });
                    }
                    None => groups.push(Group {
                        id: probe_id.clone(),
                        tag: None,
                        shape: Shape::EndOnly,
                        first: i,
                        last: i,
                    }),
                }
            }
            Seen::Code(_) => {}
        }
    }
    for (id, tag, start) in open {
        groups.push(lone_start(id, tag, start));
    }
    groups
}

fn lone_start(id: String, tag: String, start: usize) -> Group {
    Group {
        id,
        tag: Some(tag),
        shape: Shape::StartOnly,
        first: start,
        last: start,
    }
}

/// The lines worth keeping: markers on comment lines, fingerprints and
/// foreign probes on code lines (Cursor's marker is a comment by nature).
fn note_lines<'a>(lines: impl IntoIterator<Item = (u32, &'a str)>, clues: &Clues) -> Vec<Noted> {
    let mut noted = Vec::new();
    for (number, line) in lines {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let keep = |seen| Noted {
            line: number,
            seen,
            text: trimmed.chars().take(TEXT_CHARS).collect(),
        };
        if let Some(marker) = parse_marker(trimmed) {
            noted.push(keep(Seen::Marker(marker)));
            continue;
        }
        let comment = is_comment(trimmed);
        let mut found = LineClues {
            cursor: comment
                && comment_body(trimmed).is_some_and(|b| b.starts_with("#region agent log")),
            ..LineClues::default()
        };
        if !comment {
            found.run_session = run_session(line, clues);
            found.probe_tag = probe_tag(line);
            found.ingest = ingest_call(line);
            found.cursor = cursor_log(line);
        }
        if found.any() {
            noted.push(keep(Seen::Code(found)));
        }
    }
    noted
}

/// Cursor's log file: `.cursor/debug-<hex>.log`.
fn cursor_log(line: &str) -> bool {
    line.match_indices(".cursor/debug-").any(|(at, needle)| {
        let rest = &line[at + needle.len()..];
        let hex = rest.chars().take_while(char::is_ascii_hexdigit).count();
        hex > 0 && rest[hex..].starts_with(".log")
    })
}

/// `<state dir>sessions/<id>/runs/` on the line, with `\` or `\\` as
/// separators too: the session id.
fn run_session(line: &str, clues: &Clues) -> Option<String> {
    let normalised;
    let line = if line.contains('\\') {
        normalised = line.replace("\\\\", "/").replace('\\', "/");
        normalised.as_str()
    } else {
        line
    };
    let mut rest = line;
    while let Some(at) = rest.find("sessions/") {
        let before = &rest[..at];
        let after = &rest[at + "sessions/".len()..];
        rest = after;
        if !clues
            .state_dirs
            .iter()
            .any(|dir| before.ends_with(dir.as_str()))
        {
            continue;
        }
        let id: String = after
            .chars()
            .take_while(|c| is_id_char(*c) || *c == '.')
            .collect();
        if !id.is_empty() && after[id.len()..].starts_with("/runs/") {
            return Some(id);
        }
    }
    None
}

/// `probeId` followed, within 8 characters that are not letters or digits,
/// by an id: `"probeId":"p3"`, `probeId: 'p3'`, `\"probeId\":\"p3\"`.
fn probe_tag(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(at) = rest.find("probeId") {
        rest = &rest[at + "probeId".len()..];
        let gap = rest
            .char_indices()
            .take_while(|(_, c)| !c.is_alphanumeric())
            .map(|(i, c)| i + c.len_utf8())
            .last()
            .unwrap_or(0);
        if gap == 0 || rest[..gap].chars().count() > 8 {
            continue;
        }
        let id: String = rest[gap..].chars().take_while(|c| is_id_char(*c)).collect();
        if !id.is_empty() {
            return Some(id);
        }
    }
    None
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
}

/// A loopback `/ingest` call (`127.0.0.1`, `localhost` or `[::1]`, any port,
/// with or without a token): `Some(token)`.
fn ingest_call(line: &str) -> Option<Option<String>> {
    for host in ["127.0.0.1", "localhost", "[::1]", "0.0.0.0"] {
        let mut rest = line;
        while let Some(at) = rest.find(host) {
            rest = &rest[at + host.len()..];
            let mut after = rest;
            if let Some(port) = after.strip_prefix(':') {
                let digits = port.chars().take_while(char::is_ascii_digit).count();
                if digits == 0 {
                    continue;
                }
                after = &port[digits..];
            }
            let Some(path) = after.strip_prefix("/ingest") else {
                continue;
            };
            match path.chars().next() {
                Some('/') => {
                    let token: String = path[1..].chars().take_while(|c| is_id_char(*c)).collect();
                    return Some((!token.is_empty()).then_some(token));
                }
                None | Some('?' | '"' | '\'' | '`' | ' ' | ')' | ',' | ';' | '#') => {
                    return Some(None)
                }
                Some(_) => continue,
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clues() -> Clues {
        Clues::new().with_token("tok123", "s1")
    }

    fn kinds(text: &str) -> Vec<(u32, FindingKind, Option<String>, Option<String>)> {
        find("f", text, &clues())
            .into_iter()
            .map(|f| (f.line, f.kind, f.probe_id, f.session))
            .collect()
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    const LOG: &str = "/w/.debug-sidecar/sessions/s1/runs/active.jsonl";

    fn body(id: &str) -> String {
        format!("    open(\"{LOG}\", \"a\").write(json.dumps({{\"probeId\": \"{id}\"}}))\n")
    }

    #[test]
    fn a_whole_block_is_one_finding_of_its_session() {
        let text = format!(
            "x = 1\n# #region debug-probe p1 s1\n{}# #endregion debug-probe p1\n",
            body("p1")
        );
        assert_eq!(kinds(&text), [(2, FindingKind::Block, s("p1"), s("s1"))]);
    }

    #[test]
    fn markers_around_no_probe_code_are_an_empty_block() {
        let text =
            "x = 1\n# #region debug-probe p1 s1\n    total = 0\n# #endregion debug-probe p1\n";
        assert_eq!(
            kinds(text),
            [(2, FindingKind::EmptyBlock, s("p1"), s("s1"))]
        );
        let text = "# #region debug-probe p2 s1\n# #endregion debug-probe p2\n";
        assert_eq!(
            kinds(text),
            [(1, FindingKind::EmptyBlock, s("p2"), s("s1"))]
        );
        assert!(!FindingKind::EmptyBlock.is_whole());
    }

    #[test]
    fn code_without_markers_is_found_by_its_fingerprints() {
        let text = format!("x = 1\n{}y = 2\n", body("p4"));
        assert_eq!(kinds(&text), [(2, FindingKind::Unmarked, s("p4"), s("s1"))]);
        // Respelt markers are no markers.
        let text = format!(
            "# #region debug_probe p4 s1\n{}# #endregion debug_probe p4\n",
            body("p4")
        );
        assert_eq!(kinds(&text), [(2, FindingKind::Unmarked, s("p4"), s("s1"))]);
        // Two probes next to each other stay two.
        let text = format!("{}{}", body("p1"), body("p2"));
        assert_eq!(
            kinds(&text),
            [
                (1, FindingKind::Unmarked, s("p1"), s("s1")),
                (2, FindingKind::Unmarked, s("p2"), s("s1"))
            ]
        );
    }

    #[test]
    fn a_lone_marker_takes_the_code_beside_it() {
        let text = format!("x = 0\n{}# #endregion debug-probe p2\n", body("p2"));
        assert_eq!(
            kinds(&text),
            [(2, FindingKind::MissingStart, s("p2"), s("s1"))]
        );
        let text = format!("# #region debug-probe p3 s1\n{}", body("p3"));
        assert_eq!(
            kinds(&text),
            [(1, FindingKind::MissingEnd, s("p3"), s("s1"))]
        );
        // A bare end marker names no session.
        assert_eq!(
            kinds("# #endregion debug-probe p9\n"),
            [(1, FindingKind::MissingStart, s("p9"), None)]
        );
    }

    #[test]
    fn a_retagged_block_belongs_to_the_session_its_code_writes_to() {
        let text = format!(
            "# #region debug-probe p1 other\n{}# #endregion debug-probe p1\n",
            body("p1")
        );
        let found = find("f", &text, &clues());
        assert_eq!(found[0].kind, FindingKind::Retagged);
        assert_eq!(found[0].session, s("s1"));
        assert_eq!(found[0].marker_session, s("other"));
        // Markers of another session around no fingerprint stay that
        // session's: markers around no probe code.
        let found = find(
            "f",
            "// #region debug-probe p1 other\nx()\n// #endregion debug-probe p1\n",
            &clues(),
        );
        assert_eq!(
            (found[0].kind, found[0].session.clone()),
            (FindingKind::EmptyBlock, s("other"))
        );
    }

    #[test]
    fn marker_text_in_strings_messages_and_prose_is_not_a_finding() {
        for text in [
            "message = \"#endregion debug-probe p1\"\n",
            "log({message: '#region debug-probe p1 s1'})\n",
            "Blocks run from `#region debug-probe <id> <session>` to `#endregion debug-probe <id>`.\n",
            "// to remove a probe delete from #region debug-probe p1 to its end\n",
            "// the log is .debug-sidecar/sessions/s1/runs/active.jsonl\n",
            "See `POST http://127.0.0.1:<port>/ingest/<token>` for browsers.\n",
            "const api = 'https://example.com/ingest/ok';\n",
            "record = {\"probeId\": \"p1\"}\n",
        ] {
            assert_eq!(kinds(text), [], "{text}");
        }
    }

    #[test]
    fn foreign_probes_and_tokens() {
        let text = "// #region agent log\nfetch('http://127.0.0.1:7242/ingest/abc',{})\n// #endregion\n\
                    fetch(`http://localhost:9/ingest`, {})\n\
                    fs.appendFileSync('/Users/x/app/.cursor/debug-3f2a1b.log', line)\n\
                    fetch('http://[::1]:4000/ingest/tok123', {body: JSON.stringify({probeId: 'p5'})})\n";
        assert_eq!(
            kinds(text),
            [
                (1, FindingKind::CursorAgentLog, None, None),
                (2, FindingKind::IngestUrl, None, None),
                (4, FindingKind::IngestUrl, None, None),
                (5, FindingKind::CursorAgentLog, None, None),
                (6, FindingKind::Unmarked, s("p5"), s("s1")),
            ]
        );
    }

    #[test]
    fn run_paths_with_any_separator_and_a_configured_state_dir() {
        let clues = Clues::new().with_state_dir("/tmp/state");
        for line in [
            "open(\"C:\\\\w\\\\.debug-sidecar\\\\sessions\\\\s2\\\\runs\\\\active.jsonl\")",
            "open('/tmp/state/sessions/s2/runs/active.jsonl')",
        ] {
            let found = find("f", line, &clues);
            assert_eq!(found.len(), 1, "{line}");
            assert_eq!(found[0].session, s("s2"));
        }
        assert!(find("f", "GET /api/sessions/s2/runs/ now", &clues).is_empty());
        // Prose quoting a run path is no probe; prose quoting a record is.
        let quoted = "  /tmp/w/.debug-sidecar/sessions/s2/runs/r1-abc.jsonl\n";
        assert!(find("README.md", quoted, &clues).is_empty());
        assert_eq!(find("run.sh", quoted, &clues).len(), 1);
    }
}
