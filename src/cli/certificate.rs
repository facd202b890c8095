//! `debug-sidecar certificate` writes the fix certificate of an ended
//! session; `debug-sidecar check --certificate FILE` verifies one against
//! the tree, for a reviewer or a CI step.

use super::Where;
use crate::core::escape::{inline, inline_cut};
use crate::engine::{Engine, EngineConfig};
use crate::workspace::store::FileStore;
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

/// A certificate larger than this is not one the sidecar wrote.
const MAX_CERTIFICATE: u64 = 64 << 20;

pub fn write(place: Where, out: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    let session = place.session.clone();
    let engine = place.engine()?;
    let certificate = engine.certificate(session.as_deref())?;
    let mut text = serde_json::to_string_pretty(&certificate)?;
    text.push('\n');
    match out {
        Some(file) => {
            std::fs::write(&file, &text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
            eprintln!(
                "debug-sidecar certificate: session {}, {} hypothesis(es), {} run(s), {} probe(s) \
                 removed; wrote {} ({})",
                inline_cut(&certificate.session_id, 80),
                certificate.hypotheses.len(),
                certificate.runs.len(),
                certificate.cleanup.probes.len(),
                inline(&file.to_string_lossy()),
                certificate.content_hash
            );
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn check(file: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let handle = std::fs::File::open(file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let mut text = String::new();
    handle
        .take(MAX_CERTIFICATE + 1)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    if text.len() as u64 > MAX_CERTIFICATE {
        anyhow::bail!(
            "{} is larger than 64 MiB: not a fix certificate",
            file.display()
        );
    }
    // From a subfolder, the workspace's root: its state directory holds
    // the runs the cited lines are checked in.
    let root = crate::engine::workspace_root(&std::env::current_dir()?);
    let config = EngineConfig::for_workspace(root, None)?;
    let store = FileStore::new(&config.state_dir);
    let mut engine = Engine::new(config, Box::new(store));
    let check = engine.check_certificate(&text);
    if json {
        println!("{}", serde_json::to_string_pretty(&check)?);
    } else {
        // The certificate's texts and the tree's file names are untrusted.
        for failure in &check.failures {
            println!("{}", inline_cut(failure, 400));
        }
        for note in &check.notes {
            eprintln!("debug-sidecar check: {}", inline_cut(note, 400));
        }
        let session = check.session_id.as_deref().unwrap_or("?");
        if check.valid {
            eprintln!(
                "debug-sidecar check: the certificate of session {} holds ({} file(s) read)",
                inline_cut(session, 80),
                check.files_read
            );
        } else {
            eprintln!(
                "debug-sidecar check: the certificate of session {} does not hold: {} failure(s)",
                inline_cut(session, 80),
                check.failures.len()
            );
        }
    }
    Ok(if check.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
