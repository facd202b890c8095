//! The workspace scan: walk the tree honouring `.gitignore` (the `ignore`
//! crate), find this session's probe markers, and report blocks that were
//! half removed.

use crate::core::machine::{FoundProbe, ScanReport, ScanScope};
use crate::core::markers::{parse_marker, Marker};
use ignore::WalkBuilder;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// Directories that never hold the user's code.
const SKIPPED_DIRS: &[&str] = &[".git", ".debug-sidecar"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    pub report: ScanReport,
    /// Start markers without an end, or ends without a start: `(file, line, id)`.
    pub half_removed: Vec<(String, u32, String)>,
}

pub fn scan_workspace(root: &Path, session_tag: &str) -> ScanOutcome {
    let mut found = Vec::new();
    let mut half_removed = Vec::new();
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .filter_entry(|e| !SKIPPED_DIRS.iter().any(|d| e.file_name() == *d))
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(bytes) = fs::read(entry.path()) else {
            continue;
        };
        if bytes.contains(&0) {
            continue; // binary
        }
        let text = String::from_utf8_lossy(&bytes);
        let relative = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        scan_text(&relative, &text, session_tag, &mut found, &mut half_removed);
    }
    ScanOutcome {
        report: ScanReport {
            scope: ScanScope::Workspace,
            found,
        },
        half_removed,
    }
}

fn scan_text(
    file: &str,
    text: &str,
    session_tag: &str,
    found: &mut Vec<FoundProbe>,
    half_removed: &mut Vec<(String, u32, String)>,
) {
    let mut open: HashMap<String, u32> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index as u32 + 1;
        match parse_marker(line) {
            Some(Marker::Start {
                probe_id,
                session_tag: tag,
            }) => {
                if tag == session_tag {
                    found.push(FoundProbe {
                        id: probe_id.clone(),
                        file: file.to_string(),
                        line: number,
                        language: None,
                    });
                }
                // Every session's starts, so another session's end is not
                // mistaken for a half-removed block.
                open.insert(probe_id, number);
            }
            Some(Marker::End { probe_id }) if open.remove(&probe_id).is_none() => {
                half_removed.push((file.to_string(), number, probe_id));
            }
            _ => {}
        }
    }
    for (id, line) in open {
        half_removed.push((file.to_string(), line, id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_our_markers_honours_gitignore_and_reports_half_blocks() {
        let root = std::env::temp_dir().join(format!("ds-scan-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("src/gen")).unwrap();
        fs::create_dir_all(root.join(".debug-sidecar")).unwrap();
        let block = "// #region debug-probe p1 me\nlog();\n// #endregion debug-probe p1\n";
        fs::write(root.join("src/a.js"), format!("a();\r\n{block}")).unwrap();
        fs::write(root.join("src/gen/b.js"), block).unwrap();
        fs::write(root.join("src/.gitignore"), "gen/\n").unwrap();
        fs::write(root.join(".debug-sidecar/c.js"), block).unwrap();
        fs::write(root.join("bin.dat"), b"\0# #region debug-probe p7 me").unwrap();
        fs::write(
            root.join("other.py"),
            "# #region debug-probe p2 someone-else\n# #endregion debug-probe p2\n",
        )
        .unwrap();
        fs::write(
            root.join("half.py"),
            "# #region debug-probe p3 me\nx = 1\n# #endregion debug-probe p4\n",
        )
        .unwrap();

        let outcome = scan_workspace(&root, "me");
        let mut found: Vec<_> = outcome
            .report
            .found
            .into_iter()
            .map(|f| (f.file, f.line, f.id))
            .collect();
        found.sort();
        assert_eq!(
            found,
            vec![
                ("half.py".to_string(), 1, "p3".to_string()),
                ("src/a.js".to_string(), 2, "p1".to_string()),
            ]
        );
        let mut half = outcome.half_removed;
        half.sort();
        assert_eq!(
            half,
            vec![
                ("half.py".to_string(), 1, "p3".to_string()),
                ("half.py".to_string(), 3, "p4".to_string()),
            ]
        );
        fs::remove_dir_all(root).unwrap();
    }
}
