//! The hit table of a run (issue 31): the summary's probes joined with the
//! ledger's probes of the run's round, each with no value judged from the
//! run's records (`core::hits`) and the times of the files they name.

use super::*;
use crate::core::hits::{self, FileTimes, MarkSeen, NoHitRow, RunFacts};
use crate::core::model::{DebugSession, ProbeState};
use crate::core::rates::Attempts;
use crate::workspace::logread::{LogSummary, ProbeFigures};
use std::collections::HashSet;
use std::path::Path;

/// What a Proceed kickoff tells of the round just closed (`closed_run`).
#[derive(Debug, Clone, Default)]
pub(super) struct ClosedRun {
    pub(super) no_hits: Vec<NoHitRow>,
    pub(super) attempts: Option<Attempts>,
    pub(super) marks: Vec<MarkSeen>,
    pub(super) marks_total: u64,
}

/// When `path` last changed, in ms since the epoch.
fn changed_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::symlink_metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// When the recorded program's executable was built, when it names a file
/// inside the workspace (`./target/debug/app`; never a bare command name,
/// never a file outside).
fn executable_built_ms(root: &Path, executable: &str) -> Option<u64> {
    if !executable.contains('/') {
        return None;
    }
    let root = root.canonicalize().ok()?;
    let path = root.join(executable).canonicalize().ok()?;
    if !path.starts_with(&root) || !path.is_file() {
        return None;
    }
    changed_ms(&path)
}

/// Fills in the hit table of `run` (a run of `session`) on `summary`:
/// per listed probe its hits and failures, and a row with its verdict for
/// each probe of the run's round that logged no value.
pub(super) fn fill_table(
    root: &Path,
    session: Option<&DebugSession>,
    run: &str,
    summary: &mut LogSummary,
    facts: &RunFacts,
) {
    for figures in &mut summary.probes {
        let failed = facts.failures.get(&figures.probe_id).map_or(0, |f| f.0);
        figures.failed = failed.min(figures.count);
        figures.hits = figures.count - figures.failed;
    }
    let Some(session) = session else {
        return;
    };
    let Some(round) = session.run(run).map(|r| r.round) else {
        return;
    };
    let probes: Vec<&Probe> = session
        .probes
        .iter()
        // One removed since (by the fix, the cleanup) is judged by the
        // run's records like one on disk: it was seen on disk before.
        .filter(|p| p.round <= round)
        .collect();
    let hits_of = |summary: &LogSummary, id: &str| {
        summary
            .probes
            .iter()
            .find(|f| f.probe_id == id)
            .map_or(0, |f| f.hits)
    };
    let logged_files: HashSet<&str> = probes
        .iter()
        .filter(|p| hits_of(summary, &p.id) > 0)
        .map(|p| p.file.as_str())
        .collect();
    let built = facts
        .programs
        .last()
        .and_then(|p| p.executable.as_deref())
        .and_then(|exe| executable_built_ms(root, exe));
    for probe in probes {
        let times = FileTimes {
            changed_ms: changed_ms(&root.join(&probe.file)),
            executable_built_ms: built,
        };
        let hits = hits_of(summary, &probe.id);
        let logged = logged_files.contains(probe.file.as_str());
        let verdict = hits::verdict(probe, hits, logged, &times, facts);
        match summary.probes.iter_mut().find(|f| f.probe_id == probe.id) {
            Some(figures) => {
                // The block was written before a scan knew its line.
                if probe.line.is_some() && figures.location.as_deref() == Some(probe.file.as_str())
                {
                    figures.location = Some(probe.location());
                }
                figures.judge(verdict);
            }
            None => summary
                .probes
                .push(ProbeFigures::not_logged(probe, verdict)),
        }
    }
    // A probe the ledger no longer lists whose every line was a failure.
    for figures in &mut summary.probes {
        if figures.hits == 0 && figures.reason.is_none() {
            figures.judge(hits::failed_verdict(&figures.probe_id, facts));
        }
    }
}

/// The rows of the table with no value, as a kickoff lists them.
pub(super) fn no_hit_rows(summary: &LogSummary) -> Vec<NoHitRow> {
    summary
        .probes
        .iter()
        .filter_map(|f| {
            Some(NoHitRow {
                probe_id: f.probe_id.clone(),
                hypothesis_id: f.hypothesis_id.clone(),
                location: f.location.clone().unwrap_or_default(),
                reason: f.reason?,
                why: f.why.clone().unwrap_or_default(),
            })
        })
        .collect()
}

impl Engine {
    /// The summary of run `run` (in `file`) of `session` as a hit table,
    /// its attempts counted, and the run's records it was judged by.
    pub(super) fn judged(
        &self,
        file: &Path,
        session: Option<&DebugSession>,
        run: &str,
    ) -> std::io::Result<(LogSummary, logread::outcomes::Outcomes)> {
        let (mut summary, outcomes) = logread::outcomes::with_summary(file, self.redactor())?;
        fill_table(
            &self.config().root,
            session,
            run,
            &mut summary,
            &outcomes.facts,
        );
        let attempts = outcomes.facts.attempts;
        summary.attempts = (attempts.total > 0).then_some(attempts);
        Ok((summary, outcomes))
    }

    /// Reads the files of the source probes no scan has seen yet, so a
    /// block inserted since counts as on disk.
    pub(super) fn rescan_issued(&mut self, session_id: &str, now: u64) -> Result<(), EngineError> {
        let stored = self.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(());
        };
        let mut files: Vec<String> = session
            .probes
            .iter()
            .filter(|p| p.state == ProbeState::Issued && !p.is_logpoint())
            .map(|p| p.file.clone())
            .collect();
        files.sort();
        files.dedup();
        if !files.is_empty() {
            self.rescan_files(session_id, &files, now)?;
        }
        Ok(())
    }

    /// What the Proceed kickoff says of the round the person just closed:
    /// its probes with no value, with why; its attempts when it recorded
    /// more than one; the person's marks in it. Nothing when its run cannot
    /// be read.
    pub(super) fn closed_run(
        &self,
        session_id: &str,
        session: &DebugSession,
        closed_round: u32,
    ) -> ClosedRun {
        let Some(round) = session
            .rounds
            .iter()
            .rev()
            .find(|r| r.index == closed_round)
        else {
            return ClosedRun::default();
        };
        let file = crate::workspace::runlog::run_file(&self.runs_dir(session_id), &round.run_id);
        let Ok((summary, outcomes)) = self.judged(&file, Some(session), &round.run_id) else {
            return ClosedRun::default();
        };
        let attempts = outcomes.facts.attempts;
        ClosedRun {
            no_hits: no_hit_rows(&summary),
            attempts: (attempts.total > 1).then_some(attempts),
            marks: outcomes
                .marks
                .iter()
                .map(|m| MarkSeen {
                    line: m.line,
                    words: m.words.clone(),
                })
                .collect(),
            marks_total: outcomes.marks_total,
        }
    }
}
