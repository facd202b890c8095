//! The in-chat hand-off (MCP elicitation): the form a person answers in the
//! agent's own chat, and what the hand-off tool tells the model about the
//! answer when it is not a Proceed or Mark fixed (those answer with their
//! kickoffs).

use super::{indented, quoted, HAND_OFF_TOOL};
use crate::core::budget::{self, cut, KICKOFF_TEXT};
use crate::core::escape::inline_cut;
use crate::core::model::{DebugSession, HandoffMode};
use std::fmt::Write;

/// What the person picks in the form (`choice`).
pub const CHOICE_PROCEED: &str = "proceed";
pub const CHOICE_FIXED: &str = "fixed";
pub const CHOICE_REPLY: &str = "reply";

/// The form's message: the round's steps and what the person is asked for,
/// then the three choices. The person reads it in the harness's own UI.
pub fn hand_off_form(session: &DebugSession) -> String {
    let round = session.round();
    let mode = round.handoff.unwrap_or(HandoffMode::Reproduce);
    let mut out = match mode {
        HandoffMode::Question => format!("Debug Mode, round {}: the agent asks you.", round.index),
        HandoffMode::Capture => format!(
            "Debug Mode, round {}: the agent asks you to capture something.",
            round.index
        ),
        _ => format!(
            "Debug Mode, round {}: the agent asks you to reproduce the problem.",
            round.index
        ),
    };
    if let Some(message) = round.message.as_deref().filter(|m| !m.trim().is_empty()) {
        let _ = write!(
            out,
            "\n{}",
            indented(&quoted(message, budget::FORM_MESSAGE, 12), "  ")
        );
    }
    if !round.steps.is_empty() {
        out.push_str("\nSteps:");
        for (i, step) in round.steps.iter().take(budget::FORM_STEPS).enumerate() {
            let _ = write!(
                out,
                "\n  {}. {}",
                i + 1,
                inline_cut(step, budget::FORM_STEP)
            );
        }
        if round.steps.len() > budget::FORM_STEPS {
            let _ = write!(
                out,
                "\n  +{} more (the agent's chat has them all)",
                round.steps.len() - budget::FORM_STEPS
            );
        }
    }
    let pending = session.pending_requests();
    if !pending.is_empty() {
        out.push_str("\nAlso report:");
        for request in pending.iter().take(budget::BOARD_REQUESTS) {
            let what = request
                .instructions
                .first()
                .map(String::as_str)
                .unwrap_or("(no instructions)");
            let _ = write!(
                out,
                "\n  - {}",
                inline_cut(what, budget::BOARD_INSTRUCTIONS)
            );
        }
    }
    out.push_str(
        "\nThen choose: Proceed once you reproduced it (write what you saw in the note), Mark \
         fixed if the problem is gone, or Reply to answer the agent (your answer in the note). \
         Closing the form leaves the round with you.",
    );
    budget::fit(out, budget::HAND_OFF_FORM, "")
}

/// How a person left the form without answering it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormDismissal {
    Declined,
    Cancelled,
    /// The form could not be shown or no answer came (an error, a timeout,
    /// a broken answer).
    Unanswered,
}

/// The hand-off tool's answer when the person left the form: the round
/// stays theirs, and the model is told to stop as after any hand-off.
pub fn form_dismissed(n: u32, how: FormDismissal) -> String {
    let what = match how {
        FormDismissal::Declined => "The user declined the hand-off form",
        FormDismissal::Cancelled => "The hand-off form was closed without an answer",
        FormDismissal::Unanswered => "The hand-off form got no answer",
    };
    format!(
        "{what}. Nothing changed: round {n} stays handed to them (stage user_turn). They can \
         still Proceed or Mark fixed later: the debug-proceed and debug-done prompts, or \
         `debug-sidecar proceed [what they saw]` and `debug-sidecar done` in a terminal. Write \
         one short line telling them that, then end your turn. Do not read logs or change code \
         until they press Proceed."
    )
}

/// The person chose Reply: their answer, for the model to answer and then
/// hand the round over again.
pub fn form_reply(n: u32, reply: Option<&str>) -> String {
    let said = match reply.filter(|r| !r.trim().is_empty()) {
        Some(reply) => format!(
            "The user replied in the hand-off form instead of reproducing:\n{}",
            indented(&quoted(reply, KICKOFF_TEXT, 60), "  > ")
        ),
        None => "The user chose Reply in the hand-off form but wrote nothing.".to_string(),
    };
    format!(
        "{said}\nRound {n} is still theirs. Answer them, then call {HAND_OFF_TOOL} again with \
         the steps (the same or new ones) so they get the form once more."
    )
}

/// The person's answer arrived after the session had moved on (an editor's
/// button, a terminal command or another conversation came first).
pub fn form_too_late(choice: &str, now: &str) -> String {
    format!(
        "The user's answer in the hand-off form ({}) came after the session had already moved \
         on, so it was not applied. The session now: {now}. Call debug_status to see what to \
         do next.",
        cut(choice, budget::ID)
    )
}

/// A multi-round-trip answer whose `requestState` names no form this
/// server is waiting for (answered already, or never handed out).
pub const FORM_UNKNOWN: &str = "This answer names no hand-off form this server is waiting for \
     (each form is answered once); nothing changed. Call debug_status to see where the session \
     stands.";
