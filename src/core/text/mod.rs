//! Everything the model (and, for notices, the user) is told (DESIGN section 4).
//! Rendering is pure; the paths it mentions come in through `RenderEnv`.

mod acp;
mod blackboard;
mod briefing;
mod form;
mod messages;
mod person;
mod reproduction;
mod skill;

pub use acp::{acp_board, acp_prompt, acp_said, ACP_BOARD_CLOSE, ACP_BOARD_MAX, ACP_BOARD_OPEN};
pub use blackboard::{blackboard, MAX_LISTED_PROBES, MAX_LISTED_RUNS};
pub use briefing::briefing;
pub use form::{
    form_dismissed, form_reply, form_too_late, hand_off_form, FormDismissal, HandOffForm,
    CHOICE_FIXED, CHOICE_PROCEED, CHOICE_REPLY, FORM_CHOICES, FORM_COLUMNS, FORM_HELP_COLUMNS,
    FORM_LINES, FORM_UNKNOWN, FORM_WITHDRAWN,
};
pub use messages::{
    abort_notice, deno_note, hand_off_result, kickoff, logpoints_removed, lost_state, marked,
    notice, nudge_reason, page_note, placement_note, snippet_notes, snippet_result, start_template,
    stop_reason, target_note, NO_SESSION,
};
pub use person::{
    agent_run_pending, bare_debug_line, receipt, wake_line, wake_started, Receipt, WakeLine,
};
pub use reproduction::{
    agent_repeat_result, agent_run_result, fix_backing, fix_refused, person_run_notice,
    run_while_agent_runs, says_fixed_anyway, FIXED_ANYWAY,
};
pub use skill::{skill_md, SKILL_NAME};

use std::path::Path;

/// The name the agent's hand-off tool has in every face.
pub const HAND_OFF_TOOL: &str = "hand_off_to_user";
pub const SNIPPET_TOOL: &str = "probe_snippet";
pub const HYPOTHESES_TOOL: &str = "record_hypotheses";
pub const REMOVE_LOGPOINTS_TOOL: &str = "remove_logpoints";
pub const START_TOOL: &str = "start_debug_session";

/// What the person is shown when a model that stopped early is sent back.
pub const NUDGE_NOTICE: &str =
    "Debug Mode sent the agent back: it stopped before handing the round over.";

/// How a send-back starts where the host shows it to the person too: the
/// words are the agent's, and say so.
pub const SEND_BACK_ADDRESS: &str = "To the agent, from Debug Mode: ";

/// Where things live, as the workspace layer sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderEnv {
    /// Absolute directory holding `<runId>.jsonl` files.
    pub runs_dir: Option<String>,
    /// Loopback URL for browser JavaScript, when the ingest server runs.
    pub ingest_url: Option<String>,
    /// Connections that server refused while it was full (answered 503):
    /// lines a probe posted then may be lost.
    pub ingest_refused: u64,
    /// Values redacted in the current run (`core::redact`).
    pub redacted: u64,
    /// The session's listeners for targets elsewhere (`core::target`),
    /// with the `address:port` each listens on.
    pub listeners: Vec<(crate::core::target::Target, String)>,
    /// How the harness the text goes to calls our tools.
    pub tools: crate::core::harness::ToolNaming,
    /// Where the person is: how the texts spell their commands.
    pub host: crate::core::host::Host,
    /// The probes of the round the person just closed that logged no
    /// value, with why (`core::hits`): they lead the Proceed kickoff.
    pub no_hits: Vec<crate::core::hits::NoHitRow>,
    /// The attempts of that round's run (its recorded programs), when more
    /// than one: its failure rate leads the kickoff too.
    pub closed_attempts: Option<crate::core::rates::Attempts>,
    /// The marks the person made in that round's run (at most 20 listed),
    /// and how many there were: the kickoff says where they are.
    pub closed_marks: Vec<crate::core::hits::MarkSeen>,
    pub closed_marks_total: u64,
    /// What Mark fixed rests on for a flaky bug (`fix_backing`): it ends the
    /// cleanup kickoff.
    pub fix_backing: Option<String>,
}

/// The file probes append to: a link the workspace re-points at the current
/// run's file whenever a run starts, so a probe placed in round 1 still logs
/// into the right run during a verification round.
pub const ACTIVE_LOG: &str = "active.jsonl";

impl RenderEnv {
    pub fn probe_log(&self) -> Option<String> {
        let dir = self.runs_dir.as_ref()?;
        Some(
            Path::new(dir)
                .join(ACTIVE_LOG)
                .to_string_lossy()
                .into_owned(),
        )
    }

    /// The file holding one run's lines.
    pub fn log_file(&self, run_id: &str) -> Option<String> {
        let dir = self.runs_dir.as_ref()?;
        Some(
            Path::new(dir)
                .join(format!("{run_id}.jsonl"))
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// A free text (the problem, a user's note) as quoted in a text for the
/// model: its line breaks kept, other control characters escaped, cut to
/// `max_bytes` and `max_lines` with a count of what was left out.
fn quoted(text: &str, max_bytes: usize, max_lines: usize) -> String {
    use crate::core::{budget, escape};
    let lines: Vec<&str> = budget::head(text, max_bytes)
        .split('\n')
        .take(max_lines)
        .collect();
    let kept = lines.iter().map(|l| l.len()).sum::<usize>() + lines.len() - 1;
    let escaped = escape::scrub(&lines.join("\n"));
    // Escapes are longer than what they stand for: the cap holds as written.
    let body = budget::head(&escaped, max_bytes);
    if kept >= text.len() && body.len() == escaped.len() {
        return escaped;
    }
    format!(
        "{body}… (+{} bytes not shown)",
        text.len() - kept.min(text.len())
    )
}

/// Indent every line of a free text so it reads as one block under a heading.
fn indented(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
