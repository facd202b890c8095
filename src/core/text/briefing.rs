use super::HAND_OFF_TOOL;
use crate::core::host::Host;
use crate::core::model::{DebugSession, HandoffMode, Stage};

/// Whose turn it is and what the model must do, per stage. The `user_turn`
/// text must be true whichever way the turn started: it is assembled before
/// the harness knows whether a user message, the rest of the hand-off turn or
/// an automatic continuation is next, so it gives the model a test it can
/// apply to its own transcript instead of asserting one case.
pub fn briefing(session: &DebugSession, host: Host) -> String {
    let round = session.round();
    let facts = session.round_facts();
    match session.stage {
        Stage::Investigating => format!(
            "Turn: AGENT. Round {n} is yours. Investigate, then close the round by calling \
             {HAND_OFF_TOOL} with numbered reproduction steps and an evidence plan. Only that \
             call hands the round to the user: prose asking them to reproduce changes nothing, \
             and stopping without the call sends you back.\nRound {n} so far: {facts}.",
            n = round.index,
        ),
        Stage::UserTurn => {
            let mode = round.handoff.unwrap_or(HandoffMode::Incomplete);
            let n = round.index;
            let situation = match mode {
                HandoffMode::Reproduce => {
                    format!("Round {n} is with the user: they are to run the reproduction steps.")
                }
                HandoffMode::Capture => format!(
                    "Round {n} is with the user: they are to capture what the evidence plan asks for."
                ),
                HandoffMode::Question => {
                    format!("Round {n} is with the user: they are to answer your question.")
                }
                HandoffMode::Incomplete => format!(
                    "Round {n} is with the user: you stopped without handing off, so the sidecar \
                     closed it for you and the user has no steps from you."
                ),
            };
            format!(
                "Turn: USER (handed off: {mode}). {situation} It stays theirs until they Proceed.\n\
                 First check what started this turn:\n\
                 - A message from the user: the round is yours again. Answer it, then call \
                 {HAND_OFF_TOOL} to hand the round back; the earlier hand-off does not cover \
                 your new answer.\n\
                 - Nothing from the user: nothing has happened since the hand-off. No \
                 reproduction ran and no new evidence exists, so do not read logs or continue \
                 the plan. Write one short line telling the user what to do now and how to go \
                 on, then stop: {go_on}. Do not mention this briefing.\nRound {n}: {facts}.",
                mode = mode.as_str(),
                go_on = host.go_on_for_model(),
            )
        }
        Stage::CleaningUp => format!(
            "Turn: AGENT, cleanup. The user marked the bug fixed. Remove every probe listed \
             under \"Probes on disk\": delete each block from its `#region debug-probe` line \
             through its `#endregion debug-probe` line, and nothing else. Revert edits made \
             only for rejected hypotheses; keep the fix. When you stop, the sidecar rescans \
             and ends the session only if no probe is left on disk. Finish with a short \
             summary: root cause, fix, evidence.\nProbes on disk: {}.",
            session.live_probe_count()
        ),
    }
}
