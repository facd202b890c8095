//! Probes for programs elsewhere (issue 32): a session's listener for a
//! target, started by `debug/probeSnippet`, admitting that session's token
//! only, mapping a container's paths back to the workspace, and gone when
//! the session ends; `lan` bound to the machine's network address alone,
//! in a network namespace of its own.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;

/// The listener record the sidecar keeps for a target of the session.
fn listening(root: &Path, session: &str, target: &str) -> Option<Value> {
    let file = root
        .join(".debug-sidecar/sessions")
        .join(session)
        .join(format!("ingest-{target}.json"));
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

fn pid_alive(pid: u64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Writes `.debug-sidecar/targets.json` as the person would (their own,
/// not writable by others).
fn settings(root: &Path, text: &str) {
    let file = root.join(".debug-sidecar/targets.json");
    std::fs::write(&file, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn an_emulator_target_posts_through_a_listener_that_ends_with_its_session() {
    let workspace = Workspace::new("target-emulator");
    let root = &workspace.root;
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/cart.py"), "total = 1\n").unwrap();
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let session = started["sessionId"].as_str().unwrap().to_string();
    settings(root, r#"{"paths": {"/app": "."}}"#);
    // The model names the file as the container shows it.
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": "/app/src/cart.py", "target": "android-emulator", "variables": ["total"]}),
        )
        .unwrap();
    assert_eq!(placed["probe"]["file"], "src/cart.py", "{placed}");
    let snippet = placed["snippet"].as_str().unwrap();
    let record = listening(root, &session, "android-emulator").expect("a listener record");
    let port = record["port"].as_u64().unwrap();
    assert_eq!(record["bind"], "127.0.0.1", "{record}");
    assert!(
        snippet.contains(&format!("http://10.0.2.2:{port}/ingest/")),
        "{snippet}"
    );
    assert!(
        !snippet.contains(".jsonl"),
        "a posting block names no file: {snippet}"
    );
    let note = placed["note"].as_str().unwrap();
    assert!(
        note.contains("android-emulator") && note.contains(&format!("127.0.0.1:{port}")),
        "{note}"
    );
    let board = server.request("debug/context", json!({})).unwrap();
    let board_text = board.to_string();
    assert!(
        board_text.contains("Listening for target `android-emulator`"),
        "{board_text}"
    );
    // A second probe for the same target reuses the listener.
    let again = server
        .request(
            "debug/probeSnippet",
            json!({"file": "src/cart.py", "target": "android-emulator"}),
        )
        .unwrap();
    let pid = record["pid"].as_u64().unwrap();
    assert_eq!(
        listening(root, &session, "android-emulator").unwrap()["pid"],
        pid
    );
    assert!(again["snippet"]
        .as_str()
        .unwrap()
        .contains(&format!(":{port}/ingest/")));

    // What the emulator's program posts, as it sees its paths.
    let token = snippet
        .split("/ingest/")
        .nth(1)
        .unwrap()
        .chars()
        .take(32)
        .collect::<String>();
    let url = format!("http://127.0.0.1:{port}/ingest/{token}");
    let line = json!({"probeId": "p1", "location": "/app/src/cart.py:1", "data": {"total": 1}});
    assert_eq!(post(&url, "", &line.to_string()), 204);
    let wrong = format!("http://127.0.0.1:{port}/ingest/{}", "0".repeat(32));
    assert_eq!(post(&wrong, "", &line.to_string()), 403);
    let logs = server.request("debug/logs", json!({})).unwrap();
    let locations: Vec<&str> = logs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["entry"]["location"].as_str())
        .collect();
    assert_eq!(locations, ["src/cart.py:1"], "{logs}");

    // The session ends: so does its listener, and the port is closed.
    server.request("debug/abort", json!({})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pid_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!pid_alive(pid), "the listener outlived its session");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port as u16)).is_err());
    assert!(listening(root, &session, "android-emulator").is_none());
}

#[test]
fn a_target_that_cannot_be_reached_registers_no_probe() {
    let workspace = Workspace::new("target-refused");
    let root = &workspace.root;
    std::fs::write(root.join("main.c"), "int main(void) { return 0; }\n").unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    // C has no block that posts.
    let refused = server
        .request(
            "debug/probeSnippet",
            json!({"file": "main.c", "target": "docker"}),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("cannot post"), "{refused}");
    // A logpoint is set by `run` on this machine.
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let refused = server
        .request(
            "debug/probeSnippet",
            json!({"file": "a.py", "kind": "logpoint", "line": 1, "target": "lan"}),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("source probe"), "{refused}");
    let probes = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(probes["probes"], json!([]), "{probes}");
}

/// `lan` in a network namespace whose only card has 192.168.77.5: the
/// listener binds that address alone (loopback refuses), a program posts
/// through it, and it is gone when the session ends. Needs `unshare -n`
/// (root), as the harness lab does.
#[test]
fn a_lan_target_binds_the_network_address_only_while_the_session_lasts() {
    if !Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: no network namespace here (unshare -n needs root)");
        return;
    }
    let workspace = Workspace::new("target-lan");
    let root = &workspace.root;
    std::fs::write(root.join("app.py"), "x = 1\n").unwrap();
    // Everything in one namespace: the sidecar and the "device" posting to
    // it, driven by a script that prints what it saw as JSON.
    let script = format!(
        r#"set -e
ip link set lo up
ip link add eth9 type bridge
ip addr add 192.168.77.5/24 dev eth9
ip link set eth9 up
ip route add default via 192.168.77.1
cd {root}
{bin} start 'lan probe' >/dev/null
python3 - {bin} <<'PY'
import json, subprocess, sys, time, urllib.request, socket, os
bin = sys.argv[1]
mcp = subprocess.Popen([bin, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def rpc(id, method, params):
    mcp.stdin.write(json.dumps({{"jsonrpc": "2.0", "id": id, "method": method, "params": params}}) + "\n")
    mcp.stdin.flush()
    while True:
        message = json.loads(mcp.stdout.readline())
        if message.get("id") == id:
            return message
rpc(1, "initialize", {{"protocolVersion": "2025-03-26", "capabilities": {{}}, "clientInfo": {{"name": "t", "version": "0"}}}})
mcp.stdin.write(json.dumps({{"jsonrpc": "2.0", "method": "notifications/initialized"}}) + "\n")
mcp.stdin.flush()
placed = rpc(2, "tools/call", {{"name": "probe_snippet", "arguments": {{"file": "app.py", "target": "lan", "variables": ["x"]}}}})
text = placed["result"]["content"][0]["text"]
mcp.stdin.close()
mcp.wait()
sessions = os.listdir(".debug-sidecar/sessions")
record = None
for s in sessions:
    path = os.path.join(".debug-sidecar/sessions", s, "ingest-lan.json")
    if os.path.exists(path):
        record = json.load(open(path))
out = {{"text": text, "record": record}}
port = record["port"]
def refused(host):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return False
    except OSError:
        return True
out["loopbackRefused"] = refused("127.0.0.1")
# The block as the model got it, run as the device's program would.
block = text.split("markers:\n\n", 1)[1].split("\n\n", 1)[0]
program = "x = 41\n" + block + "\nprint('ran')\n"
out["ran"] = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True).stdout
# The MCP server is gone: the listener stays while the session lasts.
out["aliveAfterMcp"] = os.path.exists("/proc/%d" % record["pid"])
out["logs"] = subprocess.run([bin, "logs", "--json"], capture_output=True, text=True).stdout
subprocess.run([bin, "abort"], capture_output=True)
deadline = time.time() + 10
while os.path.exists("/proc/%d" % record["pid"]) and time.time() < deadline:
    time.sleep(0.1)
out["aliveAfterEnd"] = os.path.exists("/proc/%d" % record["pid"])
out["lanRefusedAfterEnd"] = refused("192.168.77.5")
print(json.dumps(out))
PY
"#,
        root = root.display(),
        bin = BIN
    );
    let output = Command::new("unshare")
        .args(["-n", "sh", "-c", &script])
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    let text = seen["text"].as_str().unwrap();
    assert_eq!(seen["record"]["bind"], "192.168.77.5", "{seen}");
    assert!(text.contains("http://192.168.77.5:"), "{text}");
    assert!(
        text.contains("`lan`") && text.contains("addresses.lan"),
        "{text}"
    );
    assert_eq!(seen["loopbackRefused"], true, "{seen}");
    assert_eq!(seen["ran"], "ran\n", "{seen}");
    assert_eq!(seen["aliveAfterMcp"], true, "{seen}");
    let logs = seen["logs"].as_str().unwrap();
    assert!(
        logs.contains("\"x\":41") || logs.contains("\"x\": 41"),
        "the device's line did not reach the run: {logs}"
    );
    assert_eq!(seen["aliveAfterEnd"], false, "{seen}");
    assert_eq!(seen["lanRefusedAfterEnd"], true, "{seen}");
}

/// Issue 35: page code in a `.ts` or `.js` file gets the block that posts
/// (a Node block would find no `process` there and log nothing), told from
/// the file's own text or from its project (a DOM tsconfig beside a
/// bundler), and the note names the page's Content Security Policy; Node
/// code in the same workspace keeps the Node block, and a language asked
/// for is taken as asked.
#[test]
fn page_code_in_a_ts_file_gets_the_posting_block_and_its_csp_is_named() {
    let workspace = Workspace::new("target-page-code");
    let root = &workspace.root;
    let files = [
        (
            "web/tsconfig.json",
            "{\"compilerOptions\": {\"lib\": [\"es2022\", \"dom\"], \"types\": []}}\n",
        ),
        ("web/vite.config.ts", "export default {};\n"),
        (
            "web/index.html",
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'\">\n",
        ),
        (
            "web/src/money.ts",
            "export const cents = (n: number) => n * 100;\n",
        ),
        (
            "web/src/title.js",
            "export const title = () => document.title;\n",
        ),
        (
            "api/server.ts",
            "import { readFileSync } from \"node:fs\";\nexport const f = readFileSync;\n",
        ),
    ];
    let mut server = live_session_with(root, &files);
    let place = |server: &mut debug_sidecar::rpc::client::Connection,
                 file: &str,
                 language: Option<&str>| {
        let mut params = json!({"file": file, "variables": ["n"]});
        if let Some(language) = language {
            params["language"] = json!(language);
        }
        server.request("debug/probeSnippet", params).unwrap()
    };
    let money = place(&mut server, "web/src/money.ts", None);
    assert_eq!(money["language"], "browser", "{money}");
    let snippet = money["snippet"].as_str().unwrap();
    assert!(snippet.contains("fetch(\"http://127.0.0.1:"), "{snippet}");
    assert!(snippet.contains("globalThis.console.warn("), "{snippet}");
    let note = money["note"].as_str().unwrap();
    assert!(note.contains("This file runs in a page (its tsconfig has the DOM library and not Node's types, and the project has vite.config.ts)"), "{note}");
    assert!(
        note.contains("web/index.html sets a Content Security Policy: its connect-src must allow http://127.0.0.1:"),
        "{note}"
    );
    let title = place(&mut server, "web/src/title.js", None);
    assert_eq!(title["language"], "browser");
    assert!(title["note"]
        .as_str()
        .unwrap()
        .contains("(it uses `document`)"));
    let api = place(&mut server, "api/server.ts", None);
    assert_eq!(api["language"], "typescript", "{api}");
    assert!(api["note"].is_null(), "{api}");
    let asked = place(&mut server, "web/src/money.ts", Some("typescript"));
    assert_eq!(asked["language"], "typescript", "{asked}");
    assert!(asked["snippet"]
        .as_str()
        .unwrap()
        .contains("getBuiltinModule"));
}

/// Issue 35: code in a Deno project (a `deno.json` above it) or code that
/// uses `Deno` gets Deno's block, which checks its permission instead of
/// opening Deno's prompt, and the note says which flag the program must run
/// with; Node code beside it keeps the Node block.
#[test]
fn deno_code_gets_the_block_that_never_prompts_and_the_flag_is_named() {
    let workspace = Workspace::new("target-deno-code");
    let root = &workspace.root;
    let files = [
        ("edge/deno.json", "{\"tasks\": {}}\n"),
        (
            "edge/main.ts",
            "export const cents = (n: number) => n * 100;\n",
        ),
        (
            "tools/read.js",
            "const text = Deno.readTextFileSync(\"a\");\n",
        ),
        ("node/server.js", "module.exports = {};\n"),
        // A Deno project's front end runs in a page: its own signs win.
        (
            "edge/island.ts",
            "export const title = () => document.title;\n",
        ),
    ];
    let mut server = live_session_with(root, &files);
    let mut place = |file: &str| {
        server
            .request(
                "debug/probeSnippet",
                json!({"file": file, "variables": ["n"]}),
            )
            .unwrap()
    };
    for (file, why) in [
        ("edge/main.ts", "the project has edge/deno.json"),
        ("tools/read.js", "it uses `Deno`"),
    ] {
        let placed = place(file);
        assert_eq!(placed["language"], "deno", "{placed}");
        let snippet = placed["snippet"].as_str().unwrap();
        assert!(
            snippet.contains("Deno.permissions.querySync({ name: \"write\""),
            "{snippet}"
        );
        let note = placed["note"].as_str().unwrap();
        assert!(
            note.contains(&format!("This file runs under Deno ({why})")),
            "{note}"
        );
        assert!(
            note.contains("the program must run with --allow-write"),
            "{note}"
        );
    }
    let node = place("node/server.js");
    assert_eq!(node["language"], "javascript", "{node}");
    let island = place("edge/island.ts");
    assert_eq!(island["language"], "browser", "{island}");
}

/// A live session served in `root`, which holds `files` (path, text).
fn live_session_with(
    root: &Path,
    files: &[(&str, &str)],
) -> debug_sidecar::rpc::client::Connection {
    for (file, text) in files {
        std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
        std::fs::write(root.join(file), text).unwrap();
    }
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    server
}
