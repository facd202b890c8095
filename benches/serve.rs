//! Benchmark of `debug-sidecar serve` over real pipes, each figure printed
//! beside a baseline measured in the same run: the same frames through a
//! trivial echo process (`cat`). Shared machines are noisy, so ratios matter
//! more than absolute times; nothing here asserts a time.
//!
//! `cargo bench --bench serve` (the binary is built with the bench profile).

use debug_sidecar::rpc::client::read_frame;
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_debug-sidecar");
const ROUND_TRIPS: usize = 2_000;
const NOTIFICATIONS: usize = 100_000;
const RSS_REQUESTS: usize = 10_000;
const COLD_STARTS: usize = 30;

struct Pipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Pipe {
    fn spawn(program: &str, args: &[&str], cwd: &Path) -> Pipe {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Pipe {
            child,
            stdin,
            stdout,
        }
    }

    fn server(root: &Path) -> Pipe {
        Pipe::spawn(BIN, &["serve"], root)
    }

    fn echo(root: &Path) -> Pipe {
        Pipe::spawn("cat", &[], root)
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        read_frame(&mut self.stdout).unwrap().expect("a frame")
    }

    /// Send a request and read until its answer (the echo returns the request itself).
    fn round_trip(&mut self, message: &Value) -> Duration {
        let started = Instant::now();
        self.send(message);
        loop {
            let reply = self.receive();
            if reply.get("id") == message.get("id") {
                return started.elapsed();
            }
        }
    }

