//! The person's commands from a terminal: start, Proceed, Mark fixed and
//! abort, for harnesses without a button or a slash command of ours (Codex
//! calls no MCP prompts) and for anyone who would rather type. Each prints
//! the text the agent's next turn starts from, so it can be pasted into any
//! agent; an agent with our hooks gets the session from them anyway.

use super::Where;
use crate::core::harness_memory::PersonCommandKind;
use crate::engine::owner::now_ms;
use std::process::ExitCode;

pub fn run(place: Where, kind: PersonCommandKind, words: Vec<String>) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let note = Some(words.join(" ")).filter(|n| !n.trim().is_empty());
    if kind == PersonCommandKind::Start && note.is_none() {
        anyhow::bail!("say what is wrong: `debug-sidecar start <the problem>`");
    }
    let answer = engine.person_command(&session, kind, note, now_ms())?;
    eprintln!("{}", answer.said);
    if let Some(kickoff) = answer.kickoff {
        // For the agent: what its next turn starts from.
        println!("{kickoff}");
    }
    Ok(ExitCode::SUCCESS)
}
