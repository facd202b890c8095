//! Runtime evidence over `serve`: the probe ledger with foreign probes, run
//! logs in pages and summaries, and artifacts.

mod support;

use debug_sidecar::rpc::client::ClientError;
use serde_json::json;
use std::io::Write;
use support::*;

#[test]
fn the_ledger_shows_live_missing_untracked_and_foreign_probes() {
    let workspace = Workspace::new("ledger");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": "run.sh", "variables": ["HOME"]}),
        )
        .unwrap();
    let snippet = placed["snippet"].as_str().unwrap();
    std::fs::write(
        workspace.root.join("run.sh"),
        format!("echo start\n{snippet}echo end\n"),
    )
    .unwrap();
    std::fs::write(
        workspace.root.join("hand.py"),
        "# #region debug-probe p7 default\nprint(1)\n# #endregion debug-probe p7\n# #region agent log\n",
    )
    .unwrap();
    let ledger = server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    assert_eq!(ledger["scanned"], true);
    assert_eq!(ledger["live"], 2);
    assert_eq!(ledger["untracked"], json!(["p7"]));
    assert_eq!(ledger["foreign"][0]["kind"], "cursorAgentLog");
    assert_eq!(ledger["foreign"][0]["file"], "hand.py");
    std::fs::write(workspace.root.join("run.sh"), "echo start\necho end\n").unwrap();
    let ledger = server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    assert_eq!(ledger["missing"], json!(["p1"]));
    assert_eq!(ledger["live"], 1);
}

#[test]
fn an_explicit_rescan_without_a_session_scans_and_writes_nothing() {
    let workspace = Workspace::new("ledger-idle");
    std::fs::write(
        workspace.root.join("cart.js"),
        "// #region agent log\nfetch('http://127.0.0.1:7242/ingest/x');\n// #endregion\n",
    )
    .unwrap();
    std::fs::write(
        workspace.root.join("left.py"),
        "# #region debug-probe p3 s-old\nprint(1)\n# #endregion debug-probe p3\n",
    )
    .unwrap();
    let mut server = initialized(&workspace.root);
    // Without asking for a rescan: the (empty) ledger as it is.
    let ledger = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(ledger["scanned"], false);
    let ledger = server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    assert_eq!(ledger["scanned"], true, "{ledger}");
    assert_eq!(ledger["probes"], json!([]));
    let files: Vec<&str> = ledger["foreign"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"cart.js"), "{ledger}");
    assert!(files.contains(&"left.py"), "{ledger}");
    assert!(
        !workspace.root.join(".debug-sidecar").exists(),
        "a rescan without a session wrote the state directory"
    );
}

#[test]
fn logs_are_read_in_pages_and_summarised() {
    let workspace = Workspace::new("logs");
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    {
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        for i in 0..30 {
            writeln!(
                file,
                r#"{{"probeId":"p{}","data":{{"i":{i}}},"timestamp":{i}}}"#,
                i % 2 + 1
            )
            .unwrap();
        }
        writeln!(file, "garbage").unwrap();
    }
    let page = server
        .request("debug/logs", json!({"probe": "p1", "limit": 10}))
        .unwrap();
    assert_eq!(page["entries"].as_array().unwrap().len(), 10);
    assert_eq!(page["total"], 31);
    let cursor = page["nextCursor"].clone();
    let rest = server
        .request(
            "debug/logs",
            json!({"probe": "p1", "limit": 10, "cursor": cursor}),
        )
        .unwrap();
    assert_eq!(rest["entries"].as_array().unwrap().len(), 5);
    assert_eq!(rest["malformed"], json!({"count": 1, "lines": [31]}));
    let other = server
        .request("debug/logs", json!({"run": "r9-nope"}))
        .unwrap();
    assert!(
        other["note"]
            .as_str()
            .unwrap()
            .contains("r9-nope does not exist"),
        "{other}"
    );
    assert_eq!(other["run"], started["runId"]);
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(summary["probes"][0]["probeId"], "p1");
    assert_eq!(summary["probes"][0]["count"], 15);
    assert_eq!(summary["probes"][0]["values"].as_array().unwrap().len(), 5);
    assert_eq!(summary["malformed"]["count"], 1);
    match server.request("debug/logs", json!({"cursor": "nonsense"})) {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code, -32602);
            assert_eq!(error.data.unwrap()["field"], "cursor");
        }
        other => panic!("a bad cursor: {other:?}"),
    }
}

