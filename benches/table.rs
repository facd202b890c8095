//! The performance table of issue 33, every row paired against its baseline
//! in the same run: each round runs the baseline and then the subject, the
//! ratio of the two is taken per round, and the row prints the median ratio
//! (the machines here are shared and noisy: read the ratios, not the
//! times). Nothing here asserts a time.
//!
//! Rows: a hook against `cat` of the same input (in a git repository with an
//! active session) and its process start alone (the hook on no input),
//! `run -- true` against `true`, `run -- seq` against `seq | tee` (past the
//! run's cap, and all recorded beside the floor of writing its records),
//! `logs --summary` of a generated log against `wc -l`, and a Python and a
//! Node loop under a logpoint (and without one) against the bare
//! interpreter, for each Node version given.
//!
//! `scripts/bench` runs it; `DS_BENCH_ROUNDS` sets the rounds (default 15),
//! `DS_BENCH_LOG_MB` the summarised log's size (default 289), `DS_BENCH_BIN`
//! another build of the binary to measure, `DS_BENCH_ONLY` the rows whose
//! name holds that text, `DS_BENCH_NODES` more Node binaries to measure.

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary measured: this build's, or `DS_BENCH_BIN` (an earlier
/// build, for a before-and-after table).
fn bin() -> PathBuf {
    std::env::var_os("DS_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_debug-sidecar")))
}

fn rounds() -> usize {
    std::env::var("DS_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(15)
}

/// Wall time of one command, its stdin fed `input`, its output dropped.
fn timed(command: &mut Command, input: Option<&[u8]>) -> Duration {
    let started = Instant::now();
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(bytes);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{command:?} failed: {status}");
    started.elapsed()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One row: `rounds` pairs, baseline first; prints medians and the median
/// of the per-pair ratios.
fn row(
    what: &str,
    goal: &str,
    rounds: usize,
    mut baseline: impl FnMut() -> Duration,
    mut subject: impl FnMut() -> Duration,
) -> (f64, f64) {
    if !wanted(what) {
        return (0.0, 0.0);
    }
    let (mut bases, mut subjects, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    // One unmeasured pair warms the page cache and the binaries.
    baseline();
    subject();
    for _ in 0..rounds {
        let base = baseline().as_secs_f64() * 1e3;
        let took = subject().as_secs_f64() * 1e3;
        bases.push(base);
        subjects.push(took);
        ratios.push(took / base);
    }
    let (took, base, ratio) = (median(subjects), median(bases), median(ratios));
    println!("{what:<44} {took:>9.2} {base:>9.2} ms {ratio:>7.2}x  {goal}");
    (took, base)
}

/// Whether the row named `what` is measured (`DS_BENCH_ONLY`).
fn wanted(what: &str) -> bool {
    std::env::var("DS_BENCH_ONLY").map_or(true, |only| what.contains(&only))
}

fn sidecar(root: &Path) -> Command {
    let mut command = Command::new(bin());
    command.current_dir(root).env_remove("DEBUG_SIDECAR_DIR");
    command
}

fn git(root: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?}");
}

/// A git repository of a few hundred files with an active session.
fn workspace(base: &Path) -> (PathBuf, Value) {
    let root = base.join("repo");
    for i in 0..300 {
        let dir = root.join(format!("src/m{}", i % 20));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.py")), format!("x = {i}\n")).unwrap();
    }
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "files"]);
    let mut server = Connection::spawn(&bin(), &root, false).unwrap();
    server.initialize(&root, json!({})).unwrap();
    let started = server
        .request("debug/start", json!({"sessionId": "bench", "problem": "p"}))
        .unwrap();
    let _ = server.shutdown();
    (root, started)
}

/// `bytes` of probe lines, about 289 bytes each, as a program writes them.
fn probe_log(file: &Path, bytes: u64) -> u64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let (mut written, mut lines) = (0u64, 0u64);
    while written < bytes {
        let line = format!(
            "{{\"sessionId\":\"bench\",\"runId\":\"r1-bench\",\"probeId\":\"p{}\",\
             \"hypothesisId\":\"H{}\",\"location\":\"src/cart/checkout.py:{}\",\
             \"message\":\"total before discount\",\"data\":{{\"total\":{},\"items\":[{},{},{}],\
             \"user\":\"u{}\",\"coupon\":null,\"ok\":true}},\"timestamp\":{}}}\n",
            lines % 7,
            lines % 3,
            40 + lines % 7,
            lines * 3 % 1000,
            lines % 11,
            lines % 13,
            lines % 17,
            lines % 50,
            1_765_000_000_000u64 + lines
        );
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        lines += 1;
    }
    out.flush().unwrap();
    lines
}

