//! The workspace scan (DESIGN section 7): walk the tree in parallel,
//! honouring `.gitignore` (the `ignore` crate), skipping the state directory
//! and binary files, and find what `core::findings` recognises: our probes
//! with or without their markers, half-removed blocks, other sessions'
//! probes and other tools' (Cursor's, loopback ingest calls).
//!
//! Files a probe was issued for or found in (the ledger's tracked files) are
//! always read too, whether ignored or behind a symlink, and reported by
//! their workspace path. A decision rescan (`index`) reads only those, the
//! files that held something last time and what changed since.

pub mod index;
mod stream;
pub mod texts;

use crate::core::findings::{Clues, Finding, FindingKind};
use crate::core::machine::{FoundProbe, ScanReport, ScanScope};
use crate::core::model::Placement;
use ignore::{WalkBuilder, WalkState};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use index::{ScanIndex, Stamp};

/// Directories that never hold the user's code.
const SKIPPED_DIRS: &[&str] = &[".git", ".debug-sidecar"];

/// A lone marker of ours (a start without its end, or an end without its
/// start) that is not attributed to the session asking.
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
    /// A loopback call to an `/ingest` endpoint no session here owns.
    IngestUrl,
    /// Our probe, placed by another debug session.
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

/// Everything a set of files holds, sorted by file and line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    pub found: Vec<Finding>,
    pub files_read: usize,
}

impl Findings {
    fn merge(&mut self, mut other: Findings) {
        self.found.append(&mut other.found);
        self.files_read += other.files_read;
    }

    fn sorted(mut self) -> Self {
        self.found.sort();
        self.found.dedup();
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    /// This session's probes, for the ledger.
    pub report: ScanReport,
    pub half_removed: Vec<HalfRemoved>,
    /// Other tools' probes and other sessions' probes.
    pub foreign: Vec<ForeignProbe>,
    /// Files the scan read.
    pub files_read: usize,
}

/// What a session's scan reads besides the walk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanTarget {
    pub root: PathBuf,
    pub clues: Clues,
    /// Workspace-relative files always read (the ledger's tracked files).
    pub tracked: Vec<String>,
    /// The state directory, never walked (wherever it is).
    pub state_dir: Option<PathBuf>,
}

impl ScanTarget {
    /// What a session's scans read and recognise: its run path under the
    /// state directory, its ingest token, its tracked files.
    pub fn for_session(
        root: &Path,
        state_dir: &Path,
        session_id: &str,
        tracked: Vec<String>,
    ) -> Self {
        let mut clues = Clues::new().with_state_dir(&state_dir.to_string_lossy());
        if let Some(token) = crate::workspace::ingest::existing_token(state_dir, session_id) {
            clues = clues.with_token(&token, session_id);
        }
        ScanTarget {
            root: root.to_path_buf(),
            clues,
            tracked,
            state_dir: Some(state_dir.to_path_buf()),
        }
    }
}

/// Scan the whole workspace plus the tracked files, and the index of what it
/// saw for the next decision rescan.
pub fn scan_workspace(target: &ScanTarget) -> (Findings, ScanIndex) {
    let (mut findings, mut index) = walk(
        &target.root,
        std::slice::from_ref(&target.root),
        &target.clues,
        target.state_dir.as_deref(),
    );
    let extra: Vec<String> = target
        .tracked
        .iter()
        .filter(|file| !index.contains_file(file))
        .cloned()
        .collect();
    let tracked = read_files(&target.root, &extra, &target.clues);
    index.mark_hot(&tracked.found);
    findings.merge(tracked);
    (findings.sorted(), index)
}

/// A session's rescan (`full`: the whole walk; else the decision rescan
/// through the index in `state_dir`), split into its probes and the rest.
pub fn rescan_session(
    state_dir: &Path,
    target: &ScanTarget,
    session_id: &str,
    full: bool,
) -> ScanOutcome {
    let (findings, _) = index::rescan(state_dir, target, full);
    ScanOutcome {
        files_read: findings.files_read,
        ..outcome_for(&findings.found, session_id, ScanScope::Workspace)
    }
}

