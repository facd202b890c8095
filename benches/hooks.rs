//! Benchmark of hook processes: wall time from spawn to exit for
//! `UserPromptSubmit` and `Stop`, on a small workspace and a large one,
//! against spawning `/bin/true` in the same run. Nothing here asserts a time.
//!
//! `cargo bench --bench hooks` (`DS_BENCH_TREE` picks the large tree's
//! source, default the cargo registry sources).

use debug_sidecar::rpc::client::Connection;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
const RUNS: usize = 100;

fn spawn_timed(program: &str, args: &[&str], stdin: &str) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait().unwrap();
    started.elapsed()
}

fn percentiles(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

/// A workspace with an active session `bench` in its cleanup stage's
/// predecessor (investigating), so `Stop` has a decision to make.
fn prepare(root: &Path) {
    let mut server = Connection::spawn(Path::new(BIN), root, true).unwrap();
    server.initialize(root, json!({})).unwrap();
    server
        .request("debug/start", json!({"sessionId": "bench", "problem": "p"}))
        .unwrap();
    let _ = server.shutdown();
}

fn measure(label: &str, root: &Path) {
    prepare(root);
    let baseline = percentiles(
        (0..RUNS)
            .map(|_| spawn_timed("/bin/true", &[], ""))
            .collect(),
    );
    for event in ["UserPromptSubmit", "Stop"] {
        let input = json!({"session_id": "bench", "cwd": root, "hook_event_name": event,
                           "prompt": "go", "stop_hook_active": false})
        .to_string();
        let times = (0..RUNS)
            .map(|_| spawn_timed(BIN, &["hook", "claude", event], &input))
            .collect();
        let (p50, p99) = percentiles(times);
        println!(
            "{label:<7} {event:<17} p50 {p50:>6.2} ms  p99 {p99:>6.2} ms   /bin/true p50 {:>5.2} ms ({:.1}x)   target p50 < 10 ms on the small one",
            baseline.0,
            p50 / baseline.0
        );
    }
}

fn main() {
    let base = std::env::temp_dir().join(format!("ds-bench-hooks-{}", std::process::id()));
    let small = base.join("small");
    std::fs::create_dir_all(&small).unwrap();
    std::fs::write(small.join("app.sh"), "echo hi\n").unwrap();
    println!("debug-sidecar hook benchmark ({RUNS} runs each)");
    measure("small", &small);
    let tree = std::env::var_os("DS_BENCH_TREE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src")));
    if let Some(tree) = tree.filter(|t| t.is_dir()) {
        // The large workspace: the tree itself, with a state directory of its own.
        let large = base.join("large");
        let _ = std::os::unix::fs::symlink(&tree, &large);
        let state = base.join("large-state");
        std::env::set_var("DEBUG_SIDECAR_DIR", &state);
        measure("large", &large);
        std::env::remove_var("DEBUG_SIDECAR_DIR");
    }
    let _ = std::fs::remove_dir_all(&base);
}
