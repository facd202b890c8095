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
                error.message.contains("outside the workspace"),
                "{}",
                error.message
            );
        }
        other => panic!("a file outside the workspace: {other:?}"),
    }
}
