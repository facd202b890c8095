//! The engine: the single owner of a session's state in this process. It
//! applies commands in order, performs the I/O their effects ask for (run
//! files, scans) and feeds the results back through the core.

use crate::core::error::DomainError;
use crate::core::machine::{self, Command, Effect, Reconciliation};
use crate::core::model::DebugState;
use crate::core::text::{self, RenderEnv};
use crate::workspace::{runlog, scan};
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("workspace I/O failed: {0}")]
    Io(#[from] io::Error),
}

pub struct Engine {
    root: PathBuf,
    session_id: String,
    runs_dir: PathBuf,
    state: DebugState,
    /// Markers of half-removed blocks seen by the last scan: `(file, line, id)`.
    half_removed: Vec<(String, u32, String)>,
}

impl Engine {
    /// An engine for one agent session of the workspace at `root`, keeping run
    /// logs under `state_dir`.
    pub fn new(root: &Path, state_dir: &Path, session_id: &str) -> Self {
        Engine {
            root: root.to_path_buf(),
            session_id: session_id.to_string(),
            runs_dir: state_dir.join("sessions").join(session_id).join("runs"),
            state: DebugState::Inactive,
            half_removed: Vec::new(),
        }
    }

    pub fn state(&self) -> &DebugState {
        &self.state
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The tag written into this session's markers, telling them apart from
    /// other sessions' probes in the same tree.
    pub fn session_tag(&self) -> &str {
        &self.session_id
    }

    pub fn env(&self) -> RenderEnv {
        RenderEnv {
            runs_dir: Some(self.runs_dir.to_string_lossy().into_owned()),
            ingest_url: None,
        }
    }

    pub fn half_removed(&self) -> &[(String, u32, String)] {
        &self.half_removed
    }

    pub fn blackboard(&self) -> Option<String> {
        let session = self.state.session()?;
        Some(text::blackboard(session, &self.env()))
    }

    pub fn apply(&mut self, command: Command, now: u64) -> Result<Vec<Effect>, EngineError> {
        if machine::needs_fresh_scan(&self.state, &command) {
            self.rescan(now)?;
        }
        if matches!(command, Command::Proceed(_) | Command::Done { .. }) {
            // Both close the run: its line count must be current first.
            self.count_current_run(now)?;
        }
        let transition = machine::apply(&self.state, command, now)?;
        self.state = transition.state;
        let mut effects = Vec::new();
        for effect in transition.effects {
            match effect {
                Effect::RunStarted { ref run_id } => {
                    runlog::start_run(&self.runs_dir, run_id)?;
                    effects.push(effect);
                }
                Effect::Rescan => {
                    let reconciled = self.rescan(now)?;
                    effects.push(Effect::Reconciled(reconciled));
                }
                other => effects.push(other),
            }
        }
        Ok(effects)
    }

    /// Reconcile the ledger with the disk.
    pub fn rescan(&mut self, now: u64) -> Result<Reconciliation, EngineError> {
        if self.state.session().is_none() {
            return Ok(Reconciliation::default());
        }
        let outcome = scan::scan_workspace(&self.root, self.session_tag());
        self.half_removed = outcome.half_removed;
        let transition = machine::apply(&self.state, Command::ProbeScan(outcome.report), now)?;
        self.state = transition.state;
        Ok(transition
            .effects
            .into_iter()
            .find_map(|e| match e {
                Effect::Reconciled(r) => Some(r),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// Refresh the current run's line count from its file.
    pub fn count_current_run(&mut self, now: u64) -> Result<u64, EngineError> {
        let Some(session) = self.state.session() else {
            return Ok(0);
        };
        let run_id = session.run_id().to_string();
        let lines = runlog::count_lines(&runlog::run_file(&self.runs_dir, &run_id))?;
        let transition = machine::apply(&self.state, Command::LogLines { run_id, lines }, now)?;
        self.state = transition.state;
        Ok(lines)
    }

    pub fn run_file(&self, run_id: &str) -> PathBuf {
        runlog::run_file(&self.runs_dir, run_id)
    }
}
