//! The workspace scan (DESIGN section 7): walk the tree in parallel,
//! honouring `.gitignore` (the `ignore` crate), skipping the state directory
//! and binary files, and find probe markers (ours and other sessions'),
//! blocks that were half removed, and other tools' probes: Cursor's
//! `#region agent log` blocks and loopback `/ingest/` URLs.

use crate::core::machine::{FoundProbe, ScanReport, ScanScope};
use crate::core::markers::{parse_marker, Marker};
use ignore::{WalkBuilder, WalkState};
use memchr::memmem;
use serde::Serialize;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Directories that never hold the user's code.
const SKIPPED_DIRS: &[&str] = &[".git", ".debug-sidecar"];
/// Bytes looked at to tell a binary file (a NUL among them), as ripgrep does.
const BINARY_SNIFF: usize = 8 * 1024;
/// A file holding none of these cannot hold anything the scan reports.
const NEEDLES: &[&[u8]] = &[b"debug-probe", b"agent log", b"/ingest/"];

/// A marker of any session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Marked {
    pub file: String,
    pub line: u32,
    pub probe_id: String,
    pub session_tag: String,
}

/// A start marker without its end, or an end without its start.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HalfRemoved {
    pub file: String,
    pub line: u32,
    pub probe_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ForeignKind {
    /// Cursor's Debug Mode instrumentation (`#region agent log`).
    CursorAgentLog,
    /// A loopback URL posting to an `/ingest/` endpoint outside our blocks.
    IngestUrl,
    /// Our marker, placed by another debug session.
    OtherSession,
}

impl ForeignKind {
    pub fn describe(self) -> &'static str {
        match self {
            ForeignKind::CursorAgentLog => "Cursor agent log block",
            ForeignKind::IngestUrl => "loopback ingest URL",
            ForeignKind::OtherSession => "debug-probe of another session",
        }
    }
}

/// A probe no ledger of this session owns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForeignProbe {
    pub file: String,
    pub line: u32,
    pub kind: ForeignKind,
    /// The marked line, trimmed and cut to 120 characters.
    pub text: String,
}

/// Everything one file or tree holds, sorted by file and line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    pub markers: Vec<Marked>,
    pub half_removed: Vec<HalfRemoved>,
    /// Cursor blocks and ingest URLs (other sessions' markers are in `markers`).
    pub foreign: Vec<ForeignProbe>,
    pub files_read: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    /// This session's markers, for the ledger.
    pub report: ScanReport,
    pub half_removed: Vec<HalfRemoved>,
    /// Other tools' probes and other sessions' markers.
    pub foreign: Vec<ForeignProbe>,
}

/// Scan the whole workspace for one session.
pub fn scan_workspace(root: &Path, session_tag: &str) -> ScanOutcome {
    let findings = scan_paths(root, &[root.to_path_buf()]);
    outcome_for(findings, session_tag)
}

/// Scan only these files (relative to `root`), for a rescan after an edit:
/// probes in other files keep their state.
pub fn scan_files(root: &Path, files: &[String], session_tag: &str) -> ScanOutcome {
    let mut findings = Findings::default();
    for file in files {
        let Ok(bytes) = fs::read(root.join(file)) else {
            continue; // a deleted file holds no probe
        };
        findings.files_read += 1;
        if !is_binary(&bytes) {
            scan_text(file, &String::from_utf8_lossy(&bytes), &mut findings);
        }
    }
    let mut outcome = outcome_for(findings, session_tag);
    outcome.report.scope = ScanScope::Files(files.to_vec());
    outcome
}

/// Split findings into this session's markers and everything foreign.
pub fn outcome_for(findings: Findings, session_tag: &str) -> ScanOutcome {
    let mut found = Vec::new();
    let mut foreign = findings.foreign;
    for marker in findings.markers {
        if marker.session_tag == session_tag {
            found.push(FoundProbe {
                id: marker.probe_id,
                file: marker.file,
                line: marker.line,
                language: None,
            });
        } else {
            foreign.push(ForeignProbe {
                file: marker.file,
                line: marker.line,
                kind: ForeignKind::OtherSession,
                text: format!(
                    "debug-probe {} of session {}",
                    marker.probe_id, marker.session_tag
                ),
            });
        }
    }
    foreign.sort();
    ScanOutcome {
        report: ScanReport {
            scope: ScanScope::Workspace,
            found,
        },
        half_removed: findings.half_removed,
        foreign,
    }
}

