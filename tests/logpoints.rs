//! Logpoints end to end, through the real binary: placed with
//! `debug/probeSnippet` (`kind: "logpoint"`), set by `debug-sidecar run` in
//! a real Python program under the real debugpy (from PyPI, installed by
//! scripts/test, its python named by DEBUG_SIDECAR_DEBUGPY_PYTHON), hits
//! recorded with their values, the source unchanged byte for byte, the exit
//! status passed through, a failing expression recorded, a moved or changed
//! line reported; and the ledger side: bounds, removal as cleanup, revival.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use support::*;

const CART: &str = r#"import sys

def total(items, discount):
    s = 0
    for price, qty in items:
        s += price * qty
    if discount > 100:
        s = s - discount
    return s

print("total:", total([(10, 2), (5, 1)], 150))
sys.exit(2)
"#;

/// PATH with the debugpy venv's bin first, so `python3` is its python.
fn debugpy_path() -> Option<std::ffi::OsString> {
    let python = installed_tool("DEBUG_SIDECAR_DEBUGPY_PYTHON")?;
    let bin = Path::new(&python).parent().unwrap().to_path_buf();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    Some(std::env::join_paths(dirs).unwrap())
}

type Answer = Result<Value, debug_sidecar::rpc::client::ClientError>;

fn place(server: &mut Connection, line: u32, variables: Value) -> Answer {
    server.request(
        "debug/probeSnippet",
        json!({"file": "cart.py", "kind": "logpoint", "line": line,
               "hypothesisId": "H1", "variables": variables}),
    )
}

#[test]
fn python_logpoints_record_values_without_touching_the_source() {
    let Some(path) = debugpy_path() else { return };
    let workspace = Workspace::new("logpoints-python");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    let mut server = initialized(root);
    let started = server
        .request(
            "debug/start",
            json!({"sessionId": "s1", "problem": "total is wrong"}),
        )
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    // Line 8 (`s = s - discount`): the loop's sum and the discount, and an
    // expression that fails.
    let placed = place(&mut server, 8, json!(["s", "discount", "missing_name"])).unwrap();
    assert_eq!(placed["probe"]["kind"], "logpoint");
    assert_eq!(placed["probe"]["state"], "live");
    assert_eq!(placed["snippet"], "");
    let id = placed["probe"]["id"].as_str().unwrap().to_string();
    // In the loop, hit once per item.
    place(&mut server, 6, json!(["price * qty"])).unwrap();

    let out = sidecar(root, &["run", "--", "python3", "cart.py"], Some(&path));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(out.stdout, b"total: -125\n", "passed through unchanged");
    assert_eq!(std::fs::read_to_string(root.join("cart.py")).unwrap(), CART);

    let lines = records(&log);
    let hits: Vec<&Value> = lines.iter().filter(|r| r["source"] == "logpoint").collect();
    assert_eq!(hits.len(), 3, "{lines:#?}");
    let discount = hits.iter().find(|h| h["probeId"] == id.as_str()).unwrap();
    assert_eq!(discount["hypothesisId"], "H1");
    assert_eq!(discount["location"], "cart.py:8");
    assert_eq!(discount["data"]["s"], 25);
    assert_eq!(discount["data"]["discount"], 150);
    let error = discount["data"]["missing_name"]["$error"].as_str().unwrap();
    assert!(error.starts_with("NameError"), "{error}");
    let products: Vec<&Value> = hits
        .iter()
        .filter(|h| h["location"] == "cart.py:6")
        .map(|h| &h["data"]["price * qty"])
        .collect();
    assert_eq!(products, [&json!(20), &json!(5)]);
    // The hits come before the program's last line and the exit record.
    let exit = lines.last().unwrap();
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["command"], json!(["python3", "cart.py"]));

    // The ledger and the blackboard show it; removing it is its cleanup.
    let ledger = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(ledger["live"], 2);
    let board = server.request("debug/context", json!({})).unwrap();
    let board = board["content"].as_str().unwrap();
    assert!(board.contains("cart.py:8 (logpoint)"), "{board}");
    let removed = server
        .request("debug/removeLogpoints", json!({"probeIds": [id]}))
        .unwrap();
    assert_eq!(removed["removed"], json!([id]));
    let ledger = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(ledger["live"], 1);
}

#[test]
fn a_changed_line_is_reported_and_a_moved_one_followed() {
    let Some(path) = debugpy_path() else { return };
    let workspace = Workspace::new("logpoints-moved");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    place(&mut server, 8, json!(["s"])).unwrap();
    place(&mut server, 7, json!(["discount"])).unwrap();
    // Two lines added above, and line 7 edited.
    let edited = CART
        .replace("import sys\n", "import sys\nimport os\nimport re\n")
        .replace("if discount > 100:", "if discount >= 100:");
    std::fs::write(root.join("cart.py"), &edited).unwrap();
    let out = sidecar(root, &["run", "--", "python3", "cart.py"], Some(&path));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("(cart.py:8): that line moved to line 10; set there"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(cart.py:7) is not set: the line changed"),
        "{stderr}"
    );
    let lines = records(&log);
    let notes: Vec<&Value> = lines.iter().filter(|r| r["source"] == "sidecar").collect();
    assert_eq!(notes.len(), 2, "{lines:#?}");
    let hits: Vec<&Value> = lines.iter().filter(|r| r["source"] == "logpoint").collect();
    assert_eq!(hits.len(), 1, "{lines:#?}");
    assert_eq!(hits[0]["location"], "cart.py:10");
    assert_eq!(hits[0]["data"]["s"], 25);
}

