//! The person's commands from a terminal: start, Proceed, Mark fixed and
//! abort, for harnesses without a button or a slash command of ours (Codex
//! calls no MCP prompts) and for anyone who would rather type. Each prints
//! the text the agent's next turn starts from, so it can be pasted into any
//! agent; an agent with our hooks gets the session from them anyway.

use super::Where;
use crate::core::machine::ProceedInput;
use crate::core::text;
use crate::engine::owner::now_ms;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy)]
pub enum PersonCommand {
    Start,
    Proceed,
    Done,
    Abort,
}

pub fn run(place: Where, command: PersonCommand, words: Vec<String>) -> anyhow::Result<ExitCode> {
    let (mut engine, session) = place.open()?;
    let now = now_ms();
    let note = Some(words.join(" ")).filter(|n| !n.trim().is_empty());
    let (said, kickoff) = match command {
        PersonCommand::Start => {
            let problem = note.ok_or_else(|| {
                anyhow::anyhow!("say what is wrong: `debug-sidecar start <the problem>`")
            })?;
            let (_, kickoff) = engine.start(&session, problem, now)?;
            (format!("Debug session {session} started."), kickoff)
        }
        PersonCommand::Proceed => {
            let input = ProceedInput {
                note,
                ..Default::default()
            };
            let (snapshot, kickoff) = engine.proceed(&session, input, now)?;
            let round = snapshot.round.unwrap_or_default();
            (
                format!("Round {round} is the agent's: it reads the evidence."),
                kickoff,
            )
        }
        PersonCommand::Done => {
            let (_, kickoff) = engine.done(&session, note, now)?;
            (
                "Marked fixed: the agent removes every probe.".to_string(),
                kickoff,
            )
        }
        PersonCommand::Abort => {
            let (_, leftover) = engine.abort(&session, now)?;
            (
                "Debug session aborted.".to_string(),
                Some(text::abort_notice(&leftover)),
            )
        }
    };
    eprintln!("{said}");
    if let Some(kickoff) = kickoff {
        // For the agent: what its next turn starts from.
        println!("{kickoff}");
    }
    Ok(ExitCode::SUCCESS)
}
