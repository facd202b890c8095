//! Recorded runs of the program: the person's `debug-sidecar run` into the
//! current run, the agent's `run_reproduction` into a run of its own. The
//! engine decides where the records go (and whether a run may be recorded
//! now, by the core's rule); the program runs outside the owner, between
//! `begin_run` and `end_run`.

use super::*;
use crate::core::machine::Recorder;
use crate::workspace::reproduce::Target;

impl Engine {
    /// Where a run's records go, once the core allows it: the session's
    /// current run for the person, a new run of its own for the agent.
    pub fn begin_run(
        &mut self,
        session_id: &str,
        by: Recorder,
        now: u64,
    ) -> Result<Target, EngineError> {
        let runs = self.runs_dir(session_id);
        let run_id = match by {
            Recorder::Person => {
                let stored = self.load(session_id)?;
                machine::check_recording(&stored.state, by)?;
                let run_id = stored
                    .state
                    .session()
                    .map(|s| s.run_id().to_string())
                    .unwrap_or_default();
                runlog::create_run(&runs, &run_id)?;
                run_id
            }
            Recorder::Agent => {
                let applied =
                    self.apply(session_id, Command::AgentRun, now, ScanTiming::Deferred)?;
                applied
                    .effects
                    .iter()
                    .find_map(|effect| match effect {
                        Effect::RunStarted { run_id } => Some(run_id.clone()),
                        _ => None,
                    })
                    .ok_or_else(|| DomainError::invalid("command", "no run was started"))?
            }
        };
        Ok(Target {
            session_id: session_id.to_string(),
            file: runlog::run_file(&runs, &run_id),
            run_id,
            agent: by == Recorder::Agent,
        })
    }

    /// The run's records are written: its line count goes into the state,
    /// so the blackboard and observers see them.
    pub fn end_run(&mut self, target: &Target, now: u64) -> Result<(), EngineError> {
        let lines = self.counter.borrow_mut().count(&target.file)?;
        let command = Command::LogLines {
            run_id: target.run_id.clone(),
            lines,
        };
        self.apply(&target.session_id, command, now, ScanTiming::Deferred)?;
        Ok(())
    }
}
