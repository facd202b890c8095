//! What the person is told when one of their commands lands: a receipt of
//! one to three lines, in the words of the host in front of them. The
//! model's side of the same command is its kickoff (`messages.rs`).

use crate::core::escape::inline_cut;
use crate::core::harness_memory::PersonCommandKind;
use crate::core::host::Host;

/// Bytes of the person's own words quoted back in a receipt.
const QUOTED_NOTE: usize = 80;

/// What a person's command did, as their receipt tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    Started {
        session: String,
    },
    Proceeded {
        note: Option<String>,
        /// The run of the round it closed, and the lines it logged.
        run: String,
        lines: u64,
        /// The round that is the agent's now.
        round: u32,
    },
    Fixed {
        note: Option<String>,
        probes: usize,
    },
    Aborted {
        leftover: usize,
    },
    /// Answered in the form with Reply: the round stays the person's.
    Replied {
        note: Option<String>,
        round: u32,
    },
    /// The form was closed unanswered.
    Closed {
        round: u32,
    },
    /// A start whose problem the harness fills in later: nothing started.
    Placeholder,
    /// The same command again moments later: applied once.
    Repeated {
        kind: PersonCommandKind,
    },
}

fn quoted(note: &Option<String>) -> String {
    match note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(note) => format!(" (\"{}\")", inline_cut(note, QUOTED_NOTE)),
        None => String::new(),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The receipt; `in_form` when the person chose it in the hand-off form.
pub fn receipt(receipt: &Receipt, in_form: bool, host: Host) -> String {
    let chose = if in_form { "You chose " } else { "" };
    match receipt {
        Receipt::Started { session } => {
            let which = if session == "default" {
                String::new()
            } else {
                format!(" (session {})", inline_cut(session, 64))
            };
            format!("Debug Mode started{which}: round 1 is the agent's.")
        }
        Receipt::Proceeded {
            note,
            run,
            lines,
            round,
        } => format!(
            "{chose}Proceed{}: run {} logged {}; round {round} is the agent's.",
            quoted(note),
            inline_cut(run, 64),
            plural(*lines, "line", "lines")
        ),
        Receipt::Fixed { note, probes } => {
            let what = match probes {
                0 => "the agent checks that no probe is left".to_string(),
                n => format!(
                    "the agent removes {} on disk",
                    plural(*n as u64, "probe", "probes")
                ),
            };
            format!(
                "{chose}Mark fixed{}: {what}; the session ends when none is left.",
                quoted(note)
            )
        }
        Receipt::Aborted { leftover: 0 } => "Debug session aborted.".to_string(),
        Receipt::Aborted { leftover } => format!(
            "Debug session aborted; {} still on disk (`debug-sidecar check` lists {}).",
            plural(*leftover as u64, "probe is", "probes are"),
            if *leftover == 1 { "it" } else { "them" }
        ),
        Receipt::Replied { note, round } => format!(
            "You replied{}: round {round} stays yours; the agent answers and hands it back.",
            quoted(note)
        ),
        Receipt::Closed { round } => format!(
            "You closed the form: round {round} stays yours. {}",
            host.go_on_line()
        ),
        Receipt::Placeholder => "Not started: the problem is still a placeholder.".to_string(),
        Receipt::Repeated { kind } => format!(
            "Already applied: that {} came moments ago, once is enough.",
            match kind {
                PersonCommandKind::Start => "start",
                PersonCommandKind::Proceed => "Proceed",
                PersonCommandKind::Done => "Mark fixed",
                PersonCommandKind::Abort => "abort",
            }
        ),
    }
}

/// The person's line when the agent stops while its own reproduction still
/// runs (the host moved the call to the background): nothing closed.
pub fn agent_run_pending(run: &str) -> String {
    format!(
        "The agent is waiting for its own run of the reproduction ({}): the round stays the \
         agent's, and it goes on when the run ends (if it does not, tell it to go on).",
        inline_cut(run, 64)
    )
}

/// What the person is told of waking the agent after a Proceed or Mark
/// fixed given away from its chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WakeLine<'a> {
    /// These wakers run; the agent is woken once its turn is free.
    Waiting(&'a [Host]),
    /// The agent's turn still runs (its hand-off form may be open).
    Busy,
    /// A waker in `by` started the agent's turn.
    Delivered { by: Host },
    /// A turn started in the chat first: nothing was sent.
    Superseded,
    /// No process here can start the agent's turn.
    Nobody,
}

/// The wake line for a command of `kind` that read `run` (empty for Mark
/// fixed).
pub fn wake_line(line: &WakeLine, kind: PersonCommandKind, run: &str) -> String {
    let doing = match kind {
        PersonCommandKind::Done => "removing the probes".to_string(),
        _ if run.is_empty() => "reading the evidence".to_string(),
        _ => format!("reading run {}", inline_cut(run, 64)),
    };
    match line {
        WakeLine::Waiting(hosts) => {
            let names: Vec<&str> = hosts.iter().map(|h| h.name()).collect();
            format!(
                "Waking the agent in {}: it starts {doing} once its turn is free.",
                names.join(" or ")
            )
        }
        WakeLine::Busy => format!(
            "The agent's turn is still running: if its hand-off form is open in the chat, \
             close it there and the agent starts {doing} at once."
        ),
        WakeLine::Delivered { by } => format!("The agent is {doing} (woken in {}).", by.name()),
        WakeLine::Superseded => "The agent's chat went on first: nothing more was sent.".into(),
        WakeLine::Nobody => format!(
            "Nothing here can wake the agent by itself: in its chat, close its hand-off form \
             if one is open, or say \"go on\"; it then starts {doing}."
        ),
    }
}

/// What a host shows the person when a waker starts the agent's turn for
/// a command given away from the chat.
pub fn wake_started(kind: PersonCommandKind, run: &str) -> String {
    match kind {
        PersonCommandKind::Done => {
            "Debug Mode: you marked it fixed outside the chat; the agent removes the probes."
                .to_string()
        }
        _ => format!(
            "Debug Mode: you pressed Proceed outside the chat; the agent reads run {}.",
            inline_cut(run, 64)
        ),
    }
}

/// The line a person gets for `/debug <problem>` where the host's `/debug`
/// is its own command (Claude Code's debug skill): how ours is spelled.
/// None where `/debug` is ours.
pub fn bare_debug_line(host: Host) -> Option<String> {
    let start = host.spelling(PersonCommandKind::Start).what();
    host.owns_bare_debug().then(|| {
        format!(
            "Not sent: /debug is {}'s own command. Debug Mode starts with {start}.",
            host.name()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_lines_name_the_run_and_the_host() {
        use PersonCommandKind::{Done, Proceed};
        let hosts = [Host::ClaudeCode, Host::Pi];
        insta::assert_snapshot!([
            wake_line(&WakeLine::Waiting(&hosts), Proceed, "r1-abc"),
            wake_line(&WakeLine::Busy, Proceed, "r1-abc"),
            wake_started(Proceed, "r1-abc"),
            wake_started(Done, ""),
            wake_line(
                &WakeLine::Delivered { by: Host::OpenCode },
                Proceed,
                "r1-abc"
            ),
            wake_line(&WakeLine::Delivered { by: Host::Acp }, Done, ""),
            wake_line(&WakeLine::Superseded, Proceed, "r1-abc"),
            wake_line(&WakeLine::Nobody, Proceed, "r1-abc"),
            wake_line(&WakeLine::Nobody, Done, ""),
        ]
        .join("\n"));
    }

    #[test]
    fn a_receipt_is_one_line_that_quotes_the_person_bounded() {
        let long = Some(format!("it printed 70\n{}", "x".repeat(500)));
        let text = receipt(
            &Receipt::Proceeded {
                note: long,
                run: "r1-abc".into(),
                lines: 1,
                round: 2,
            },
            true,
            Host::ClaudeCode,
        );
        assert!(
            text.starts_with("You chose Proceed (\"it printed 70"),
            "{text}"
        );
        assert!(text.ends_with("run r1-abc logged 1 line; round 2 is the agent's."));
        assert_eq!(text.lines().count(), 1);
        assert!(text.len() < 250, "{text}");
    }

    #[test]
    fn claude_code_is_told_the_name_it_can_type() {
        let line = bare_debug_line(Host::ClaudeCode).unwrap();
        assert_eq!(bare_debug_line(Host::Codex), None);
        assert!(
            line.contains("/mcp__debug-sidecar__debug [the problem]"),
            "{line}"
        );
        assert!(line.contains("Claude Code's own"), "{line}");
    }
}
