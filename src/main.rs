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
    let cli = debug_sidecar::cli::Cli::from_env();
    if cli.prints_for_a_person() {
        quiet_on_closed_pipe();
    }
    match debug_sidecar::cli::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("debug-sidecar: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// A reader that stops early (`| head`) ends the process the way it ends
/// `ls`: Rust ignores SIGPIPE, so `println!` would panic on the closed pipe.
/// Not for the protocol servers and hooks, which handle a closed stdout.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing on the main thread, before any other
    // thread exists; restoring a default disposition has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
