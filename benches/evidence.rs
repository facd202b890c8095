//! Benchmark of runtime evidence, each figure against a baseline measured in
//! the same run: the probe scan against ripgrep over a large real tree, the
//! decision rescan (stamps, tracked and changed files) against the full walk
//! of the same tree, the
//! per-probe log summary against jq over a generated 1 GB log, and ingest
//! appends from 4 concurrent HTTP clients against 4 threads appending the
//! same lines to a file directly, and `debug/logAppended` latency against the
//! 100 ms gathering window it is designed to wait. Nothing here asserts a time.
//!
//! `cargo bench --bench evidence` (needs `rg` and `jq` for their baselines;
//! `DS_BENCH_TREE` picks the tree, `DS_BENCH_LOG_MB` the log size,
//! `DS_BENCH_SCAN_ONLY=1` stops after the scan figures).

use debug_sidecar::core::findings::Clues;
use debug_sidecar::rpc::client::Connection;
use debug_sidecar::workspace::scan::index::{decision_scan, ScanIndex};
use debug_sidecar::workspace::scan::ScanTarget;
use debug_sidecar::workspace::{logread, scan};
use serde_json::json;
use std::io::{BufWriter, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/http.rs"]
mod http;
use http::post;

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
const INGEST_POSTS: usize = 2_000;

fn row(what: &str, value: f64, baseline: f64, unit: &str, target: &str) {
    println!(
        "{what:<46} {value:>10.1} {baseline:>10.1} {unit:<6} {:>7.2}x  {target}",
        value / baseline
    );
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = None;
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        let out = f();
        let took = started.elapsed();
        best = Some(best.map_or(took, |b: Duration| b.min(took)));
        last = Some(out);
    }
    (best.unwrap_or_default(), last.expect("at least one run"))
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn tree_size(root: &Path) -> (u64, usize) {
    let (mut bytes, mut files) = (0, 0);
    for entry in ignore::WalkBuilder::new(root)
        .hidden(false)
        .build()
        .flatten()
    {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            bytes += entry.metadata().map_or(0, |m| m.len());
            files += 1;
        }
    }
    (bytes, files)
}

fn scan_figures() {
    let tree = std::env::var_os("DS_BENCH_TREE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src")))
        .expect("a tree to scan");
    let (bytes, files) = tree_size(&tree);
    println!(
        "scan tree: {} ({} files, {:.0} MB)",
        tree.display(),
        files,
        bytes as f64 / 1e6
    );
    let clues = Clues::new();
    let (ours, findings) = best_of(3, || {
        scan::scan_paths(&tree, std::slice::from_ref(&tree), &[], &clues)
    });
    decision_figures(&tree, ours);
    if !has("rg") {
        println!("  rg not found: no baseline (apt-get install ripgrep)");
        return;
    }
    let (rg, _) = best_of(3, || {
        Command::new("rg")
            .args([
                "-l",
                "--hidden",
                "-e",
                "debug-probe",
                "-e",
                "agent log",
                "-e",
                "/ingest/",
            ])
            .arg(&tree)
            .output()
            .expect("rg runs")
    });
    row(
        "scan (all markers and foreign probes) vs rg -l",
        ours.as_secs_f64() * 1e3,
        rg.as_secs_f64() * 1e3,
        "ms",
        "≤ 1.5x",
    );
    println!(
        "  found {} probes and foreign probes in {} files read",
        findings.found.len(),
        findings.files_read
    );
}

