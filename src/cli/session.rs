//! The person's commands from a terminal: start, Proceed, Mark fixed and
//! abort, for harnesses without a button or a slash command of ours and for
//! anyone who would rather type. Each prints the person's receipt; the text
//! the agent's next turn starts from reaches the agent through its hooks
//! or commands, and `--kickoff` prints it too, for an agent that has none.

use super::{Say, Where};
use crate::core::harness_memory::PersonCommandKind;
use crate::engine::owner::now_ms;
use std::process::ExitCode;

pub fn run(
    place: Where,
    say: Say,
    kind: PersonCommandKind,
    words: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let note = Some(words.join(" ")).filter(|n| !n.trim().is_empty());
    if kind == PersonCommandKind::Start && note.is_none() {
        anyhow::bail!("say what is wrong: `debug-sidecar start <the problem>`");
    }
    let answer = engine.person_command(&session, kind, note, now_ms())?;
    println!("{}", answer.said);
    if kind != PersonCommandKind::Abort && !answer.echoed {
        println!(
            "The agent reads it at its next turn: tell it to go on in its chat (an agent without \
             debug-sidecar's hooks or commands needs `--kickoff`'s text pasted)."
        );
    }
    if let (true, Some(kickoff)) = (say.kickoff, answer.kickoff) {
        println!("\n{kickoff}");
    }
    Ok(ExitCode::SUCCESS)
}
