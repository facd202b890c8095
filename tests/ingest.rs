//! The loopback ingest server as a browser and as busy devices meet it.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use support::*;

/// A session with a current run; returns its ingest URL.
fn session(server: &mut debug_sidecar::rpc::client::Connection) -> String {
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    started["ingestUrl"]
        .as_str()
        .expect("an ingest URL")
        .to_string()
}

/// A browser's exchange, by Python's standard HTTP client: a CORS preflight,
/// cross-origin posts, refusals. Prints one JSON object of statuses.
const BROWSER: &str = r#"
import http.client, json, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
def call(method, path, body=None, headers=None):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    r.read()
    return r.status, {k.lower(): v for k, v in r.getheaders()}
origin = {"Origin": "http://localhost:5173"}
pre = call("OPTIONS", url.path, headers={**origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
one = call("POST", url.path, json.dumps({"probeId": "p1", "data": {"x": 1}}), {**origin, "Content-Type": "application/json"})
nd = call("POST", url.path, '{"probeId":"p1","n":2}\n{"probeId":"p2","n":3}\n', {**origin, "Content-Type": "application/x-ndjson"})
wrong = call("POST", url.path[:-4] + "0000", '{"probeId":"p9"}', origin)
big = call("POST", url.path, "[" + ",".join(['{"probeId":"p9","pad":"' + "x" * 1000 + '"}'] * 1200) + "]", origin)
record = call("POST", url.path, json.dumps({"probeId": "p9", "pad": "x" * 70000}), origin)
bad = call("POST", url.path, "{not json", origin)
health = call("GET", "/health")
print(json.dumps({
    "preflight": pre[0], "allowOrigin": pre[1].get("access-control-allow-origin"),
    "allowMethods": pre[1].get("access-control-allow-methods"),
    "post": one[0], "postAllowOrigin": one[1].get("access-control-allow-origin"),
    "ndjson": nd[0], "wrongToken": wrong[0], "tooBig": big[0], "recordTooBig": record[0],
    "malformed": bad[0], "health": health[0],
}))
"#;

#[test]
fn a_browser_posts_across_origins_and_refusals_write_nothing() {
    let workspace = Workspace::new("ingest-browser");
    let mut server = initialized(&workspace.root);
    let url = session(&mut server);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 (the browser's HTTP client here) is not installed");
        return;
    }
    let output = Command::new("python3")
        .arg("-c")
        .arg(BROWSER)
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let statuses: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        statuses,
        json!({
            "preflight": 204, "allowOrigin": "*", "allowMethods": "POST, OPTIONS",
            "post": 204, "postAllowOrigin": "*", "ndjson": 204, "wrongToken": 403,
            "tooBig": 413, "recordTooBig": 413, "malformed": 400, "health": 200,
        })
    );
    let logs = server.request("debug/logs", json!({})).unwrap();
    let probes: Vec<&str> = logs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"]["probeId"].as_str().unwrap())
        .collect();
    assert_eq!(
        probes,
        ["p1", "p1", "p2"],
        "only accepted records were written"
    );
}

fn post_json(url: &str, body: &str) -> u16 {
    post(url, "Content-Type: application/json\r\n", body)
}

#[test]
fn concurrent_clients_lose_no_line_and_never_interleave() {
    let workspace = Workspace::new("ingest-busy");
    let mut server = initialized(&workspace.root);
    let url = session(&mut server);
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let url = url.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let pad = "y".repeat(3000 + client * 100 + i);
                    let body =
                        json!({"probeId": format!("c{client}"), "i": i, "pad": pad}).to_string();
                    assert_eq!(post_json(&url, &body), 204);
                }
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(summary["lines"], 400);
    assert_eq!(
        summary["malformed"]["count"], 0,
        "an interleaved line would not parse"
    );
    for probe in summary["probes"].as_array().unwrap() {
        assert_eq!(probe["count"], 100, "{probe}");
    }
}

#[test]
fn a_restarted_server_keeps_the_port_and_the_token() {
    let workspace = Workspace::new("ingest-restart");
    let mut server = initialized(&workspace.root);
    let url = session(&mut server);
    drop(server); // killed, as a crash would
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["ingestUrl"], url.as_str());
    assert_eq!(post_json(&url, r#"{"probeId":"p1"}"#), 204);
    // A line the ingest server appends is announced like a probe's.
    let appended = server
        .wait_for(
            "debug/logAppended",
            std::time::Duration::from_secs(10),
            |p| p["lines"] == 1,
        )
        .expect("the posted line is announced");
    assert_eq!(appended["run"], status["runId"]);
}

/// The TCP ports `pid` listens on (Linux: its socket descriptors matched
/// against the kernel's socket tables).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            let inode = target.strip_prefix("socket:[")?.strip_suffix(']')?;
            Some(inode.to_string())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for row in text.lines().skip(1) {
            let cols: Vec<&str> = row.split_whitespace().collect();
            // local_address is `ADDR:PORT` in hex; state 0A is LISTEN.
            if cols.len() > 9 && cols[3] == "0A" && inodes.iter().any(|i| i == cols[9]) {
                let port = cols[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports
}

/// An editor window opens `serve` whether or not anyone debugs (VS Code
/// would auto-forward a port it sees open): no port until a live debug
/// session needs the URL, none for a session that has ended, and a
/// restarted server opens one only because its session is live.
#[test]
#[cfg(target_os = "linux")]
fn the_ingest_server_starts_only_when_a_live_session_needs_it() {
    let workspace = Workspace::new("ingest-lazy");
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false);
    assert_eq!(listening_ports(server.pid()), Vec::<u16>::new());

    let url = session(&mut server);
    let port: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .expect("a port in the URL");
    assert_eq!(listening_ports(server.pid()), vec![port]);
    assert_eq!(post_json(&url, r#"{"probeId":"p1"}"#), 204);

    // A session that ended needs no server: a new window opens none for it.
    server.request("debug/abort", json!({})).unwrap();
    drop(server);
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false);
    assert_eq!(status["ingestUrl"], Value::Null);
    assert_eq!(listening_ports(server.pid()), Vec::<u16>::new());

    // A live session again: the server starts, on the recorded port.
    let url_again = session(&mut server);
    assert!(
        url_again.starts_with(&format!("http://127.0.0.1:{port}/")),
        "{url_again}"
    );
    assert_eq!(listening_ports(server.pid()), vec![port]);
}