#[test]
fn without_debugpy_the_program_runs_plainly_and_run_says_so() {
    let workspace = Workspace::new("logpoints-no-debugpy");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    // A `python3` that cannot import debugpy: the machine's, with a path
    // that names no venv.
    let Some(bare) = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        return;
    };
    let has_debugpy = Command::new(bare)
        .args(["-c", "import debugpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_debugpy {
        eprintln!("skipped: {bare} can import debugpy");
        return;
    }
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    place(&mut server, 8, json!(["s"])).unwrap();
    let out = sidecar(root, &["run", "--", bare, "cart.py"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(out.stdout, b"total: -125\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("debugpy is not installed for")
            && stderr.contains("-m pip install debugpy"),
        "{stderr}"
    );
    let lines = records(&log);
    assert!(lines
        .iter()
        .any(|r| r["source"] == "sidecar" && r["message"].as_str().unwrap().contains("not set")));
    assert!(!lines.iter().any(|r| r["source"] == "logpoint"));
}

#[test]
fn logpoints_are_bounded_and_only_removal_cleans_them_up() {
    let workspace = Workspace::new("logpoints-ledger");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    std::fs::write(root.join("main.go"), "package main\n").unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let refused = |result: Answer| -> String { result.unwrap_err().to_string() };
    assert!(refused(place(&mut server, 99, json!(["s"]))).contains("12 line(s)"));
    assert!(refused(place(&mut server, 2, json!(["s"]))).contains("blank"));
    assert!(refused(place(&mut server, 8, json!([]))).contains("at least one"));
    assert!(refused(place(&mut server, 8, json!(["a\nb"]))).contains("one line"));
    let many: Vec<String> = (0..17).map(|i| format!("x{i}")).collect();
    assert!(refused(place(&mut server, 8, json!(many))).contains("at most 16"));
    let outside = server.request(
        "debug/probeSnippet",
        json!({"file": "../cart.py", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(outside).contains("outside the workspace"));
    let go = server.request(
        "debug/probeSnippet",
        json!({"file": "main.go", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(go).contains("use a source probe"));
    // TypeScript needs a compiler between it and Node: refused, not placed.
    std::fs::write(root.join("app.ts"), "const s: number = 1;\n").unwrap();
    let ts = server.request(
        "debug/probeSnippet",
        json!({"file": "app.ts", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(ts).contains("TypeScript included"));
    for _ in 0..32 {
        place(&mut server, 8, json!(["s"])).unwrap();
    }
    assert!(refused(place(&mut server, 8, json!(["s"]))).contains("at most 32 live logpoints"));

    // A rescan does not touch them; Mark fixed waits for their removal.
    let ledger = server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    assert_eq!(ledger["live"], 32);
    server.request("debug/done", json!({})).unwrap();
    let stop = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stop["decision"], "block");
    let reason = stop["reason"].as_str().unwrap();
    assert!(reason.contains("remove_logpoints"), "{reason}");
    let source = server.request("debug/removeLogpoints", json!({"probeIds": ["p999"]}));
    assert!(refused(source).contains("not in the ledger"));
    let ids: Vec<String> = (1..=32).map(|i| format!("p{i}")).collect();
    server
        .request("debug/removeLogpoints", json!({"probeIds": ids}))
        .unwrap();
    let stop = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stop["decision"], "allow", "{stop}");
    let notice = stop["notice"].as_str().unwrap();
    assert!(notice.contains("Cleanup verified"), "{notice}");
    assert!(notice.contains("32 probe(s) removed"), "{notice}");
}

#[test]
fn a_revived_session_keeps_its_logpoints() {
    let workspace = Workspace::new("logpoints-revival");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    {
        let mut server = initialized(root);
        server
            .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
            .unwrap();
        place(&mut server, 8, json!(["s", "discount"])).unwrap();
    }
    // A new process reads state.json back.
    let mut server = initialized(root);
    let ledger = server
        .request("debug/probes", json!({"sessionId": "s1"}))
        .unwrap();
    let probe = &ledger["probes"][0];
    assert_eq!(probe["kind"], "logpoint");
    assert_eq!(probe["line"], 8);
    assert_eq!(probe["logpoint"]["variables"], json!(["s", "discount"]));
    assert_eq!(probe["state"], "live");
    // `check` lists it and stays clean: it is in no file.
    let out = sidecar(root, &["check", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["logpoints"][0]["probeId"], probe["id"]);
}
