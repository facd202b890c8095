//! Benchmark of workspace state: one command's whole lock-read-apply-write
//! cycle, with and without fsync, against a baseline measured in the same
//! run (writing the same bytes to a file and renaming it, no lock, no JSON);
//! and how long a write in one `serve` process takes to reach the other
//! process's client as a notification, against a pipe round trip through
//! `cat`. Nothing here asserts a time.
//!
//! `cargo bench --bench state`

use debug_sidecar::core::machine::{apply, Command, ObservationInput};
use debug_sidecar::core::model::DebugState;
use debug_sidecar::rpc::client::Connection;
use debug_sidecar::workspace::store::{FileStore, Store};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
const CYCLES: usize = 2_000;
const PROPAGATIONS: usize = 200;

fn workspace(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("ds-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root.canonicalize().unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// One observation per cycle; the session keeps a bounded size by starting
/// over every 50 commands, so the file stays the size of a real session.
fn cycles(store: &mut FileStore) -> Vec<Duration> {
    let mut times = Vec::with_capacity(CYCLES);
    for i in 0..CYCLES {
        let command = if i % 50 == 0 {
            Command::Abort
        } else if i % 50 == 1 {
            Command::Start {
                problem: "the cart total is wrong".into(),
            }
        } else {
            Command::Observe(ObservationInput {
                text: format!("observation {i}"),
                request_ids: Vec::new(),
            })
        };
        let started = Instant::now();
        store
            .update("bench", i as u64 + 1, &mut |state: &DebugState| {
                Ok(apply(state, command.clone(), i as u64 + 1)
                    .map(|t| t.state)
                    .unwrap_or_else(|_| state.clone()))
            })
            .unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    times
}

/// The same bytes written to a temporary file and renamed, nothing else.
fn plain_writes(dir: &Path, bytes: &[u8], fsync: bool) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..CYCLES)
        .map(|_| {
            let started = Instant::now();
            let temp = dir.join("plain.tmp");
            let mut file = std::fs::File::create(&temp).unwrap();
            file.write_all(bytes).unwrap();
            if fsync {
                file.sync_all().unwrap();
            }
            std::fs::rename(&temp, dir.join("plain.json")).unwrap();
            if fsync {
                std::fs::File::open(dir).unwrap().sync_all().unwrap();
            }
            started.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn row(what: &str, value: Duration, baseline: Duration, target: &str) {
    println!(
        "{what:<52} {:>10.0} {:>10.0} {:>7.2}x  {target}",
        micros(value),
        micros(baseline),
        micros(value) / micros(baseline)
    );
}

fn main() {
    println!("debug-sidecar workspace state benchmark");
    println!(
        "{:<52} {:>10} {:>10} {:>8}  target",
        "figure (µs)", "sidecar", "baseline", "ratio"
    );
    let root = workspace("state");
    let state_dir = root.join(".debug-sidecar");
    // A warm-up pass, which also leaves a state file of typical size behind.
    cycles(&mut FileStore::new(&state_dir));
    let sample = std::fs::read(state_dir.join("sessions/bench/state.json")).unwrap();
    for (label, fsync) in [("with fsync", true), ("without fsync", false)] {
        let mut store = FileStore::new(&state_dir);
        if !fsync {
            store = store.without_fsync();
        }
        let times = cycles(&mut store);
        let plain = plain_writes(&root, &sample, fsync);
        row(
            &format!("lock-read-apply-write cycle p50, {label}"),
            percentile(&times, 0.5),
            percentile(&plain, 0.5),
            if fsync { "" } else { "< 1 ms" },
        );
        row(
            &format!("lock-read-apply-write cycle p99, {label}"),
            percentile(&times, 0.99),
            percentile(&plain, 0.99),
            "",
        );
    }
    println!(
        "  (baseline: write the same {} bytes to a temp file and rename it)",
        sample.len()
    );

    // Cross-process propagation: a write through server A reaches B's client.
    let root = workspace("propagation");
    let mut a = Connection::spawn(Path::new(BIN), &root, true).unwrap();
    let mut b = Connection::spawn(Path::new(BIN), &root, true).unwrap();
    a.initialize(&root, json!({})).unwrap();
    b.initialize(&root, json!({})).unwrap();
    a.request("debug/start", json!({"problem": "p"})).unwrap();
    b.wait_for("debug/stateChanged", Duration::from_secs(5), |_| true)
        .unwrap();
    let mut delays = Vec::with_capacity(PROPAGATIONS);
    for i in 0..PROPAGATIONS {
        let started = Instant::now();
        let revision = a
            .request("debug/observe", json!({"text": format!("o{i}")}))
            .unwrap()["revision"]
            .as_u64()
            .unwrap();
        b.wait_for("debug/stateChanged", Duration::from_secs(5), |s| {
            s["revision"].as_u64() == Some(revision)
        })
        .expect("B heard of A's write");
        delays.push(started.elapsed());
    }
    delays.sort();
    let echo = echo_round_trips();
    row(
        "write in A to notification at B's client, p50",
        percentile(&delays, 0.5),
        percentile(&echo, 0.5),
        "< 50 ms",
    );
    row(
        "write in A to notification at B's client, p99",
        percentile(&delays, 0.99),
        percentile(&echo, 0.99),
        "",
    );
    println!("  (baseline: a frame's round trip through `cat`)");
    let _ = std::fs::remove_dir_all(&root);
}

fn echo_round_trips() -> Vec<Duration> {
    let mut cat = Process::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = cat.stdin.take().unwrap();
    let mut stdout = BufReader::new(cat.stdout.take().unwrap());
    let mut times: Vec<Duration> = (0..PROPAGATIONS)
        .map(|i| {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "debug/observe"}).to_string();
            let started = Instant::now();
            writeln!(stdin, "{body}").unwrap();
            stdin.flush().unwrap();
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            started.elapsed()
        })
        .collect();
    let _ = cat.kill();
    let _ = cat.wait();
    times.sort();
    times
}
