//! The disk a session's commands touch, under the session's lock: the scan
//! a decision needs, run files and line counts, around each transition.

use super::*;

/// The disk a session's commands touch.
pub(super) struct SessionIo<'a> {
    pub(super) root: &'a Path,
    pub(super) state_dir: &'a Path,
    pub(super) runs_dir: PathBuf,
    pub(super) session_id: &'a str,
    pub(super) counter: &'a RefCell<LineCounter>,
}

type StepResult = Result<(DebugState, Vec<Effect>), EngineError>;

impl<'a> SessionIo<'a> {
    pub(super) fn new(
        config: &'a super::EngineConfig,
        counter: &'a RefCell<LineCounter>,
        runs_dir: PathBuf,
        session_id: &'a str,
    ) -> Self {
        SessionIo {
            root: &config.root,
            state_dir: &config.state_dir,
            runs_dir,
            session_id,
            counter,
        }
    }

    /// One command against `current`, after the harness facts. Returns the
    /// outcome and the state with the facts and the disk facts learned before
    /// the command (kept even on refusal).
    pub(super) fn step(
        &self,
        current: &DebugState,
        harness_facts: &[Command],
        command: &Command,
        now: u64,
        timing: ScanTiming,
        halves: &mut Option<ScanExtras>,
    ) -> (StepResult, DebugState) {
        let mut facts = current.clone();
        for fact in harness_facts {
            match machine::apply(&facts, fact.clone(), now) {
                Ok(transition) => facts = transition.state,
                Err(error) => return (Err(error.into()), facts),
            }
        }
        if machine::needs_fresh_scan(&facts, command) {
            // Cleanup is verified from the whole walk, never from the index
            // alone: it is the claim the session ends on.
            let verifying = matches!(command, Command::Stop)
                && facts.stage() == Some(crate::core::model::Stage::CleaningUp);
            match self.scan(&facts, verifying, now, halves) {
                Ok((state, _)) => facts = state,
                Err(error) => return (Err(error), facts),
            }
        }
        if matches!(command, Command::Proceed(_) | Command::Done { .. }) {
            // Both close the run: its line count must be current first.
            match self.count_current_run(&facts, now) {
                Ok(state) => facts = state,
                Err(error) => return (Err(error), facts),
            }
        }
        let result = self.transition(&facts, command.clone(), now, timing, halves);
        (result, facts)
    }

    pub(super) fn transition(
        &self,
        state: &DebugState,
        command: Command,
        now: u64,
        timing: ScanTiming,
        halves: &mut Option<ScanExtras>,
    ) -> StepResult {
        let transition = machine::apply(state, command, now)?;
        let mut state = transition.state;
        let mut effects = Vec::new();
        for effect in transition.effects {
            match effect {
                Effect::RunStarted { ref run_id } => {
                    // Only the file: `active.jsonl` points at it once the
                    // state naming the run is durable (`follow_run`).
                    runlog::create_run(&self.runs_dir, run_id)?;
                    effects.push(effect);
                }
                Effect::Rescan if timing == ScanTiming::Inline => {
                    let (scanned, reconciled) = self.scan(&state, false, now, halves)?;
                    state = scanned;
                    effects.push(Effect::Reconciled(reconciled));
                }
                other => effects.push(other),
            }
        }
        Ok((state, effects))
    }

    /// A decision rescan of the session (`full`: the whole walk).
    pub(super) fn scan(
        &self,
        state: &DebugState,
        full: bool,
        now: u64,
        halves: &mut Option<ScanExtras>,
    ) -> Result<(DebugState, Reconciliation), EngineError> {
        let Some(session) = state.session() else {
            return Ok((state.clone(), Reconciliation::default()));
        };
        let target = ScanTarget::for_session(
            self.root,
            self.state_dir,
            self.session_id,
            session.files_to_rescan(),
        );
        let outcome = scan::rescan_session(self.state_dir, &target, self.session_id, full);
        *halves = Some(ScanExtras {
            half_removed: outcome.half_removed,
            foreign: outcome.foreign,
            files_read: outcome.files_read,
        });
        let transition = machine::apply(state, Command::ProbeScan(outcome.report), now)?;
        let reconciled = transition
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Reconciled(r) => Some(r),
                _ => None,
            })
            .unwrap_or_default();
        Ok((transition.state, reconciled))
    }

    pub(super) fn count_current_run(
        &self,
        state: &DebugState,
        now: u64,
    ) -> Result<DebugState, EngineError> {
        let Some(session) = state.session() else {
            return Ok(state.clone());
        };
        let run_id = session.run_id().to_string();
        let file = runlog::run_file(&self.runs_dir, &run_id);
        // A run file that is not the sidecar's own (a link a committed state
        // directory brought) holds no lines of this session: the person's
        // command goes on.
        let lines = match self.counter.borrow_mut().count_and_keep(&file) {
            Ok(lines) => lines,
            Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
                tracing::warn!("{error}");
                0
            }
            Err(error) => return Err(error.into()),
        };
        Ok(machine::apply(state, Command::LogLines { run_id, lines }, now)?.state)
    }
}

/// Keeps `active.jsonl` on the run the durable state names; called under
/// the session's lock. A link that cannot be made is said, not fatal: the
/// state is written, and the next command tries again.
pub(super) fn follow_run(runs_dir: &Path, stored: &Stored) {
    let Some(session) = stored.state.session() else {
        return;
    };
    match runlog::follow_run(runs_dir, session.run_id()) {
        Ok(true) => tracing::info!(
            "pointed {} at the current run {}",
            runs_dir.join(text::ACTIVE_LOG).display(),
            session.run_id()
        ),
        Ok(false) => {}
        Err(error) => tracing::warn!(
            "{} could not be pointed at the current run {}: {error}",
            runs_dir.join(text::ACTIVE_LOG).display(),
            session.run_id()
        ),
    }
}

/// Removes the (still empty) files of runs that `effects` started, after the
/// state that would have named them failed to be written.
pub(super) fn forget_unnamed_runs(runs_dir: &Path, effects: &[Effect]) {
    for effect in effects {
        if let Effect::RunStarted { run_id } = effect {
            let file = runlog::run_file(runs_dir, run_id);
            if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = std::fs::remove_file(&file);
            }
        }
    }
}