    fn initialize(&mut self, root: &Path) {
        let uri = format!("file://{}", root.display());
        self.round_trip(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"capabilities": {}, "workspaceFolders": [{"uri": uri, "name": "w"}]}}));
        self.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(id: usize, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn latencies(pipe: &mut Pipe, method: &str, params: &Value) -> (Duration, Duration) {
    for id in 0..100 {
        pipe.round_trip(&request(1_000_000 + id, method, params.clone()));
    }
    let mut times: Vec<Duration> = (0..ROUND_TRIPS)
        .map(|id| pipe.round_trip(&request(id + 1, method, params.clone())))
        .collect();
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

fn row(what: &str, value: String, baseline: String, ratio: f64, target: &str) {
    println!("{what:<50} {value:>14} {baseline:>14} {ratio:>7.2}x  {target}");
}

fn workspace() -> PathBuf {
    let root = std::env::temp_dir().join(format!("ds-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("app.sh"), "echo hi\n").unwrap();
    root.canonicalize().unwrap()
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let root = workspace();
    println!("debug-sidecar serve benchmark ({BIN})");
    println!(
        "{:<50} {:>14} {:>14} {:>8}  target",
        "figure", "sidecar", "echo (cat)", "ratio"
    );

    // Round trips.
    let mut server = Pipe::server(&root);
    server.initialize(&root);
    server.round_trip(&request(
        9_000_000,
        "debug/start",
        json!({"problem": "the cart total is wrong"}),
    ));
    let _ = server.receive(); // its debug/stateChanged
    let mut echo = Pipe::echo(&root);
    let status = json!({});
    let messages: Vec<Value> = (0..20)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {i}")}))
        .collect();
    let context = json!({ "messages": messages });
    for (label, method, params) in [
        ("debug/status", "debug/status", &status),
        ("debug/context", "debug/context", &status),
        (
            "debug/context, 20 messages to sync",
            "debug/context",
            &context,
        ),
    ] {
        let (p50, p99) = latencies(&mut server, method, params);
        let (e50, e99) = latencies(&mut echo, method, params);
        row(
            &format!("{label}: round trip p50 (µs)"),
            format!("{:.0}", micros(p50)),
            format!("{:.0}", micros(e50)),
            micros(p50) / micros(e50),
            "≤ 3x",
        );
        row(
            &format!("{label}: round trip p99 (µs)"),
            format!("{:.0}", micros(p99)),
            format!("{:.0}", micros(e99)),
            micros(p99) / micros(e99),
            "",
        );
    }

    // Resident memory after many requests.
    for id in 0..RSS_REQUESTS {
        server.round_trip(&request(20_000_000 + id, "debug/status", json!({})));
    }
    let rss = server.rss_kib();
    row(
        &format!("RSS after {RSS_REQUESTS} requests (MiB)"),
        format!("{:.1}", rss as f64 / 1024.0),
        format!("{:.1}", echo.rss_kib() as f64 / 1024.0),
        rss as f64 / echo.rss_kib().max(1) as f64,
        "< 15 MiB",
    );
    drop(server);

    // Notification throughput: 100,000 turn/event deltas in bursts of identical kinds.
    let kinds = ["reasoning", "toolCall", "content"];
    let events: Vec<Value> = (0..NOTIFICATIONS)
        .map(|i| json!({"jsonrpc": "2.0", "method": "turn/event", "params": {"kind": kinds[(i / 1000) % 3]}}))
        .collect();
    let (server_time, changes) = {
        let mut server = Pipe::server(&root);
        server.initialize(&root);
        let Pipe {
            stdin,
            stdout,
            child,
        } = &mut server;
        let started = Instant::now();
        let counted = thread::scope(|scope| {
            // Done when the barrier's answer and the last event's
            // notification (`connecting`, from the final turn start) are in:
            // a notification may trail the answer that follows it.
            let reader = scope.spawn(|| {
                let (mut changes, mut answered, mut last) = (0, false, false);
                while !(answered && last) {
                    let message = read_frame(stdout).unwrap().expect("a frame");
                    if message["method"] == "turn/stateChanged" {
                        changes += 1;
                        last = message["params"]["state"] == "connecting";
                    }
                    answered |= message["id"] == 77;
                }
                changes
            });
            let mut frames = Vec::with_capacity(NOTIFICATIONS * 90);
            for event in events.iter().chain([&json!({"jsonrpc": "2.0", "method": "turn/event", "params": {"kind": "turnStart", "source": "user"}})]) {
                let body = event.to_string();
                write!(frames, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
            }
            let barrier = request(77, "turn/state", json!({})).to_string();
            write!(frames, "Content-Length: {}\r\n\r\n{barrier}", barrier.len()).unwrap();
            stdin.write_all(&frames).unwrap();
            stdin.flush().unwrap();
            reader.join().unwrap()
        });
        let _ = child;
        (started.elapsed(), counted)
    };
    let echo_time = {
        let mut echo = Pipe::echo(&root);
        let Pipe { stdin, stdout, .. } = &mut echo;
        let started = Instant::now();
        thread::scope(|scope| {
            let reader = scope.spawn(|| {
                for _ in 0..NOTIFICATIONS {
                    read_frame(stdout).unwrap().expect("a frame");
                }
            });
            let mut frames = Vec::with_capacity(NOTIFICATIONS * 90);
            for event in &events {
                let body = event.to_string();
                write!(frames, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
            }
            stdin.write_all(&frames).unwrap();
            stdin.flush().unwrap();
            reader.join().unwrap();
        });
        started.elapsed()
    };
    row(
        &format!("{NOTIFICATIONS} turn/event notifications (ms)"),
        format!("{:.0}", server_time.as_secs_f64() * 1e3),
        format!("{:.0}", echo_time.as_secs_f64() * 1e3),
        server_time.as_secs_f64() / echo_time.as_secs_f64(),
        "",
    );
    println!(
        "{:<50} {:>14} {:>14}",
        "  turn/event per second",
        format!("{:.0}", NOTIFICATIONS as f64 / server_time.as_secs_f64()),
        format!("{:.0}", NOTIFICATIONS as f64 / echo_time.as_secs_f64())
    );
    println!(
        "{:<50} {:>14}   (100 bursts of 1000 identical deltas, then a turn start: 101 expected)",
        "  turn/stateChanged sent", changes
    );

    // Cold start: spawn to the initialize answer.
    let mut starts: Vec<Duration> = (0..COLD_STARTS)
        .map(|_| {
            let started = Instant::now();
            let mut server = Pipe::server(&root);
            server.initialize(&root);
            started.elapsed()
        })
        .collect();
    let mut echo_starts: Vec<Duration> = (0..COLD_STARTS)
        .map(|_| {
            let started = Instant::now();
            let mut echo = Pipe::echo(&root);
            echo.round_trip(&request(0, "initialize", json!({})));
            started.elapsed()
        })
        .collect();
    starts.sort();
    echo_starts.sort();
    let (cold, echo_cold) = (percentile(&starts, 0.5), percentile(&echo_starts, 0.5));
    row(
        "cold start to initialize answer, p50 (ms)",
        format!("{:.1}", cold.as_secs_f64() * 1e3),
        format!("{:.1}", echo_cold.as_secs_f64() * 1e3),
        cold.as_secs_f64() / echo_cold.as_secs_f64(),
        "< 20 ms",
    );
    let _ = std::fs::remove_dir_all(&root);
}
