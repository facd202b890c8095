//! Benchmark of `debug-sidecar run`: a program printing 100,000 lines, run
//! through `run` (passed through, every line recorded into the session's
//! run) against the same program run bare, both spawned from this process
//! with stdout and stderr to /dev/null, and the fixed cost of `run -- true`.
//! Printed as ratios; nothing here
//! asserts a time.
//!
//! With DEBUG_SIDECAR_DEBUGPY_PYTHON (scripts/test's debugpy venv), also a
//! Python loop of 1,000,000 iterations whose logpoint is hit 1,000 times,
//! `run` (under debugpy, every hit recorded) against bare python.
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
    if let Some(python) = std::env::var_os("DEBUG_SIDECAR_DEBUGPY_PYTHON") {
        python_logpoint(&root, std::path::Path::new(&python), ms);
    } else {
        println!("(set DEBUG_SIDECAR_DEBUGPY_PYTHON for the Python logpoint benchmark)");
    }
    let _ = std::fs::remove_dir_all(&root);
}

const LOOP: &str = "def main():\n    n = 0\n    for k in range(1000000):\n        if k % 1000 == 0:\n            n += 1\n    print(n)\n\n\nmain()\n";

/// The loop under a logpoint on `n += 1` (line 5, hit 1,000 times).
fn python_logpoint(root: &std::path::Path, python: &std::path::Path, ms: impl Fn(Duration) -> f64) {
    use debug_sidecar::rpc::client::Connection;
    use serde_json::json;
    std::fs::write(root.join("loop.py"), LOOP).unwrap();
    let mut server = Connection::spawn(std::path::Path::new(BIN), root, false).unwrap();
    server.initialize(root, json!({})).unwrap();
    server
        .request(
            "debug/probeSnippet",
            json!({"file": "loop.py", "kind": "logpoint", "line": 5, "variables": ["k", "n"]}),
        )
        .unwrap();
    let _ = server.shutdown();
    let bin = python.parent().unwrap().to_path_buf();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(dirs).unwrap();
    let bare = best_of(3, || {
        quiet(Command::new(python).arg("loop.py").current_dir(root))
    });
    let logged = best_of(3, || {
        quiet(
            Command::new(BIN)
                .args(["run", "--", "python3", "loop.py"])
                .current_dir(root)
                .env("PATH", &path)
                .env_remove("DEBUG_SIDECAR_DIR"),
        )
    });
    println!(
        "{:<46} {:>10.1} {:>10.1} {:<6} {:>7.2}x",
        "run -- python3 loop.py, 1M iter, 1k hits (vs bare)",
        ms(logged),
        ms(bare),
        "ms",
        ms(logged) / ms(bare)
    );
}
