//! The agent as a child process in a process group of its own, ended with
//! the whole group: agents start helpers (an MCP server, a model CLI), and
//! some do not exit when their stdin closes (`claude-agent-acp` 0.23).

use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long the group has to end after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// The agent's process group, for the signal handler.
static AGENT_GROUP: AtomicI32 = AtomicI32::new(0);

pub struct Agent {
    child: Child,
}

impl Agent {
    pub fn spawn(program: &str, args: &[String]) -> anyhow::Result<Agent> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let child = command
            .spawn()
            .map_err(|e| anyhow::anyhow!("could not start the agent `{program}`: {e}"))?;
        #[cfg(unix)]
        {
            AGENT_GROUP.store(child.id() as i32, Ordering::SeqCst);
            end_group_on_signals();
        }
        Ok(Agent { child })
    }

    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Ends the agent's whole group: SIGTERM, then SIGKILL after the grace.
    pub fn end(&mut self) {
        signal_group(Signal::Term);
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                // The leader is gone; helpers it left in the group go too.
                signal_group(Signal::Kill);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        signal_group(Signal::Kill);
        let _ = self.child.wait();
    }

    /// The agent's exit code (128+n for signal n), its group ended.
    pub fn wait(&mut self) -> i32 {
        let status = self.child.wait();
        signal_group(Signal::Kill);
        match status {
            Ok(status) => status.code().unwrap_or_else(|| {
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    128 + status.signal().unwrap_or(0)
                }
                #[cfg(not(unix))]
                1
            }),
            Err(_) => 1,
        }
    }
}

enum Signal {
    Term,
    Kill,
}

fn signal_group(signal: Signal) {
    #[cfg(unix)]
    {
        let group = AGENT_GROUP.load(Ordering::SeqCst);
        if group > 0 {
            let signal = match signal {
                Signal::Term => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            };
            // SAFETY: kill(2) on a process group we created; no memory involved.
            unsafe {
                libc::kill(-group, signal);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = signal;
}

/// The editor ending the proxy with SIGTERM, SIGINT or SIGHUP ends the
/// agent's group too (it is in a group of its own, so it would not hear).
#[cfg(unix)]
fn end_group_on_signals() {
    extern "C" fn on_signal(signal: libc::c_int) {
        let group = AGENT_GROUP.load(Ordering::SeqCst);
        // SAFETY: kill(2) and _exit(2) are async-signal-safe.
        unsafe {
            if group > 0 {
                libc::kill(-group, libc::SIGTERM);
            }
            libc::_exit(128 + signal);
        }
    }
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: installs a handler that only calls async-signal-safe functions.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}
