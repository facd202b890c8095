//! The command-line face for people.

mod demo;

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
        Some(Command::Serve) | None => {
            let code = crate::rpc::serve_stdio()?;
            // Exit at once: the runtime's stdin reader is a blocking thread
            // that would keep the process alive while the client holds the pipe.
            std::process::exit(code)
        }
    }
}