/// Split findings into this session's probes and everything else.
pub fn outcome_for(findings: &[Finding], session: &str, scope: ScanScope) -> ScanOutcome {
    let mut found = Vec::new();
    let mut orphans = Vec::new();
    let mut half_removed = Vec::new();
    let mut foreign = Vec::new();
    for f in findings {
        let ours = f.session.as_deref() == Some(session);
        let lone = matches!(f.kind, FindingKind::MissingStart | FindingKind::MissingEnd);
        if ours {
            found.push(found_probe(f));
        }
        match f.kind {
            // Its lone markers are listed too, as editors show them.
            _ if ours && !lone => {}
            FindingKind::MissingStart | FindingKind::MissingEnd => {
                if !ours && f.kind == FindingKind::MissingStart && f.session.is_none() {
                    // A bare end marker: ours when the ledger knows its id.
                    orphans.push(found_probe(f));
                }
                half_removed.push(HalfRemoved {
                    file: f.file.clone(),
                    line: f.line,
                    probe_id: f.probe_id.clone().unwrap_or_default(),
                });
            }
            FindingKind::CursorAgentLog | FindingKind::IngestUrl => foreign.push(ForeignProbe {
                file: f.file.clone(),
                line: f.line,
                kind: if f.kind == FindingKind::CursorAgentLog {
                    ForeignKind::CursorAgentLog
                } else {
                    ForeignKind::IngestUrl
                },
                text: f.text.clone(),
            }),
            FindingKind::Block
            | FindingKind::Retagged
            | FindingKind::EmptyBlock
            | FindingKind::Unmarked => foreign.push(ForeignProbe {
                file: f.file.clone(),
                line: f.line,
                kind: ForeignKind::OtherSession,
                text: format!(
                    "debug-probe {} of session {}",
                    f.probe_id.as_deref().unwrap_or("?"),
                    f.session.as_deref().unwrap_or("?")
                ),
            }),
        }
    }
    half_removed.sort();
    foreign.sort();
    ScanOutcome {
        report: ScanReport {
            scope,
            found,
            orphans,
        },
        half_removed,
        foreign,
        files_read: 0,
    }
}

fn found_probe(f: &Finding) -> FoundProbe {
    FoundProbe {
        // Code that names no probe is kept under a name for its place.
        id: f
            .probe_id
            .clone()
            .unwrap_or_else(|| format!("code@{}:{}", f.file, f.line)),
        file: f.file.clone(),
        line: f.line,
        language: None,
        trace: Some(f.kind),
    }
}

/// Scan files and directories for `check` (walked in parallel, `.gitignore`
/// honoured), plus `extra` workspace-relative files read whatever the ignore
/// rules say; paths in the findings are relative to `root` when inside it.
pub fn scan_paths(root: &Path, paths: &[PathBuf], extra: &[String], clues: &Clues) -> Findings {
    let (mut findings, index) = walk(root, paths, clues, None);
    let extra: Vec<String> = extra
        .iter()
        .filter(|file| !index.contains_file(file))
        .cloned()
        .collect();
    findings.merge(read_files(root, &extra, clues));
    findings.sorted()
}

