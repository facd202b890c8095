//! A recorded run of the program (`debug-sidecar run`, `run_reproduction`):
//! how it ended and what was recorded, as the workspace reports it. Plain
//! data; the exit code a run passes on is decided here, once.

use serde::Serialize;

/// The longest stdout or stderr line recorded whole; longer ones keep their
/// first bytes and say how long they were.
pub const LINE_CAP: usize = 8 * 1024;
/// Bytes of records one person's run (`debug-sidecar run`) may write.
pub const PERSON_RUN_CAP: u64 = 16 * 1024 * 1024;
/// Bytes of records one agent run may write.
pub const AGENT_RUN_CAP: u64 = 1024 * 1024;
/// An agent run's time cap when none is asked for, and the most it may ask.
pub const AGENT_TIMEOUT_DEFAULT_SEC: u64 = 60;
pub const AGENT_TIMEOUT_MAX_SEC: u64 = 600;
/// Output lines an agent run's answer quotes (the last ones).
pub const TAIL_LINES: usize = 30;
/// Bytes of one quoted line.
pub const TAIL_LINE_BYTES: usize = 300;

/// An agent run's time cap from what it asked for: the default when
/// nothing, refused when zero or over the most.
pub fn agent_timeout(asked: Option<u64>) -> Result<std::time::Duration, String> {
    match asked {
        None => Ok(std::time::Duration::from_secs(AGENT_TIMEOUT_DEFAULT_SEC)),
        Some(0) => Err("Invalid argument `timeoutSec`: give at least 1 second.".into()),
        Some(sec) if sec > AGENT_TIMEOUT_MAX_SEC => Err(format!(
            "Invalid argument `timeoutSec`: at most {AGENT_TIMEOUT_MAX_SEC} seconds."
        )),
        Some(sec) => Ok(std::time::Duration::from_secs(sec)),
    }
}

/// Most attempts an agent's run may repeat.
pub const AGENT_REPEAT_MAX: u64 = 50;

/// An agent run's cap per attempt and its number of attempts, from what it
/// asked for. One attempt: `agent_timeout`. More: each gets `timeoutSec`,
/// or when not given an equal share of the most (at most the default); all
/// of them together may not outlast the most. Refused when the attempts
/// are zero or over `AGENT_REPEAT_MAX`.
pub fn agent_attempts(
    timeout_sec: Option<u64>,
    repeat: Option<u64>,
) -> Result<(std::time::Duration, u64), String> {
    let times = repeat.unwrap_or(1);
    if times == 0 || times > AGENT_REPEAT_MAX {
        return Err(format!(
            "Invalid argument `repeat`: give 1 to {AGENT_REPEAT_MAX} attempts."
        ));
    }
    if times == 1 {
        return Ok((agent_timeout(timeout_sec)?, 1));
    }
    let each = match timeout_sec {
        Some(_) => agent_timeout(timeout_sec)?,
        None => std::time::Duration::from_secs(
            (AGENT_TIMEOUT_MAX_SEC / times).clamp(1, AGENT_TIMEOUT_DEFAULT_SEC),
        ),
    };
    if each.as_secs().saturating_mul(times) > AGENT_TIMEOUT_MAX_SEC {
        return Err(format!(
            "Invalid argument `repeat`: {times} attempts of up to {} s each could take longer \
             than {AGENT_TIMEOUT_MAX_SEC} s in all; ask for fewer, or a smaller `timeoutSec`.",
            each.as_secs()
        ));
    }
    Ok((each, times))
}

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    Stdout,
    Stderr,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Stdout => "stdout",
            Source::Stderr => "stderr",
        }
    }
}

/// How the program ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Ending {
    Exited {
        code: i32,
    },
    Signalled {
        signal: i32,
    },
    /// Over its time cap: killed (with its process group).
    TimedOut {
        after_sec: u64,
    },
}

impl Ending {
    /// What `run` exits with: the program's status, 128+n for signal n (as
    /// shells report it), 124 for a run over its time cap (as `timeout`).
    pub fn exit_code(self) -> u8 {
        match self {
            Ending::Exited { code } => (code & 0xff) as u8,
            Ending::Signalled { signal } => (128 + (signal & 0x7f)) as u8,
            Ending::TimedOut { .. } => 124,
        }
    }

    /// After "the program": `exited with status 3`, `was killed by signal 9 ...`.
    pub fn describe(self) -> String {
        match self {
            Ending::Exited { code } => format!("exited with status {code}"),
            Ending::Signalled { signal } => format!(
                "was killed by signal {signal} (exit status {})",
                self.exit_code()
            ),
            Ending::TimedOut { after_sec } => {
                format!("was still running at its time cap of {after_sec} s, so it was killed")
            }
        }
    }
}

/// One line of output as an answer quotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailLine {
    pub source: Source,
    pub text: String,
}

/// What a recorded run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    pub run_id: String,
    pub command: Vec<String>,
    pub ending: Ending,
    pub duration_ms: u64,
    pub stdout_lines: u64,
    pub stderr_lines: u64,
    /// Bytes of records written to the run's file.
    pub recorded_bytes: u64,
    /// Lines passed through but not recorded: the run's cap was reached.
    pub dropped_lines: u64,
    /// The run's cap on recorded bytes.
    pub cap_bytes: u64,
    /// The last lines of output, oldest first.
    pub tail: Vec<TailLine>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_agent_runs_share_the_time_cap() {
        use std::time::Duration;
        assert_eq!(agent_attempts(None, None), Ok((Duration::from_secs(60), 1)));
        assert_eq!(
            agent_attempts(None, Some(20)),
            Ok((Duration::from_secs(30), 20))
        );
        assert_eq!(
            agent_attempts(None, Some(5)),
            Ok((Duration::from_secs(60), 5))
        );
        assert_eq!(
            agent_attempts(Some(10), Some(50)),
            Ok((Duration::from_secs(10), 50))
        );
        assert!(agent_attempts(Some(60), Some(20))
            .unwrap_err()
            .contains("in all"));
        assert!(agent_attempts(None, Some(0))
            .unwrap_err()
            .contains("`repeat`"));
        assert!(agent_attempts(None, Some(51))
            .unwrap_err()
            .contains("1 to 50"));
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(Ending::Exited { code: 3 }.exit_code(), 3);
        assert_eq!(Ending::Exited { code: 256 }.exit_code(), 0);
        assert_eq!(Ending::Signalled { signal: 9 }.exit_code(), 137);
        assert_eq!(Ending::Signalled { signal: 15 }.exit_code(), 143);
        assert_eq!(Ending::TimedOut { after_sec: 1 }.exit_code(), 124);
    }
}