/// The rescan every decision runs, against the full walk of the same tree:
/// a `stat` per file and directory, and reads of a handful of tracked files
/// (the ledger's) and of what changed. The tree is not changed here.
fn decision_figures(tree: &Path, full: Duration) {
    let tracked: Vec<String> = ignore::WalkBuilder::new(tree)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .take(6)
        .filter_map(|e| {
            Some(
                e.path()
                    .strip_prefix(tree)
                    .ok()?
                    .to_string_lossy()
                    .into_owned(),
            )
        })
        .collect();
    let target = ScanTarget {
        root: tree.to_path_buf(),
        clues: Clues::new(),
        tracked,
        state_dir: None,
    };
    let (_, index, _) = decision_scan(&target, None);
    let state = std::env::temp_dir().join(format!("ds-bench-index-{}", std::process::id()));
    std::fs::create_dir_all(&state).unwrap();
    index.save(&state).unwrap();
    let (decision, stats) = best_of(5, || {
        // A hook process loads the index from disk each time.
        let index = ScanIndex::load(&state).expect("the index reads back");
        decision_scan(&target, Some(index)).2
    });
    let (load, _) = best_of(5, || ScanIndex::load(&state));
    println!(
        "  of which loading the index: {:.1} ms",
        load.as_secs_f64() * 1e3
    );
    let index_bytes = std::fs::metadata(state.join("scan-index")).map_or(0, |m| m.len());
    let _ = std::fs::remove_dir_all(&state);
    row(
        "full walk vs decision rescan (same tree)",
        full.as_secs_f64() * 1e3,
        decision.as_secs_f64() * 1e3,
        "ms",
        "≥ 20x",
    );
    println!(
        "  decision rescan: {} stamps, {} files read, index {:.1} MB{}",
        stats.stamped,
        stats.read,
        index_bytes as f64 / 1e6,
        if stats.full_walk {
            " (fell back to a full walk)"
        } else {
            ""
        }
    );
}

