use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Logs go to stderr: stdout carries the protocol. `RUST_LOG` sets the level.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = debug_sidecar::cli::Cli::parse();
    match debug_sidecar::cli::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("debug-sidecar: {error:#}");
            ExitCode::from(2)
        }
    }
}
