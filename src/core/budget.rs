//! The context budget (protocol/README.md, "Context budget"): the byte cap
//! of every text the model can receive, and the cuts that keep each text
//! inside its cap however long the session runs or whatever the program
//! wrote. Caps are in bytes of UTF-8; a cut never splits a character and
//! always says how much it left out.

/// The blackboard, in every stage.
pub const BLACKBOARD: usize = 4 * 1024;
/// Any tool result, kickoff, nudge or notice as a whole.
pub const TOOL_RESULT: usize = 16 * 1024;

// The blackboard's shares. Its fixed text (header, briefing, section
// headings, paths) takes up to ~1.6 KB in the longest stage; the sections
// below share the rest.
/// The problem as the blackboard quotes it (at most 8 of its lines).
pub const BOARD_PROBLEM: usize = 400;
/// Hypotheses the blackboard lists before "+N more", and their bytes.
pub const BOARD_HYPOTHESES: usize = 6;
pub const BOARD_HYPOTHESES_BYTES: usize = 640;
/// Probe rows (and the issued and removed lists) on the blackboard.
pub const BOARD_PROBES_BYTES: usize = 560;
/// The evidence plan's requests on the blackboard.
pub const BOARD_PLAN_BYTES: usize = 480;
/// Evidence requests quoted by id in a one-line summary before "+N more".
pub const BOARD_REQUESTS: usize = 4;
/// One hypothesis statement on the blackboard.
pub const BOARD_STATEMENT: usize = 120;
/// Evidence cited for one hypothesis on the blackboard.
pub const BOARD_EVIDENCE: usize = 60;
/// One request's instructions on the blackboard.
pub const BOARD_INSTRUCTIONS: usize = 100;
/// An id on the blackboard.
pub const BOARD_ID: usize = 24;
/// A file or location on the blackboard.
pub const BOARD_LOCATION: usize = 100;

/// An id (probe, hypothesis, request) wherever it is quoted.
pub const ID: usize = 48;
/// A file path or `file:line` location wherever it is quoted.
pub const LOCATION: usize = 160;
/// The problem or a user's note quoted in a kickoff.
pub const KICKOFF_TEXT: usize = 6 * 1024;
/// Probes with no value a Proceed kickoff lists first (`core::hits`), and
/// the bytes of one such row.
pub const KICKOFF_NO_HIT_ROWS: usize = 6;
pub const KICKOFF_NO_HIT_ROW: usize = 240;
/// The person's marks a Proceed kickoff lists, and the bytes of one's words.
pub const KICKOFF_MARKS: usize = 5;
pub const KICKOFF_MARK_WORDS: usize = 80;
/// One hypothesis statement in a tool result.
pub const STATEMENT: usize = 300;
/// Hypotheses a tool result lists before "+N more".
pub const LISTED_HYPOTHESES: usize = 40;
/// Ledger rows a tool result lists before "+N more".
pub const LEDGER_ROWS: usize = 100;

/// Log lines shown by `read_logs`, in bytes: a longer line is named, not shown.
pub const LOG_PAGE: usize = 12 * 1024;
/// One distinct `data` value in `log_summary`.
pub const SUMMARY_VALUE: usize = 160;
/// All values of one probe in `log_summary`.
pub const SUMMARY_VALUES: usize = 600;
/// The in-chat hand-off form (the person reads it in the harness's UI):
/// its message is at most `text::FORM_LINES` lines of `text::FORM_COLUMNS`
/// characters; each step is cut to `FORM_STEP` bytes, and what did not fit
/// goes on in the choice's one-line help, at most `FORM_HELP` bytes.
pub const FORM_STEP: usize = 200;
pub const FORM_HELP: usize = 1024;
/// The agent's message (a question) in the form.
pub const FORM_MESSAGE: usize = 800;

/// A host's text in a subagent record (its task, result, error or
/// question): kept in the workspace's state, rewritten on every change of
/// the record, and shown by every editor.
pub const AGENT_TEXT: usize = 8 * 1024;
/// A subagent's type (its agent's name).
pub const AGENT_TYPE: usize = 80;

/// `text` cut to at most `max` bytes at a character boundary, with a count
/// of what was left out; the count itself fits inside `max` when `max` has
/// room for it.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let note = |left: usize| format!("… (+{left} bytes)");
    let room = max.saturating_sub(note(text.len()).len());
    let end = floor_char_boundary(text, room);
    format!("{}{}", &text[..end], note(text.len() - end))
}

/// A whole text held to `cap`: cut at the last line break that leaves room
/// for a closing line saying how much was cut and `hint` (where to read the
/// rest). Texts under the cap pass unchanged.
pub fn fit(text: String, cap: usize, hint: &str) -> String {
    if text.len() <= cap {
        return text;
    }
    let note = format!(
        "\n[cut at the {cap}-byte cap: {} more bytes not shown. {hint}]",
        text.len()
    );
    let room = cap.saturating_sub(note.len() + 8);
    let end = floor_char_boundary(&text, room);
    let end = text[..end].rfind('\n').unwrap_or(end);
    let note = format!(
        "\n[cut at the {cap}-byte cap: {} more bytes not shown. {hint}]",
        text.len() - end
    );
    let mut out = text[..end].to_string();
    out.push_str(&note);
    // A hint longer than the cap itself: the cap still wins.
    if out.len() > cap {
        out.truncate(floor_char_boundary(&out, cap));
    }
    out
}

/// The first `max` bytes of `text` (at a character boundary): what a cut
/// can show, taken before any work on the whole text.
pub fn head(text: &str, max: usize) -> &str {
    &text[..floor_char_boundary(text, max)]
}

fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_characters_whole_and_say_what_they_dropped() {
        assert_eq!(cut("short", 10), "short");
        let cut_text = cut(&"é".repeat(100), 40);
        assert!(cut_text.len() <= 40, "{cut_text}");
        assert!(cut_text.ends_with("bytes)"), "{cut_text}");
    }

    #[test]
    fn a_fitted_text_ends_on_a_whole_line_under_its_cap() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let fitted = fit(text, 200, "Page with `cursor`.");
        assert!(fitted.len() <= 200, "{}", fitted.len());
        assert!(fitted.ends_with("Page with `cursor`.]"), "{fitted}");
        let kept = fitted.lines().rev().nth(1).unwrap();
        assert!(kept.starts_with("line "), "{kept}");
        assert_eq!(fit("x".into(), 200, "h"), "x");
    }
}