/// A run log of about `megabytes` MB: 20 probes, varied data.
fn generate_log(file: &Path, megabytes: u64) -> u64 {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(file).unwrap());
    let mut written = 0u64;
    let mut i = 0u64;
    while written < megabytes * 1_000_000 {
        let line = format!(
            "{{\"sessionId\":\"bench\",\"hypothesisId\":\"H{}\",\"probeId\":\"p{}\",\"location\":\"src/cart.rs:{}\",\"message\":\"total before discount\",\"data\":{{\"count\":{},\"total\":{},\"user\":\"u{}\"}},\"timestamp\":{}}}\n",
            i % 4,
            i % 20,
            100 + i % 20,
            i % 7,
            i * 13 % 100_000,
            i % 1000,
            1_795_000_000_000 + i
        );
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        i += 1;
    }
    out.flush().unwrap();
    written
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn summary_figures(dir: &Path) {
    let megabytes: u64 = std::env::var("DS_BENCH_LOG_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let file = dir.join("run.jsonl");
    let size = generate_log(&file, megabytes);
    // The summary runs in a child process so its peak memory is its own.
    let started = Instant::now();
    let child = Command::new(std::env::current_exe().unwrap())
        .env("DS_BENCH_SUMMARY_ONLY", &file)
        .output()
        .unwrap();
    let ours = started.elapsed();
    let report = String::from_utf8_lossy(&child.stdout).trim().to_string();
    println!(
        "log: {:.0} MB generated; summary child reports: {report}",
        size as f64 / 1e6
    );
    if !has("jq") {
        println!("  jq not found: no baseline (apt-get install jq)");
        return;
    }
    let started = Instant::now();
    let jq = Command::new("jq")
        .args(["-n", "-c", "reduce inputs as $l ({}; .[$l.probeId] += 1)"])
        .arg(&file)
        .output()
        .unwrap();
    let jq_time = started.elapsed();
    assert!(
        jq.status.success(),
        "{}",
        String::from_utf8_lossy(&jq.stderr)
    );
    row(
        "per-probe summary vs jq (counts only)",
        ours.as_secs_f64(),
        jq_time.as_secs_f64(),
        "s",
        "≤ 0.2x",
    );
    let _ = std::fs::remove_file(file);
}

fn summary_only(file: &Path) {
    let summary =
        logread::summarize(file, &debug_sidecar::core::redact::Redactor::default()).unwrap();
    println!(
        "{} lines, {} probes, peak RSS {:.1} MiB",
        summary.lines,
        summary.probes.len(),
        peak_rss_kib() as f64 / 1024.0
    );
}

/// POST `body` over a kept-alive connection; the status code.
/// A server on a new workspace at `root`, with a session started.
fn started_session(root: &Path) -> (Connection, serde_json::Value) {
    std::fs::create_dir_all(root).unwrap();
    let mut server = Connection::spawn(Path::new(BIN), root, true).unwrap();
    server.initialize(root, json!({})).unwrap();
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    (server, started)
}

fn ingest_figures(dir: &Path) {
    let (mut server, started) = started_session(&dir.join("ingest"));
    let url = started["ingestUrl"].as_str().unwrap().to_string();
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h.to_string(), format!("/{p}")))
        .unwrap();
    let body = |client: usize, i: usize| {
        json!({"probeId": format!("c{client}"), "i": i, "data": {"total": i * 7, "items": [1, 2, 3]}}).to_string()
    };
    let clock = Instant::now();
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (host, path) = (host.clone(), path.clone());
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&host).unwrap();
                stream.set_nodelay(true).unwrap();
                for i in 0..INGEST_POSTS {
                    assert_eq!(post(&mut stream, &host, &path, &body(client, i)), 204);
                }
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    let ours = clock.elapsed();
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    let lines = summary["lines"].as_u64().unwrap();
    let malformed = summary["malformed"]["count"].as_u64().unwrap();
    // Baseline: the same lines appended by 4 threads straight to a file.
    let file = dir.join("direct.jsonl");
    let clock = Instant::now();
    let writers: Vec<_> = (0..4)
        .map(|client| {
            let file = file.clone();
            std::thread::spawn(move || {
                let mut handle = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(file)
                    .unwrap();
                for i in 0..INGEST_POSTS {
                    handle
                        .write_all(format!("{}\n", body(client, i)).as_bytes())
                        .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let direct = clock.elapsed();
    let total = (4 * INGEST_POSTS) as f64;
    row(
        "ingest appends/s, 4 HTTP clients vs direct",
        total / ours.as_secs_f64(),
        total / direct.as_secs_f64(),
        "/s",
        "",
    );
    println!(
        "  {lines} of {} lines arrived, {malformed} malformed (interleaved) lines",
        4 * INGEST_POSTS
    );
}

/// From a probe's append to the client's `debug/logAppended`, one line at a
/// time, then for a burst of 100,000 lines.
fn tail_figures(dir: &Path) {
    let (mut server, started) = started_session(&dir.join("tail"));
    let log = PathBuf::from(started["logFile"].as_str().unwrap());
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let wait = Duration::from_secs(10);
    let mut latencies = Vec::new();
    for i in 1..=40u64 {
        let clock = Instant::now();
        writeln!(file, r#"{{"probeId":"p1","data":{i}}}"#).unwrap();
        server
            .wait_for("debug/logAppended", wait, |p| p["lines"] == i)
            .expect("announced");
        latencies.push(clock.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    latencies.sort();
    let window = debug_sidecar::workspace::watch::LOG_GATHER.as_secs_f64() * 1e3;
    let p50 = latencies[latencies.len() / 2].as_secs_f64() * 1e3;
    let p99 = latencies[latencies.len() - 1].as_secs_f64() * 1e3;
    row(
        "append to logAppended p50 vs gather window",
        p50,
        window,
        "ms",
        "",
    );
    row(
        "append to logAppended max vs gather window",
        p99,
        window,
        "ms",
        "",
    );

    let burst = 100_000u64;
    let mut writer = BufWriter::with_capacity(4096, file);
    let clock = Instant::now();
    for i in 0..burst {
        writeln!(writer, r#"{{"probeId":"p2","data":{i}}}"#).unwrap();
    }
    writer.flush().unwrap();
    let written = clock.elapsed();
    let mut announcements = 0;
    let last = 40 + burst;
    loop {
        let params = server
            .wait_for("debug/logAppended", wait, |_| true)
            .expect("the burst is announced");
        announcements += 1;
        if params["lines"] == last {
            break;
        }
    }
    let announced = clock.elapsed();
    row(
        "100k-line burst: written to last announcement",
        announced.as_secs_f64() * 1e3,
        written.as_secs_f64() * 1e3,
        "ms",
        "",
    );
    println!("  {announcements} announcements for the burst");
}

fn main() {
    if let Some(file) = std::env::var_os("DS_BENCH_SUMMARY_ONLY") {
        summary_only(Path::new(&file));
        return;
    }
    let dir = std::env::temp_dir().join(format!("ds-bench-evidence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("debug-sidecar evidence benchmark");
    println!(
        "{:<46} {:>10} {:>10} {:<6} {:>8}  target",
        "figure", "sidecar", "baseline", "unit", "ratio"
    );
    scan_figures();
    if std::env::var_os("DS_BENCH_SCAN_ONLY").is_some() {
        return;
    }
    ingest_figures(&dir);
    tail_figures(&dir);
    summary_figures(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}
