//! Claude Code's waker: `debug-sidecar hook claude Wake`, installed as a
//! second Stop hook with `asyncRewake`. Claude Code runs it in the
//! background after every turn; it waits while the agent is idle, and when
//! a person's Proceed or Mark fixed given away from the chat (a terminal,
//! an editor) asks for a wake, it takes the request and exits 2 with the
//! kickoff on stderr: Claude Code then wakes the idle session with it.
//! It exits 0, sending nothing, once a turn runs again (the next Stop
//! starts a new one) or the session ends.

use crate::core::host::Host;
use crate::engine::owner::now_ms;
use crate::engine::{wakes_enabled, EngineConfig};
use crate::workspace::store::wakers;
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The hook's own pseudo-event name.
pub const EVENT: &str = "Wake";

/// How often the session is looked at while waiting.
const POLL: Duration = Duration::from_millis(100);

/// How long the turn may still look busy when the waiter starts: the Stop
/// hook beside it records the turn's end at the same moment.
const START_GRACE: Duration = Duration::from_secs(2);

/// The longest wait; the installed hook's `timeout` is longer.
pub const MAX_WAIT: Duration = Duration::from_secs(23 * 60 * 60);
/// The `timeout` (seconds) the install gives the hook.
pub const HOOK_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// What Claude Code sets for the processes it starts: `cli` in its
/// interactive UI, `sdk-cli` under `claude -p`, `sdk-ts` / `sdk-py` in the
/// Agent SDK (behind the ACP proxy, which wakes the agent itself).
const ENTRYPOINT_ENV: &str = "CLAUDE_CODE_ENTRYPOINT";

/// Whether a person's session runs there: `claude -p` waits for
/// background hooks before it exits, so a waiter would keep it open. Only
/// the terminal UI, where the wake was seen to work (2.1.332), is waited in.
fn interactive(entrypoint: Option<&str>) -> bool {
    entrypoint == Some("cli")
}

/// Claude Code's asyncRewake: exit 2 wakes the session with stderr.
const WAKES: u8 = 2;

pub fn run_stdio() -> ExitCode {
    let mut input = String::new();
    if std::io::stdin()
        .take(1024 * 1024)
        .read_to_string(&mut input)
        .is_err()
    {
        return ExitCode::SUCCESS;
    }
    match wait(&input) {
        Ok(Some(kickoff)) => {
            eprint!("{kickoff}");
            ExitCode::from(WAKES)
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(error) => {
            // Never shown as a wake: exit 0 is silent in the background.
            tracing::warn!("debug-sidecar hook claude {EVENT}: {error}");
            ExitCode::SUCCESS
        }
    }
}

/// Waits for a wake; the kickoff it took, or None when there is nothing
/// to wake for any more.
fn wait(input: &str) -> anyhow::Result<Option<String>> {
    if !wakes_enabled() || !interactive(std::env::var(ENTRYPOINT_ENV).ok().as_deref()) {
        return Ok(None);
    }
    let input: Value = serde_json::from_str(input)?;
    let cwd = input
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("the input has no `cwd`"))?;
    let config = EngineConfig::for_agent(crate::engine::workspace_root(&cwd))?;
    if !config.state_dir.is_dir() {
        return Ok(None);
    }
    let state_dir = config.state_dir.clone();
    let (mut engine, session) = super::open_engine(super::Dialect::Claude, config)?;
    let started = Instant::now();
    let mut lease = None;
    loop {
        let view = engine.waiter_view(&session, now_ms())?;
        if !view.active {
            return Ok(None);
        }
        if view.busy {
            if started.elapsed() > START_GRACE {
                return Ok(None);
            }
        } else if lease.is_none() {
            // Listed only while the agent is idle: a terminal's Proceed then
            // says it is woken here.
            lease = wakers::register(&state_dir, Host::ClaudeCode).ok();
        }
        if let Some(revision) = view.due {
            if let Some(kickoff) = engine.claim_wake(&session, revision, now_ms())? {
                return Ok(Some(kickoff));
            }
        }
        if started.elapsed() > MAX_WAIT {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_persons_session_is_waited_in() {
        assert!(interactive(Some("cli")));
        assert!(
            !interactive(Some("claude-vscode")),
            "not seen to wake there"
        );
        assert!(!interactive(Some("sdk-cli")), "claude -p would not exit");
        assert!(!interactive(Some("sdk-ts")));
        assert!(!interactive(None));
    }
}