#[test]
fn artifacts_are_copied_in_and_outsiders_refused() {
    let workspace = Workspace::new("attach");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    std::fs::write(workspace.root.join("shot.png"), b"\x89PNG").unwrap();
    let snapshot = server
        .request(
            "debug/attach",
            json!({"path": "shot.png", "kind": "screenshot"}),
        )
        .unwrap();
    assert_eq!(snapshot["revision"], 2);
    let session = workspace.root.join(".debug-sidecar/sessions/default");
    let copied = session.join("artifacts/shot.png");
    assert_eq!(std::fs::read(&copied).unwrap(), b"\x89PNG");
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(session.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["artifacts"][0]["path"], copied.to_str().unwrap());
    assert_eq!(state["artifacts"][0]["kind"], "screenshot");
    match server.request("debug/attach", json!({"path": "/etc/hostname"})) {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code, -32602);
            assert!(
                error
                    .message
                    .contains("/etc/hostname is in /etc, which is never taken"),
                "{}",
                error.message
            );
        }
        other => panic!("a file outside the workspace: {other:?}"),
    }
}

#[test]
fn appended_log_lines_are_announced_with_a_cursor_that_reads_exactly_them() {
    let workspace = Workspace::new("tail");
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let run = started["runId"].as_str().unwrap().to_string();
    let log = std::path::PathBuf::from(started["logFile"].as_str().unwrap());
    // Probes write through `active.jsonl`.
    let active = log.parent().unwrap().join("active.jsonl");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&active)
        .unwrap();
    let wait = std::time::Duration::from_secs(10);
    let announced = |server: &mut debug_sidecar::rpc::client::Connection, lines: u64| {
        server
            .wait_for("debug/logAppended", wait, |p| p["lines"] == lines)
            .unwrap_or_else(|| panic!("no announcement of {lines} lines"))
    };
    let read = |server: &mut debug_sidecar::rpc::client::Connection, cursor: &serde_json::Value| {
        let page = server
            .request("debug/logs", json!({"run": run, "cursor": cursor}))
            .unwrap();
        page["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["line"].as_u64().unwrap())
            .collect::<Vec<u64>>()
    };

    for i in 1..=3 {
        writeln!(file, r#"{{"probeId":"p1","data":{{"i":{i}}}}}"#).unwrap();
    }
    let first = announced(&mut server, 3);
    assert_eq!(first["run"], run.as_str());
    assert_eq!(first["sessionId"], started["sessionId"]);
    assert_eq!(read(&mut server, &first["cursor"]), [1, 2, 3]);

    // Half a line is held back until its newline arrives.
    write!(file, r#"{{"probeId":"p1","#).unwrap();
    let early = server.drain(std::time::Duration::from_millis(400));
    assert!(
        !early.iter().any(|m| m["method"] == "debug/logAppended"),
        "{early:?}"
    );
    writeln!(file, r#""data":4}}"#).unwrap();
    writeln!(file, r#"{{"probeId":"p2","data":5}}"#).unwrap();
    let second = announced(&mut server, 5);
    assert_eq!(read(&mut server, &second["cursor"]), [4, 5]);

    // A burst is gathered into few announcements, the last one complete.
    for i in 0..2000 {
        writeln!(file, r#"{{"probeId":"p3","data":{i}}}"#).unwrap();
        file.flush().unwrap();
    }
    let mut announcements = 0;
    loop {
        let params = server
            .wait_for("debug/logAppended", wait, |_| true)
            .expect("the burst is announced");
        announcements += 1;
        if params["lines"] == 2005 {
            break;
        }
    }
    assert!(
        announcements < 200,
        "{announcements} announcements for 2000 writes"
    );
}
