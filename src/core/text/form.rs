//! The in-chat hand-off (MCP elicitation): the form a person answers in the
//! agent's own chat, and what the hand-off tool tells the model about the
//! answer when it is not a Proceed or Mark fixed (those answer with their
//! kickoffs).

use super::{indented, quoted, HAND_OFF_TOOL};
use crate::core::budget::{self, cut, KICKOFF_TEXT};
use crate::core::escape::inline_cut;
use crate::core::host::Host;
use crate::core::model::{DebugSession, HandoffMode};

/// What the person picks in the form (`choice`).
pub const CHOICE_PROCEED: &str = "proceed";
pub const CHOICE_FIXED: &str = "fixed";
pub const CHOICE_REPLY: &str = "reply";

/// The hand-off form as the person sees it: a short message every host
/// draws whole, and what did not fit, for the form's field help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOffForm {
    /// At most `FORM_LINES` lines of at most `FORM_COLUMNS` characters:
    /// what the person runs first, then one line of choices. Claude Code
    /// draws three lines of a form's message, cuts each at the edge, and
    /// nothing expands the rest.
    pub message: String,
    /// The choice field's help, one line (Claude Code draws a field's
    /// description on one line, a line break as a replacement character):
    /// the rest of the steps when they did not fit, else what closing does.
    pub help: String,
}

/// Lines and columns of the form's message: what Claude Code 2.1.332 draws
/// whole in a terminal 100 columns wide (it indents the message by 2 and
/// cuts a line at column 96 with "…").
pub const FORM_LINES: usize = 3;
pub const FORM_COLUMNS: usize = 90;

/// The last line of every form's message.
pub const FORM_CHOICES: &str =
    "Proceed when reproduced (say what you saw) · Mark fixed if it is gone · Reply to the agent";

/// The choice's help when the message holds everything.
pub const FORM_HELP: &str = "Closing the form leaves the round with you.";

/// Where the message points when the steps go on in the help.
const FORM_MORE: &str = " … (more under What now?)";

/// Columns of the help line a host shows (Claude Code draws it indented by
/// 8, on one line, cut at column 96).
pub const FORM_HELP_COLUMNS: usize = 84;

/// How the help ends when even it cannot hold the rest.
const FORM_HELP_CUT: &str = " … (Reply to ask the agent for the rest)";

/// The form for the round the person holds.
pub fn hand_off_form(session: &DebugSession) -> HandOffForm {
    let (message, rest) = form_message(session);
    let help = match rest {
        Some(rest) => {
            let rest = inline_cut(&rest, budget::FORM_HELP);
            let whole = format!("… {rest}");
            if width(&whole) <= FORM_HELP_COLUMNS {
                whole
            } else {
                let room = FORM_HELP_COLUMNS - width(FORM_HELP_CUT);
                let mut kept = fit_words(&whole, room);
                kept.push_str(FORM_HELP_CUT);
                kept
            }
        }
        None => FORM_HELP.to_string(),
    };
    HandOffForm { message, help }
}

/// Terminal columns `text` takes.
fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// The leading words of `text` that fit in `room` columns (a first word
/// longer than that, cut).
fn fit_words(text: &str, room: usize) -> String {
    let mut kept = String::new();
    for word in text.split(' ') {
        let gap = usize::from(!kept.is_empty());
        if width(&kept) + gap + width(word) > room {
            break;
        }
        if gap == 1 {
            kept.push(' ');
        }
        kept.push_str(word);
    }
    if kept.is_empty() {
        for c in text.chars() {
            if width(&kept) + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > room {
                break;
            }
            kept.push(c);
        }
    }
    kept
}

/// A free text on one line: runs of whitespace (line breaks, tabs) as one
/// space, other control characters escaped, cut to `max` bytes.
fn one_line(text: &str, max: usize) -> String {
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    inline_cut(&squashed, max)
}