const PY_LOOP: &str = "def main():\n    n = 0\n    for k in range(1000000):\n        if k % 1000 == 0:\n            n += 1\n    print(n)\n\n\nmain()\n";
const JS_LOOP: &str = "function main() {\n  let n = 0;\n  for (let k = 0; k < 1000000; k++) {\n    if (k % 1000 === 0) {\n      n += 1;\n    }\n  }\n  console.log(n);\n}\nmain();\n";

/// The Node binaries measured, with their versions: PATH's `node`, then
/// each of `DS_BENCH_NODES` (paths, `:` between; `scripts/bench` adds the
/// Node 24 `scripts/test` installs). Node 20 runs an ES module's hooks on a
/// thread of its own, Node 22.15 and later on the program's.
fn nodes() -> Vec<(String, String)> {
    let extra = std::env::var("DS_BENCH_NODES").unwrap_or_default();
    let mut found: Vec<(String, String)> = Vec::new();
    for node in std::iter::once("node").chain(extra.split(':').filter(|p| !p.is_empty())) {
        let version = Command::new(node)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .trim_start_matches('v')
                    .to_string()
            });
        match version {
            Some(version) if !found.iter().any(|(_, v)| *v == version) => {
                found.push((node.to_string(), version))
            }
            Some(_) => {}
            None => println!("{node}: not found, its rows are skipped"),
        }
    }
    found
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn main() {
    let rounds = rounds();
    let base = std::env::temp_dir().join(format!("ds-bench-table-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let (root, started) = workspace(&base);
    println!("issue 33's table, median of {rounds} paired rounds (subject, baseline, ratio)");
    println!(
        "{:<44} {:>9} {:>9}    {:>8}  goal",
        "path", "subject", "baseline", "ratio"
    );

    let input = json!({"session_id": "bench", "cwd": root, "hook_event_name": "UserPromptSubmit",
                       "prompt": "go on", "transcript_path": "/dev/null"})
    .to_string();
    let (hook, _) = row(
        "hook claude UserPromptSubmit (vs cat)",
        "<= 2x, <= 3 ms p50 on a quiet machine",
        rounds * 4,
        || timed(&mut Command::new("cat"), Some(input.as_bytes())),
        || {
            timed(
                sidecar(&root).args(["hook", "claude", "UserPromptSubmit"]),
                Some(input.as_bytes()),
            )
        },
    );
    println!("{:<44} {hook:>9.2} ms (p50 of the hook alone)", "");
    // The same process on empty input: it starts, reads stdin and stops,
    // so the row above less this one is the hook's own work.
    row(
        "  its start alone: the hook on no input (vs cat)",
        "the floor of the row above",
        rounds * 4,
        || timed(&mut Command::new("cat"), Some(b"")),
        || {
            timed(
                sidecar(&root).args(["hook", "claude", "UserPromptSubmit"]),
                Some(b""),
            )
        },
    );

    row(
        "run -- true (vs true)",
        "fixed cost <= 5 ms",
        rounds * 2,
        || timed(&mut Command::new("true"), None),
        || timed(sidecar(&root).args(["run", "--", "true"]), None),
    );
    let teed = base.join("tee.out");
    let tee_seq = |count: &str| {
        timed(
            Command::new("sh")
                .arg("-c")
                .arg(format!("seq 1 {count} | tee {} ", teed.display())),
            None,
        )
    };
    let run_seq = |count: &str| timed(sidecar(&root).args(["run", "--", "seq", "1", count]), None);
    row(
        "run -- seq 1 1000000 (vs seq | tee file)",
        "<= 1.5x",
        rounds,
        || tee_seq("1000000"),
        || run_seq("1000000"),
    );

    // Under the run's cap every line is recorded: a record of about 100
    // bytes for each 6-byte line. Writing records of that size alone (dd of
    // a file of them into a new one) is the floor of that row.
    row(
        "run -- seq 1 100000, all recorded (vs seq | tee)",
        "-",
        rounds,
        || tee_seq("100000"),
        || run_seq("100000"),
    );
    let records = base.join("records.jsonl");
    let written = base.join("written.jsonl");
    std::fs::write(
        &records,
        (1..=100_000)
            .map(|n| {
                format!(
                    "{{\"sessionId\":\"bench\",\"runId\":\"r1-mxd0bench\",\"source\":\"stdout\",\
                     \"message\":\"{n}\",\"timestamp\":{}}}\n",
                    1_765_000_000_000u64 + n / 50
                )
            })
            .collect::<String>(),
    )
    .unwrap();
    row(
        "  its records, written alone by dd (vs the same)",
        "the floor of the row above",
        rounds,
        || tee_seq("100000"),
        || {
            let _ = std::fs::remove_file(&written);
            timed(
                Command::new("dd")
                    .arg(format!("if={}", records.display()))
                    .arg(format!("of={}", written.display()))
                    .arg("bs=64k"),
                None,
            )
        },
    );

    let megabytes: u64 = std::env::var("DS_BENCH_LOG_MB")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(289);
    // The summarised run: a fresh one, filled as its program would.
    let log = PathBuf::from(started["logFile"].as_str().expect("a log file"));
    let run = started["runId"].as_str().expect("a run id").to_string();
    let lines = if wanted("logs --summary") {
        probe_log(&log, megabytes << 20)
    } else {
        0
    };
    row(
        &format!("logs --summary, {megabytes} MB / {lines} lines (vs wc -l)"),
        "<= 4x",
        rounds.min(7),
        || timed(Command::new("wc").arg("-l").arg(&log), None),
        || {
            timed(
                sidecar(&root).args(["logs", "--summary", "--json", "--run", &run]),
                None,
            )
        },
    );
    std::fs::remove_file(&log).unwrap();

    // Each language's loop in a workspace of its own (its session's only
    // logpoint: a Node whose module hooks start a thread of their own starts
    // it only for an ES module program), beside a copy with none.
    let node_goal = "<= 1.5x (<= 20 us a hit)";
    let mut interpreters = vec![(
        "python3".to_string(),
        "python3".to_string(),
        "py",
        PY_LOOP,
        "<= 1.2x",
        "<= 1.1x",
    )];
    for (node, version) in nodes() {
        interpreters.push((
            format!("node {version}"),
            node.clone(),
            "js",
            JS_LOOP,
            node_goal,
            "-",
        ));
        let name = format!("node {version}, ES module");
        interpreters.push((name, node, "mjs", JS_LOOP, node_goal, "-"));
    }
    for (index, (name, program, extension, source, goal, goal_plain)) in
        interpreters.into_iter().enumerate()
    {
        if !has(&program) {
            println!("{program}: not found, its rows are skipped");
            continue;
        }
        let root = base.join(format!("loop-{index}-{extension}"));
        std::fs::create_dir_all(&root).unwrap();
        let (logged, plain) = (format!("loop.{extension}"), format!("plain.{extension}"));
        std::fs::write(root.join(&logged), source).unwrap();
        std::fs::write(root.join(&plain), source).unwrap();
        let mut server = Connection::spawn(&bin(), &root, false).unwrap();
        server.initialize(&root, json!({})).unwrap();
        server
            .request("debug/start", json!({"sessionId": "bench", "problem": "p"}))
            .unwrap();
        server
            .request(
                "debug/probeSnippet",
                json!({"file": logged, "kind": "logpoint", "line": 5, "variables": ["k", "n"]}),
            )
            .unwrap();
        let _ = server.shutdown();
        row(
            &format!("{name} logpoint, 1,000 hits (vs bare)"),
            goal,
            rounds,
            || timed(Command::new(&program).arg(&logged).current_dir(&root), None),
            || timed(sidecar(&root).args(["run", "--", &program, &logged]), None),
        );
        row(
            &format!("{name}, no logpoint in the file (vs bare)"),
            goal_plain,
            rounds,
            || timed(Command::new(&program).arg(&plain).current_dir(&root), None),
            || timed(sidecar(&root).args(["run", "--", &program, &plain]), None),
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