/// Scan files and directories (walked in parallel, `.gitignore` honoured);
/// paths in the findings are relative to `root` when inside it.
pub fn scan_paths(root: &Path, paths: &[PathBuf]) -> Findings {
    let Some((first, rest)) = paths.split_first() else {
        return Findings::default();
    };
    let mut builder = WalkBuilder::new(first);
    for path in rest {
        builder.add(path);
    }
    builder
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .filter_entry(|e| !SKIPPED_DIRS.iter().any(|d| e.file_name() == *d));
    let all = Mutex::new(Findings::default());
    builder.build_parallel().run(|| {
        let all = &all;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(bytes) = read_text_file(entry.path()) else {
                return WalkState::Continue;
            };
            let mut findings = Findings {
                files_read: 1,
                ..Findings::default()
            };
            if NEEDLES.iter().any(|n| memmem::find(&bytes, n).is_some()) {
                let file = relative(root, entry.path());
                scan_text(&file, &String::from_utf8_lossy(&bytes), &mut findings);
            }
            if let Ok(mut all) = all.lock() {
                all.markers.append(&mut findings.markers);
                all.half_removed.append(&mut findings.half_removed);
                all.foreign.append(&mut findings.foreign);
                all.files_read += findings.files_read;
            }
            WalkState::Continue
        })
    });
    let mut findings = all
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    findings.markers.sort();
    findings.half_removed.sort();
    findings.foreign.sort();
    findings
}

/// One thing `check` reports: anything a commit should not contain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Leftover {
    pub file: String,
    pub line: u32,
    /// `debug-probe`, `debug-probe-end`, `cursor-agent-log` or `ingest-url`.
    pub kind: &'static str,
    pub detail: String,
}

/// Every probe of any session and every foreign probe, in file order.
pub fn leftovers(findings: &Findings) -> Vec<Leftover> {
    let half = |file: &str, line: u32| {
        findings
            .half_removed
            .iter()
            .any(|h| h.file == file && h.line == line)
    };
    let mut out: Vec<Leftover> = findings
        .markers
        .iter()
        .map(|m| Leftover {
            file: m.file.clone(),
            line: m.line,
            kind: "debug-probe",
            detail: format!(
                "debug-probe {} (session {}){}",
                m.probe_id,
                m.session_tag,
                if half(&m.file, m.line) {
                    ", its end marker is missing"
                } else {
                    ""
                }
            ),
        })
        .collect();
    for h in &findings.half_removed {
        if !findings
            .markers
            .iter()
            .any(|m| m.file == h.file && m.line == h.line)
        {
            out.push(Leftover {
                file: h.file.clone(),
                line: h.line,
                kind: "debug-probe-end",
                detail: format!("end marker of debug-probe {} without its start", h.probe_id),
            });
        }
    }
    for f in &findings.foreign {
        out.push(Leftover {
            file: f.file.clone(),
            line: f.line,
            kind: match f.kind {
                ForeignKind::CursorAgentLog => "cursor-agent-log",
                _ => "ingest-url",
            },
            detail: format!("{}: {}", f.kind.describe(), f.text),
        });
    }
    out.sort();
    out
}

/// A file's bytes, unless it is binary (a NUL in its first 8 KiB, read
/// before the rest so a large binary file costs no more than that).
fn read_text_file(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = fs::File::open(path).ok()?;
    let mut head = vec![0u8; BINARY_SNIFF];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(_) => return None,
        }
    }
    head.truncate(filled);
    if is_binary(&head) {
        return None;
    }
    if filled == BINARY_SNIFF {
        file.read_to_end(&mut head).ok()?;
    }
    Some(head)
}

fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF)]).is_some()
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Find markers, half-removed blocks and foreign probes in one file's text.
/// Lines end at `\n`; a `\r` before it is ignored.
pub fn scan_text(file: &str, text: &str, findings: &mut Findings) {
    let mut open: HashMap<String, u32> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index as u32 + 1;
        match parse_marker(line) {
            Some(Marker::Start {
                probe_id,
                session_tag,
            }) => {
                findings.markers.push(Marked {
                    file: file.to_string(),
                    line: number,
                    probe_id: probe_id.clone(),
                    session_tag,
                });
                open.insert(probe_id, number);
            }
            Some(Marker::End { probe_id }) => {
                if open.remove(&probe_id).is_none() {
                    findings.half_removed.push(HalfRemoved {
                        file: file.to_string(),
                        line: number,
                        probe_id,
                    });
                }
            }
            None => {
                // Inside one of our blocks an ingest URL is ours.
                if let Some(kind) = foreign_kind(line, !open.is_empty()) {
                    findings.foreign.push(ForeignProbe {
                        file: file.to_string(),
                        line: number,
                        kind,
                        text: line.trim().chars().take(120).collect(),
                    });
                }
            }
        }
    }
    for (probe_id, line) in open {
        findings.half_removed.push(HalfRemoved {
            file: file.to_string(),
            line,
            probe_id,
        });
    }
}

