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
        None => {
            eprintln!("debug-sidecar: no command given; try `debug-sidecar demo` or `--help`");
            Ok(ExitCode::from(2))
        }
    }
}
