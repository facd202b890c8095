//! Benchmark of `debug-sidecar run`: a program printing 100,000 lines, run
//! through `run` (passed through, every line recorded into the session's
//! run) against the same program run bare, both spawned from this process
//! with stdout and stderr to /dev/null, and the fixed cost of `run -- true`.
//! Printed as ratios; nothing here
//! asserts a time.
//!
//! `cargo bench --bench run` (`DS_BENCH_RUN_LINES` sets the line count).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn quiet(command: &mut Command) {
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(status.success(), "{command:?} failed");
}

fn main() {
    let lines: u64 = std::env::var("DS_BENCH_RUN_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let root = std::env::temp_dir().join(format!("ds-bench-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    quiet(
        Command::new(BIN)
            .args(["start", "bench"])
            .current_dir(&root)
            .env_remove("DEBUG_SIDECAR_DIR"),
    );
    let count = lines.to_string();
    let bare = best_of(5, || quiet(Command::new("seq").args(["1", &count])));
    let recorded = best_of(5, || {
        quiet(
            Command::new(BIN)
                .args(["run", "--", "seq", "1", &count])
                .current_dir(&root)
                .env_remove("DEBUG_SIDECAR_DIR"),
        )
    });
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{:<46} {:>10} {:>10} {:<6} {:>8}",
        "what", "value", "baseline", "unit", "ratio"
    );
    println!(
        "{:<46} {:>10.1} {:>10.1} {:<6} {:>7.2}x",
        format!("run -- seq 1 {lines} (vs bare seq)"),
        ms(recorded),
        ms(bare),
        "ms",
        ms(recorded) / ms(bare)
    );
    // The fixed cost beside it: starting the sidecar and finding the run.
    let bare_true = best_of(5, || quiet(&mut Command::new("true")));
    let run_true = best_of(5, || {
        quiet(
            Command::new(BIN)
                .args(["run", "--", "true"])
                .current_dir(&root)
                .env_remove("DEBUG_SIDECAR_DIR"),
        )
    });
    println!(
        "{:<46} {:>10.1} {:>10.1} {:<6} {:>7.2}x",
        "run -- true (vs bare true): the fixed cost",
        ms(run_true),
        ms(bare_true),
        "ms",
        ms(run_true) / ms(bare_true)
    );
    let _ = std::fs::remove_dir_all(&root);
}
