//! The person's commands from a terminal: start, Proceed, Mark fixed and
//! abort, for harnesses without a button or a slash command of ours and for
//! anyone who would rather type. Each prints the person's receipt; the text
//! the agent's next turn starts from reaches the agent through its hooks
//! or commands, and `--kickoff` prints it too, for an agent that has none.

use super::{Say, Where};
use crate::core::harness_memory::PersonCommandKind;
use crate::core::wake::WAKE_WAIT_MS;
use crate::engine::owner::now_ms;
use std::process::ExitCode;
use std::time::Duration;

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
    // A terminal is away from the agent's chat: Proceed and Mark fixed ask
    // for the agent to be woken.
    engine.set_asks_wake(true);
    let answer = engine.person_command(&session, kind, note, now_ms())?;
    println!("{}", answer.said);
    // The revision the command left: a quick agent may have moved the
    // state on already (its woken turn), and the wake is due at this one.
    let revision = match answer.revision {
        Some(revision) => revision,
        None => engine.status(&session, now_ms())?.revision,
    };
    match engine.wake_outlook(&session, revision)? {
        Some(outlook) if !answer.echoed => {
            println!("{}", wait_for_wake(&mut engine, &session, outlook)?)
        }
        _ if kind == PersonCommandKind::Start && !answer.echoed => println!(
            "The agent reads it at its next turn: tell it to go on in its chat (an agent without \
             debug-sidecar's hooks or commands needs `--kickoff`'s text pasted)."
        ),
        _ => {}
    }
    if let (true, Some(kickoff)) = (say.kickoff, answer.kickoff) {
        println!("\n{kickoff}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits a few seconds for a waker to take the request, so the person
/// reads who woke the agent, or how to go on by hand.
fn wait_for_wake(
    engine: &mut crate::engine::Engine,
    session: &str,
    mut outlook: crate::engine::WakeOutlook,
) -> anyhow::Result<String> {
    let deadline = std::time::Instant::now() + Duration::from_millis(WAKE_WAIT_MS);
    while outlook.state() == "waiting" && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        match engine.wake_outlook(session, outlook.request.revision)? {
            Some(now) => outlook = now,
            None => break,
        }
    }
    Ok(outlook.said())
}
