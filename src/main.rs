use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = debug_sidecar::cli::Cli::parse();
    match debug_sidecar::cli::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("debug-sidecar: {error:#}");
            ExitCode::from(2)
        }
    }
}
