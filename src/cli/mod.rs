//! The command-line face for people.

mod check;
mod demo;
mod status;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "debug-sidecar",
    version,
    about = "An evidence-first Debug Mode for coding agents"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve protocol v1 (LSP-framed JSON-RPC) on stdin/stdout for an editor
    /// or a harness shim. This is what runs when no command is given.
    Serve,
    /// Exit 1 and print `file:line: what` for every probe left in the tree
    /// (any session's, Cursor's, loopback ingest URLs); 0 when clean.
    Check {
        /// Files or directories to check (default: the current directory).
        paths: Vec<std::path::PathBuf>,
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// A Claude Code or Codex command hook: reads the hook's JSON on stdin
    /// and prints the answer. Always exits 0; problems go to stderr.
    Hook {
        dialect: crate::hook::Dialect,
        /// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, ...
        event: String,
    },
    /// List the workspace's debug sessions: stage, round, live probes, last activity.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// The workspace (default: the current directory).
        #[arg(long)]
        workspace: Option<std::path::PathBuf>,
        /// The state directory (default: $DEBUG_SIDECAR_DIR, else <workspace>/.debug-sidecar).
        #[arg(long)]
        state_dir: Option<std::path::PathBuf>,
    },
    /// Run a whole scripted debug session on a bundled buggy program and show
    /// what an editor would display and what the model would be told.
    Demo {
        /// Keep the temporary workspace instead of deleting it.
        #[arg(long)]
        keep: bool,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Demo { keep }) => demo::run(keep),
        Some(Command::Check { paths, json }) => check::run(paths, json),
        Some(Command::Hook { dialect, event }) => {
            crate::hook::run_stdio(dialect, &event);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Status {
            json,
            workspace,
            state_dir,
        }) => status::run(workspace, state_dir, json),
        Some(Command::Serve) | None => {
            let code = crate::rpc::serve_stdio()?;
            // Exit at once: the runtime's stdin reader is a blocking thread
            // that would keep the process alive while the client holds the pipe.
            std::process::exit(code)
        }
    }
}