/// The gitignore-aware parallel walk: findings and the stamps of every file
/// and directory it saw.
fn walk(
    root: &Path,
    paths: &[PathBuf],
    clues: &Clues,
    skip: Option<&Path>,
) -> (Findings, ScanIndex) {
    let Some((first, rest)) = paths.split_first() else {
        return (Findings::default(), ScanIndex::default());
    };
    let mut builder = WalkBuilder::new(first);
    for path in rest {
        builder.add(path);
    }
    configure(&mut builder, skip);
    let all = Mutex::new((Findings::default(), ScanIndex::default()));
    builder.build_parallel().run(|| {
        let all = &all;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            let file = relative(root, entry.path());
            let stamp = entry.metadata().ok().map(|m| Stamp::of(&m));
            if kind.is_dir() {
                if let (Some(stamp), Ok(mut all)) = (stamp, all.lock()) {
                    all.1.insert_dir(&file, stamp);
                }
                return WalkState::Continue;
            }
            if !kind.is_file() {
                return WalkState::Continue;
            }
            let found = stream::scan_file(entry.path(), &file, clues).unwrap_or_default();
            if let Ok(mut all) = all.lock() {
                let (findings, index) = &mut *all;
                if let Some(stamp) = stamp {
                    index.insert_file(&file, stamp);
                }
                if !found.is_empty() {
                    index.hot.insert(file);
                }
                findings.files_read += 1;
                findings.found.extend(found);
            }
            WalkState::Continue
        })
    });
    let (findings, index) = all
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    (findings.sorted(), index)
}

/// The walker's settings, shared by the full walk and the index's walks of
/// changed directories so both see the same files.
fn configure(builder: &mut WalkBuilder, skip: Option<&Path>) {
    configure_towards(builder, skip, None);
}

/// `configure`, walking only the directories on the way to `towards` when
/// it is given.
fn configure_towards(builder: &mut WalkBuilder, skip: Option<&Path>, towards: Option<PathBuf>) {
    let skip = skip.map(Path::to_path_buf);
    builder
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .parents(true)
        .filter_entry(move |e| {
            !SKIPPED_DIRS.iter().any(|d| e.file_name() == *d)
                && skip.as_deref().is_none_or(|skip| e.path() != skip)
                && towards
                    .as_deref()
                    .is_none_or(|way| way.starts_with(e.path()))
        });
}

/// Where a workspace-relative file sits for the walk: behind a symlink (its
/// real path is elsewhere), skipped by the ignore rules, or in the tree. For
/// a file not there yet, its nearest existing directory is judged.
pub fn placement(root: &Path, file: &str, state_dir: Option<&Path>) -> Placement {
    let path = root.join(file);
    // The file may not be there yet: judge the nearest part of its path
    // that is, and the rest as written.
    let Some(there) = path.ancestors().find(|p| p.exists()) else {
        return Placement::InTree;
    };
    if let (Ok(real_root), Ok(real)) = (root.canonicalize(), there.canonicalize()) {
        let rest = path.strip_prefix(there).unwrap_or(Path::new(""));
        let expected = real_root.join(there.strip_prefix(root).unwrap_or(Path::new("")));
        if real != expected {
            return Placement::Linked {
                real: real.join(rest).to_string_lossy().into_owned(),
            };
        }
    }
    let path = there.to_path_buf();
    // Walk only the directories on the way to the file, with the walk's rules.
    let mut builder = WalkBuilder::new(root);
    configure_towards(&mut builder, state_dir, Some(path.clone()));
    if builder.build().flatten().any(|e| e.path() == path) {
        Placement::InTree
    } else {
        Placement::Ignored
    }
}

/// Read these workspace-relative files (through symlinks: a tracked file is
/// read wherever its workspace path leads), reported by their workspace path.
pub fn read_files(root: &Path, files: &[String], clues: &Clues) -> Findings {
    let mut findings = Findings::default();
    for file in files {
        let Some(found) = stream::scan_file(&root.join(file), file, clues) else {
            continue; // a deleted file holds no probe
        };
        findings.files_read += 1;
        findings.found.extend(found);
    }
    findings.sorted()
}

/// One thing `check` reports: anything a commit should not contain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Leftover {
    pub file: String,
    pub line: u32,
    /// `debug-probe`, `debug-probe-end`, `debug-probe-retagged`,
    /// `debug-probe-unmarked`, `cursor-agent-log`, `ingest-url` or
    /// `go-unused-import`.
    pub kind: &'static str,
    pub detail: String,
}

