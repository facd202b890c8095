//! Benchmark of `debug-sidecar run`: a program printing 100,000 lines, run
//! through `run` (passed through, every line recorded into the session's
//! run) against the same program run bare, both spawned from this process
//! with stdout and stderr to /dev/null, and the fixed cost of `run -- true`.
//! Printed as ratios; nothing here
//! asserts a time.
//!
//! Also a Python loop of 1,000,000 iterations whose logpoint is hit 1,000
//! times, `run` (the logpoint hook loaded, every hit recorded) against bare
//! python, and the same program looping 10 times: what starting with the
//! hook costs alone; under `python3`, or each interpreter of
//! DEBUG_SIDECAR_TEST_PYTHONS (`:`-separated, as scripts/test sets it).
//! With `node` on PATH, the same loop in JavaScript against bare node, and
//! its 10-iteration twin.
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
    let pythons: Vec<String> = match std::env::var("DEBUG_SIDECAR_TEST_PYTHONS") {
        Ok(list) if !list.is_empty() => list.split(':').map(String::from).collect(),
        _ => vec!["python3".to_string()],
    };
    loops(&root, &pythons);
    let _ = std::fs::remove_dir_all(&root);
}

const LOOP: &str = "def main():\n    n = 0\n    for k in range(1000000):\n        if k % 1000 == 0:\n            n += 1\n    print(n)\n\n\nmain()\n";
const JS_LOOP: &str = "function main() {\n  let n = 0;\n  for (let k = 0; k < 1000000; k++) {\n    if (k % 1000 === 0) {\n      n += 1;\n    }\n  }\n  console.log(n);\n}\nmain();\n";

/// Places a logpoint on line 5 (`n += 1`, hit 1,000 times) of each file.
fn place(root: &std::path::Path, files: &[&str]) {
    use debug_sidecar::rpc::client::Connection;
    use serde_json::json;
    let mut server = Connection::spawn(std::path::Path::new(BIN), root, false).unwrap();
    server.initialize(root, json!({})).unwrap();
    for file in files {
        server
            .request(
                "debug/probeSnippet",
                json!({"file": file, "kind": "logpoint", "line": 5, "variables": ["k", "n"]}),
            )
            .unwrap();
    }
    let _ = server.shutdown();
}

/// One line of the table: `run -- <program> <file>` against the bare
/// program, best of five each.
fn compare(
    root: &std::path::Path,
    path: &std::ffi::OsStr,
    what: &str,
    program: &str,
    file: &str,
) -> (Duration, Duration) {
    let bare = best_of(5, || {
        quiet(
            Command::new(program)
                .arg(file)
                .current_dir(root)
                .env("PATH", path),
        )
    });
    let logged = best_of(5, || {
        quiet(
            Command::new(BIN)
                .args(["run", "--", program, file])
                .current_dir(root)
                .env("PATH", path)
                .env_remove("DEBUG_SIDECAR_DIR"),
        )
    });
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{:<46} {:>10.1} {:>10.1} {:<6} {:>7.2}x",
        what,
        ms(logged),
        ms(bare),
        "ms",
        ms(logged) / ms(bare)
    );
    (logged, bare)
}

/// The loop's time less its 10-iteration twin's, with `run` against bare:
/// the cost of the iterations and the hits alone, without either start.
fn between_hits(what: &str, long: (Duration, Duration), short: (Duration, Duration)) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let logged = ms(long.0) - ms(short.0);
    let bare = ms(long.1) - ms(short.1);
    if bare < 5.0 || logged < 0.0 {
        // The machine's noise is larger than the loop: no ratio to print.
        println!("{what:<46} (too noisy to tell: {logged:.1} ms against {bare:.1} ms)");
        return;
    }
    println!(
        "{:<46} {:>10.1} {:>10.1} {:<6} {:>7.2}x",
        what,
        logged,
        bare,
        "ms",
        logged / bare
    );
}

/// The loops under a logpoint, and their 10-iteration twins (the startup).
fn loops(root: &std::path::Path, pythons: &[String]) {
    let short = |text: &str| text.replace("1000000", "10");
    let mut files = vec!["loop.py", "short.py"];
    std::fs::write(root.join("loop.py"), LOOP).unwrap();
    std::fs::write(root.join("short.py"), short(LOOP)).unwrap();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node {
        std::fs::write(root.join("loop.js"), JS_LOOP).unwrap();
        std::fs::write(root.join("short.js"), short(JS_LOOP)).unwrap();
        files.extend(["loop.js", "short.js"]);
    } else {
        println!("(no node on PATH: no Node logpoint benchmark)");
    }
    place(root, &files);
    let path = std::env::var_os("PATH").unwrap_or_default();
    for python in pythons {
        let version = Command::new(python)
            .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let what = format!("run -- python{version} loop.py, 1M iter, 1k hits (vs bare)");
        let long = compare(root, &path, &what, python, "loop.py");
        let what = format!("run -- python{version} short.py, 10 iter: the startup");
        let short = compare(root, &path, &what, python, "short.py");
        let what = format!("python{version}: the loop less the startup");
        between_hits(&what, long, short);
    }
    if node {
        let what = "run -- node loop.js, 1M iter, 1k hits (vs bare)";
        let long = compare(root, &path, what, "node", "loop.js");
        let what = "run -- node short.js, 10 iter: the startup";
        let short = compare(root, &path, what, "node", "short.js");
        between_hits("node: the loop less the startup", long, short);
    }
}
