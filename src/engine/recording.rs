//! Recorded runs of the program: the person's `debug-sidecar run` into the
//! current run, the agent's `run_reproduction` into a run of its own. The
//! engine decides where the records go (and whether a run may be recorded
//! now, by the core's rule); the program runs outside the owner, between
//! `begin_run` (or `begin_agent_run`) and `end_run`.

use super::*;
use crate::core::machine::Recorder;
use crate::workspace::reproduce::Target;

/// How long past its time cap the agent's run may keep `active.jsonl`:
/// the drain of its streams after the program is killed (2 s), with room
/// for starting it under a debugger. Only a run that died mid-way relies on
/// it; a run that ends gives the link back at once.
const LEASE_SLACK_MS: u64 = 10_000;

impl Engine {
    /// Where the person's run's records go, once the core allows it: the
    /// session's current run. Refused while the agent's own run holds the
    /// link, so the probe lines of the two never mix.
    pub fn begin_run(&mut self, session_id: &str) -> Result<Target, EngineError> {
        let runs = self.runs_dir(session_id);
        let stored = self.load(session_id)?;
        machine::check_recording(&stored.state, Recorder::Person)?;
        refuse_while_lent(&runs)?;
        let run_id = stored
            .state
            .session()
            .map(|s| s.run_id().to_string())
            .unwrap_or_default();
        runlog::create_run(&runs, &run_id)?;
        Ok(self.target(session_id, run_id, false))
    }

    /// The agent's run, once the core allows it: a new run of its own, and
    /// `active.jsonl` lent to it for at most its time cap (and the slack),
    /// so every line a probe writes while it runs (source probes, browser
    /// probes through the ingest server) is the agent's, never the
    /// person's. The link is the one place all probes write through; a
    /// per-program variable could not reach probes already placed, nor a
    /// browser. The lease ends with `end_run`, or by itself when this
    /// process dies: every repair of the link (each command, each post)
    /// then points it back at the current run.
    pub fn begin_agent_run(
        &mut self,
        session_id: &str,
        timeout: std::time::Duration,
        now: u64,
    ) -> Result<Target, EngineError> {
        let runs = self.runs_dir(session_id);
        // Refused before anything is recorded: one run holds the link at a time.
        let stored = self.load(session_id)?;
        machine::check_recording(&stored.state, Recorder::Agent)?;
        refuse_while_lent(&runs)?;
        let applied = self.apply(session_id, Command::AgentRun, now, ScanTiming::Deferred)?;
        let run_id = applied
            .effects
            .iter()
            .find_map(|effect| match effect {
                Effect::RunStarted { run_id } => Some(run_id.clone()),
                _ => None,
            })
            .ok_or_else(|| DomainError::invalid("command", "no run was started"))?;
        // On the wall clock, as every repair of the link reads it (not the
        // test hooks' clock).
        let until = owner::now_ms()
            .saturating_add(timeout.as_millis() as u64)
            .saturating_add(LEASE_SLACK_MS);
        // Under the session's lock, as every repair of the link runs: a
        // repair that read no lease yet must not point the link back after
        // it was lent (the probe's first lines would be the person's).
        let mut lent = Ok(());
        let locked = self.store.update_then(
            session_id,
            owner::now_ms(),
            &mut |_| Err(Refused::default()),
            &mut |_| lent = runlog::lend_active(&runs, &run_id, until),
        );
        if let Err(error) = locked {
            lent = Err(std::io::Error::other(error.to_string()));
        }
        if let Err(error) = lent {
            // Its probe lines would land in the person's run: nothing runs.
            let _ = runlog::end_lease(&runs, &run_id);
            self.load(session_id)?;
            return Err(error.into());
        }
        Ok(self.target(session_id, run_id, true))
    }

    fn target(&self, session_id: &str, run_id: String, agent: bool) -> Target {
        Target {
            session_id: session_id.to_string(),
            file: runlog::run_file(&self.runs_dir(session_id), &run_id),
            run_id,
            agent,
            redactor: self.redactor().clone(),
        }
    }

    /// The run's records are written: an agent's run gives `active.jsonl`
    /// back to the current run, and the line count goes into the state, so
    /// the blackboard and observers see them.
    pub fn end_run(&mut self, target: &Target, now: u64) -> Result<(), EngineError> {
        if target.agent {
            let runs = self.runs_dir(&target.session_id);
            let ended = runlog::end_lease(&runs, &target.run_id);
            // Repaired under the session's lock, against the state as it is.
            self.load(&target.session_id)?;
            ended?;
        }
        let lines = self.counter.borrow_mut().count_and_keep(&target.file)?;
        let command = Command::LogLines {
            run_id: target.run_id.clone(),
            lines,
        };
        self.apply(&target.session_id, command, now, ScanTiming::Deferred)?;
        Ok(())
    }
}

fn refuse_while_lent(runs: &std::path::Path) -> Result<(), DomainError> {
    let now = owner::now_ms();
    match runlog::lent_run(runs, now) {
        Some((run_id, until)) => Err(DomainError::invalid(
            "command",
            crate::core::text::run_while_agent_runs(
                &run_id,
                until.saturating_sub(now).div_ceil(1000),
            ),
        )),
        None => Ok(()),
    }
}