/// Every probe of any session, with or without markers, and every foreign
/// probe, in file order.
pub fn leftovers(findings: &Findings) -> Vec<Leftover> {
    let mut out: Vec<Leftover> = findings
        .found
        .iter()
        .map(|f| {
            let id = f.probe_id.as_deref().unwrap_or("?");
            let session = f.session.as_deref().unwrap_or("?");
            let (kind, detail) = match f.kind {
                FindingKind::Block => ("debug-probe", format!("debug-probe {id} (session {session})")),
                FindingKind::EmptyBlock => (
                    "debug-probe",
                    format!("debug-probe {id} (session {session}), markers around no probe code"),
                ),
                FindingKind::MissingEnd => (
                    "debug-probe",
                    format!("debug-probe {id} (session {session}), its end marker is missing"),
                ),
                FindingKind::MissingStart => (
                    "debug-probe-end",
                    match &f.session {
                        Some(s) => format!(
                            "end marker of debug-probe {id} without its start (its code, of session {s}, is still there)"
                        ),
                        None => format!("end marker of debug-probe {id} without its start"),
                    },
                ),
                FindingKind::Retagged => (
                    "debug-probe-retagged",
                    format!(
                        "debug-probe {id} of session {session}, its markers retagged to {}",
                        f.marker_session.as_deref().unwrap_or("?")
                    ),
                ),
                FindingKind::Unmarked => (
                    "debug-probe-unmarked",
                    match &f.probe_id {
                        Some(id) => format!(
                            "code of debug-probe {id} (session {session}) with its markers gone"
                        ),
                        None => format!("probe code of session {session} with its markers gone"),
                    },
                ),
                FindingKind::CursorAgentLog => {
                    ("cursor-agent-log", format!("Cursor agent log block: {}", f.text))
                }
                FindingKind::IngestUrl => ("ingest-url", format!("loopback ingest URL: {}", f.text)),
            };
            Leftover {
                file: f.file.clone(),
                line: f.line,
                kind,
                detail,
            }
        })
        .collect();
    out.sort();
    out
}

/// Imports that Go probe blocks needed and nothing in their file uses now
/// (`core::go_imports`), in the Go files among `files` (workspace-relative:
/// the files the ledgers name): a removed block left them, and Go does not
/// build the file. A file over 4 MiB, missing or not text is skipped.
pub fn go_leftover_imports(root: &Path, files: &[String]) -> Vec<Leftover> {
    use std::io::Read;
    const MOST: u64 = 4 << 20;
    let mut out = Vec::new();
    for file in files.iter().filter(|f| f.ends_with(".go")) {
        let mut text = String::new();
        let read = std::fs::File::open(root.join(file))
            .and_then(|f| f.take(MOST + 1).read_to_string(&mut text));
        if read.is_err() || text.len() as u64 > MOST {
            continue;
        }
        for unused in crate::core::go_imports::unused_probe_imports(&text) {
            out.push(Leftover {
                file: file.clone(),
                line: unused.line,
                kind: "go-unused-import",
                detail: format!(
                    "import \"{}\" is used by nothing now: a removed probe block needed it, and \
                     Go does not build the file (goimports -w {} drops it)",
                    unused.path,
                    crate::core::escape::inline(file)
                ),
            });
        }
    }
    out
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn target(root: &Path, tracked: &[&str]) -> ScanTarget {
        ScanTarget {
            root: root.to_path_buf(),
            clues: Clues::new(),
            tracked: tracked.iter().map(|s| s.to_string()).collect(),
            state_dir: None,
        }
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

        let (findings, index) = scan_workspace(&target(&root, &[]));
        let outcome = outcome_for(&findings.found, "me", ScanScope::Workspace);
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
        assert!(index.hot.contains("src/a.js") && !index.contains_file("src/gen/b.js"));

        // A tracked file is read though it is ignored.
        let (findings, _) = scan_workspace(&target(&root, &["src/gen/b.js"]));
        let outcome = outcome_for(&findings.found, "me", ScanScope::Workspace);
        assert_eq!(outcome.report.found.len(), 2);
        fs::remove_dir_all(root).unwrap();
    }
}
