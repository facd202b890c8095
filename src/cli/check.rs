//! `debug-sidecar check [paths...]`: fail when probes are left in the tree,
//! for a pre-commit hook or a CI step. A probe is found by its markers or by
//! what it does (its session's run path, ingest calls, its probe id), so a
//! block whose markers were deleted still fails the check.

use crate::core::escape::{inline, inline_cut};
use crate::engine::{Engine, EngineConfig};
use crate::workspace::committed::{tracked_files, warning};
use crate::workspace::scan::{go_leftover_imports, leftovers, scan_paths};
use crate::workspace::store::FileStore;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(paths: Vec<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let root = std::env::current_dir()?;
    for path in &paths {
        if !path.exists() {
            anyhow::bail!("{} does not exist", path.display());
        }
    }
    let config = EngineConfig::for_workspace(root.clone(), None)?;
    // A state directory committed to git is a leftover too (and is not read).
    let (named, committed) = tracked_files(&root, &config.state_dir);
    let committed = (committed > 0).then(|| warning(&root, &config.state_dir, &named, committed));
    let state_dir = config_relative(&root, &config.state_dir);
    let store = FileStore::new(&config.state_dir);
    let mut engine = Engine::new(config, Box::new(store));
    let mut target = engine.check_target();
    let logpoints: Vec<_> = engine
        .all_live_logpoints()
        .into_iter()
        .map(|(session, probe)| {
            json!({"sessionId": session, "probeId": probe.id, "file": probe.file, "line": probe.line})
        })
        .collect();
    // The Go files probes were placed in, under the paths given if any.
    let under_given = |file: &&String| {
        paths.is_empty()
            || paths
                .iter()
                .any(|p| root.join(file).starts_with(root.join(p)))
    };
    let go_files: Vec<String> = target.tracked.iter().filter(under_given).cloned().collect();
    // Paths given narrow the check to them; without any, the files the
    // ledgers track are read too, whatever the ignore rules say.
    let paths = if paths.is_empty() {
        vec![root.clone()]
    } else {
        target.tracked.clear();
        paths
    };
    let findings = scan_paths(&root, &paths, &target.tracked, &target.clues);
    let mut found = leftovers(&findings);
    found.extend(go_leftover_imports(&root, &go_files));
    found.sort();
    let clean = found.is_empty() && committed.is_none();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "clean": clean,
                "filesRead": findings.files_read,
                "leftovers": found,
                "committedState": committed,
                // In no file: listed, never a failure.
                "logpoints": logpoints,
            }))?
        );
    } else {
        if let Some(committed) = &committed {
            println!("{}: {committed}", inline(&state_dir));
        }
        for leftover in &found {
            // File names and the marked text are the repository's: escaped.
            println!(
                "{}:{}: {}",
                inline(&leftover.file),
                leftover.line,
                inline_cut(&leftover.detail, 300)
            );
        }
        if !logpoints.is_empty() {
            eprintln!(
                "debug-sidecar check: {} logpoint(s) in the session ledgers edit no file and do \
                 not fail the check (the agent's probe_ledger lists them)",
                logpoints.len()
            );
        }
        if found.is_empty() {
            eprintln!(
                "debug-sidecar check: no probes in {} file(s)",
                findings.files_read
            );
        } else {
            eprintln!(
                "debug-sidecar check: {} probe line(s) left; remove them before committing",
                found.len()
            );
        }
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn config_relative(root: &std::path::Path, dir: &std::path::Path) -> String {
    dir.strip_prefix(root)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}