fn foreign_kind(line: &str, inside_our_block: bool) -> Option<ForeignKind> {
    if line.contains("#region agent log") {
        return Some(ForeignKind::CursorAgentLog);
    }
    let loopback = ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|host| line.contains(host));
    (!inside_our_block && loopback && line.contains("/ingest/")).then_some(ForeignKind::IngestUrl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Findings {
        let mut findings = Findings::default();
        scan_text("f", text, &mut findings);
        findings
    }

    #[test]
    fn markers_in_every_comment_syntax_and_crlf() {
        let text = "a\r\n// #region debug-probe p1 me\r\nx\r\n// #endregion debug-probe p1\r\n\
                    # #region debug-probe p2 me\n# #endregion debug-probe p2\n\
                    -- #region debug-probe p3 me\n-- #endregion debug-probe p3\n\
                    ; #region debug-probe p4 me\n; #endregion debug-probe p4\n\
                    % #region debug-probe p5 me\n% #endregion debug-probe p5\n\
                    <!-- #region debug-probe p6 me -->\n<!-- #endregion debug-probe p6 -->\n\
                    /* #region debug-probe p7 me */\n/* #endregion debug-probe p7 */\n";
        let findings = scan(text);
        let ids: Vec<(u32, &str)> = findings
            .markers
            .iter()
            .map(|m| (m.line, m.probe_id.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                (2, "p1"),
                (5, "p2"),
                (7, "p3"),
                (9, "p4"),
                (11, "p5"),
                (13, "p6"),
                (15, "p7")
            ]
        );
        assert!(findings.markers.iter().all(|m| m.session_tag == "me"));
        assert!(findings.half_removed.is_empty() && findings.foreign.is_empty());
    }

    #[test]
    fn foreign_probes_are_recognised_and_ours_are_not() {
        let text = "// #region agent log\nfetch('http://127.0.0.1:7242/ingest/abc',{})\n// #endregion\n\
                    // #region debug-probe p1 me\nfetch('http://127.0.0.1:9/ingest/tok')\n// #endregion debug-probe p1\n\
                    const api = 'https://example.com/ingest/ok';\n";
        let findings = scan(text);
        let kinds: Vec<(u32, ForeignKind)> =
            findings.foreign.iter().map(|f| (f.line, f.kind)).collect();
        assert_eq!(
            kinds,
            [
                (1, ForeignKind::CursorAgentLog),
                (2, ForeignKind::IngestUrl)
            ]
        );
    }

    #[test]
    fn half_removed_blocks_are_reported_both_ways() {
        let findings = scan("# #region debug-probe p3 me\nx = 1\n# #endregion debug-probe p4\n");
        let half: Vec<(u32, &str)> = findings
            .half_removed
            .iter()
            .map(|h| (h.line, h.probe_id.as_str()))
            .collect();
        assert_eq!(half, [(3, "p4"), (1, "p3")]);
    }

    #[test]
    fn the_walk_honours_gitignore_skips_state_and_binaries_and_splits_sessions() {
        let root = std::env::temp_dir().join(format!("ds-scan-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("src/gen/deep")).unwrap();
        fs::create_dir_all(root.join(".debug-sidecar")).unwrap();
        let block = "// #region debug-probe p1 me\nlog();\n// #endregion debug-probe p1\n";
        fs::write(root.join("src/a.js"), format!("a();\r\n{block}")).unwrap();
        fs::write(root.join("src/gen/b.js"), block).unwrap();
        fs::write(root.join("src/gen/deep/c.js"), block).unwrap();
        fs::write(root.join("src/.gitignore"), "gen/\n").unwrap();
        fs::write(root.join("src/gen/.gitignore"), "!deep/\n").unwrap();
        fs::write(root.join(".debug-sidecar/c.js"), block).unwrap();
        fs::write(root.join("bin.dat"), b"\0# #region debug-probe p7 me").unwrap();
        fs::write(
            root.join("other.py"),
            "# #region debug-probe p2 someone-else\n# #endregion debug-probe p2\n",
        )
        .unwrap();

        let outcome = scan_workspace(&root, "me");
        let found: Vec<(String, u32, String)> = outcome
            .report
            .found
            .into_iter()
            .map(|f| (f.file, f.line, f.id))
            .collect();
        assert_eq!(found, [("src/a.js".to_string(), 2, "p1".to_string())]);
        let foreign: Vec<(String, ForeignKind)> = outcome
            .foreign
            .into_iter()
            .map(|f| (f.file, f.kind))
            .collect();
        assert_eq!(
            foreign,
            [("other.py".to_string(), ForeignKind::OtherSession)]
        );
        fs::remove_dir_all(root).unwrap();
    }
}
