//! The evidence Mark fixed rests on for a flaky bug (issue 31): the failure
//! rate of the first round whose reproduction failed only some of the
//! time, against the attempts of the round the person marks it fixed in.

use super::*;
use crate::core::rates::{self, Attempts, FixEvidence};

impl Engine {
    /// The attempts of each round's runs (their exit records), by round.
    fn attempts_by_round(
        &self,
        session_id: &str,
        session: &crate::core::model::DebugSession,
    ) -> Result<std::collections::BTreeMap<u32, Attempts>, EngineError> {
        let mut by_round: std::collections::BTreeMap<u32, Attempts> = Default::default();
        let dir = self.runs_dir(session_id);
        for run in &session.runs {
            let file = runlog::run_file(&dir, &run.id);
            let attempts = logread::outcomes::read(&file, self.redactor())?
                .facts
                .attempts;
            let round = by_round.entry(run.round).or_default();
            round.failed += attempts.failed;
            round.total += attempts.total;
        }
        Ok(by_round)
    }

    /// Whether the attempts since the fix are significantly better than a
    /// flaky round's rate before it.
    pub(super) fn fix_evidence(&mut self, session_id: &str) -> Result<FixEvidence, EngineError> {
        let stored = self.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(FixEvidence::NotFlaky);
        };
        let by_round = self.attempts_by_round(session_id, session)?;
        Ok(evidence_of_rounds(&by_round, session.round().index))
    }
}

/// The first round before `current` whose reproduction failed only some of
/// the time, against the attempts of `current`.
pub(super) fn evidence_of_rounds(
    by_round: &std::collections::BTreeMap<u32, Attempts>,
    current: u32,
) -> FixEvidence {
    let before = by_round
        .iter()
        .find(|(round, attempts)| **round < current && attempts.is_flaky())
        .map(|(_, attempts)| *attempts);
    let after = by_round.get(&current).copied().unwrap_or_default();
    rates::fix_evidence(before, after)
}
