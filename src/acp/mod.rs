//! The `acp` face: `debug-sidecar acp -- <agent command...>`, launched by
//! an ACP editor (Zed, JetBrains, the Neovim and Emacs clients) in place of
//! the agent. It runs the agent as its child in a process group of its own
//! and sits between the two: see `proxy` for what it changes on the way.
//!
//! Threads: one reads the editor (our stdin), one the agent (its stdout);
//! the proxy runs on this thread, in arrival order. The agent's stderr is
//! ours. When the editor goes, the agent's group is ended; when the agent
//! goes, the editor's open requests fail and the proxy exits with its code.

mod message;
mod process;
mod proxy;
mod sidecar;

use proxy::{Out, Proxy};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc;

/// The longest line read from either side (a prompt can carry files).
const MAX_LINE: usize = 64 * 1024 * 1024;

/// How often the proxy looks for a wake request.
const WAKE_POLL: std::time::Duration = std::time::Duration::from_millis(100);

enum Event {
    /// Time to look for a wake request (`Proxy::tick`).
    Tick,
    Editor(Vec<u8>),
    EditorClosed,
    Agent(Vec<u8>),
    AgentClosed,
}

/// Lines from `reader` as events, then `closed`.
fn read_lines(
    reader: impl Read + Send + 'static,
    tx: mpsc::Sender<Event>,
    line: fn(Vec<u8>) -> Event,
    closed: Event,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::with_capacity(64 * 1024, reader);
        loop {
            let mut buffer = Vec::new();
            match Read::by_ref(&mut reader)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut buffer)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    while buffer.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                        buffer.pop();
                    }
                    if buffer.is_empty() {
                        continue;
                    }
                    if tx.send(line(buffer)).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(closed);
    });
}

pub fn run(nudges: u32, command: Vec<String>) -> anyhow::Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("say which agent to run: `debug-sidecar acp -- <agent command>`");
    };
    let mut agent = process::Agent::spawn(program, args)?;
    let this = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "debug-sidecar".to_string());
    let cwd = std::env::current_dir()?;
    let mut proxy = Proxy::new(nudges, this, cwd);

    let (tx, rx) = mpsc::channel();
    read_lines(
        std::io::stdin(),
        tx.clone(),
        Event::Editor,
        Event::EditorClosed,
    );
    let agent_line = agent
        .take_stdout()
        .ok_or_else(|| anyhow::anyhow!("the agent's stdout is not a pipe"))?;
    read_lines(agent_line, tx.clone(), Event::Agent, Event::AgentClosed);
    // A person's Proceed given away from the chat is looked for this often.
    std::thread::spawn(move || loop {
        std::thread::sleep(WAKE_POLL);
        if tx.send(Event::Tick).is_err() {
            return;
        }
    });
    let mut to_agent = agent.take_stdin().map(std::io::BufWriter::new);
    // Written in batches: flushed whenever no other line is waiting.
    let mut to_editor = std::io::BufWriter::new(std::io::stdout().lock());

    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(event) = next.take() {
            let outs = match event {
                Event::Tick => guarded(|| proxy.tick(), None),
                Event::Editor(line) => {
                    guarded(|| proxy.editor_line(&line), Some(Out::Agent(line.clone())))
                }
                Event::Agent(line) => {
                    guarded(|| proxy.agent_line(&line), Some(Out::Editor(line.clone())))
                }
                Event::EditorClosed => {
                    drop(to_agent);
                    agent.end();
                    // The reader threads may still block: exit without them.
                    std::process::exit(0);
                }
                Event::AgentClosed => {
                    for out in proxy.agent_exited() {
                        if let Out::Editor(line) = out {
                            write_line(&mut to_editor, &line);
                        }
                    }
                    let _ = to_editor.flush();
                    let code = agent.wait();
                    std::process::exit(code);
                }
            };
            for out in outs {
                match out {
                    Out::Agent(line) => {
                        if let Some(pipe) = to_agent.as_mut() {
                            if !write_line(pipe, &line) {
                                tracing::warn!("acp: the agent's stdin is closed");
                                to_agent = None;
                            }
                        }
                    }
                    Out::Editor(line) => {
                        if !write_line(&mut to_editor, &line) {
                            // The editor is gone.
                            agent.end();
                            std::process::exit(0);
                        }
                    }
                }
            }
            next = rx.try_recv().ok();
        }
        let agent_flushed = to_agent.as_mut().is_none_or(|pipe| pipe.flush().is_ok());
        if !agent_flushed {
            tracing::warn!("acp: the agent's stdin is closed");
            to_agent = None;
        }
        if to_editor.flush().is_err() {
            agent.end();
            std::process::exit(0);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The proxy's answer to a line; if it panicked, the line passes through
/// untouched (logged), so a bug of ours never cuts the editor off.
fn guarded(job: impl FnOnce() -> Vec<Out>, untouched: Option<Out>) -> Vec<Out> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
        Ok(outs) => outs,
        Err(panic) => {
            let message = crate::engine::owner::panic_message(&*panic);
            tracing::error!("acp: internal error, message passed on untouched: {message}");
            untouched.into_iter().collect()
        }
    }
}

fn write_line(to: &mut impl Write, line: &[u8]) -> bool {
    to.write_all(line).and_then(|_| to.write_all(b"\n")).is_ok()
}