/// The message, and the part of its steps that did not fit in it.
fn form_message(session: &DebugSession) -> (String, Option<String>) {
    let round = session.round();
    let mode = round.handoff.unwrap_or(HandoffMode::Reproduce);
    let head = match mode {
        HandoffMode::Question => format!("Round {}, the agent asks:", round.index),
        HandoffMode::Capture => format!("Round {}, capture:", round.index),
        _ => format!("Round {}, reproduce:", round.index),
    };
    let mut words = vec![head];
    let message = round.message.as_deref().filter(|m| !m.trim().is_empty());
    if let Some(message) = message {
        words.push(one_line(message, budget::FORM_MESSAGE));
    }
    for (i, step) in round.steps.iter().enumerate() {
        // The number stays on the line of its step's first word.
        let step = one_line(step, budget::FORM_STEP);
        words.push(format!("{}.{GLUE}{}", i + 1, step.replacen(' ', GLUE, 1)));
    }
    let pending = session.pending_requests();
    if !pending.is_empty() {
        let what: Vec<String> = pending
            .iter()
            .filter_map(|r| r.instructions.first())
            .map(|i| one_line(i.trim().trim_end_matches('.'), budget::BOARD_INSTRUCTIONS))
            .collect();
        words.push(format!("Also report: {}.", what.join("; ")));
    }
    let full = words.join(" ");
    let mut lines = wrap(&full, FORM_COLUMNS);
    let mut rest = None;
    if lines.len() > FORM_LINES - 1 {
        lines.truncate(FORM_LINES - 1);
        let last = lines.last_mut().expect("two lines were kept");
        let room = FORM_COLUMNS - width(FORM_MORE);
        if width(last) > room {
            *last = fit_words(last, room);
        }
        // What is not shown is the text after the characters shown (the
        // wrap only drops the spaces it breaks at).
        let shown: usize = lines
            .iter()
            .map(|l| l.chars().filter(|c| *c != ' ').count())
            .sum();
        let mut seen = 0;
        let cut = full
            .char_indices()
            .find(|(_, c)| {
                if *c != ' ' {
                    seen += 1;
                }
                seen > shown
            })
            .map_or(full.len(), |(at, _)| at);
        lines
            .last_mut()
            .expect("two lines were kept")
            .push_str(FORM_MORE);
        rest = Some(full[cut..].trim().replace(GLUE_CHAR, " "));
    }
    lines.push(FORM_CHOICES.to_string());
    (lines.join("\n").replace(GLUE_CHAR, " "), rest)
}

/// Joins words the wrap must not break apart (a step's number and its
/// first word); a space once the lines are made.
const GLUE_CHAR: char = '\u{a0}';
const GLUE: &str = "\u{a0}";

/// `text` in lines of at most `columns` terminal columns, broken at spaces
/// (a word wider than a line is cut into pieces).
fn wrap(text: &str, columns: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word = word.to_string();
        loop {
            let used = width(&line);
            let gap = usize::from(used > 0);
            if used + gap + width(&word) <= columns {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let piece = fit_words(&word, columns);
            let piece = if piece.is_empty() {
                // One character wider than a line: it goes on a line alone.
                word.chars().next().map(String::from).unwrap_or_default()
            } else {
                piece
            };
            word = word[piece.len()..].to_string();
            lines.push(piece);
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
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
pub fn form_dismissed(n: u32, how: FormDismissal, host: Host) -> String {
    let what = match how {
        // `codex exec` declines every form by itself: nobody saw it.
        FormDismissal::Declined if host.declines_forms_unseen() => {
            "The hand-off form was declined (this host may decline forms without showing them)"
        }
        FormDismissal::Declined => "The user declined the hand-off form",
        FormDismissal::Cancelled => "The hand-off form was closed without an answer",
        FormDismissal::Unanswered => "The hand-off form got no answer",
    };
    format!(
        "{what}. Nothing changed: round {n} stays handed to them (stage user_turn); to go on, {}. Write \
         one short line telling them what to do and how to go on, then end your turn. Do not \
         read logs or change code until they Proceed.",
        host.go_on_for_model()
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
/// Why an open hand-off form is withdrawn (sent with its cancellation).
pub const FORM_WITHDRAWN: &str =
    "The round moved on: Proceed or Mark fixed was given outside the chat.";

pub const FORM_UNKNOWN: &str = "This answer names no hand-off form this server is waiting for \
     (each form is answered once); nothing changed. Call debug_status to see where the session \
     stands.";
