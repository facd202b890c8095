//! The commands for people: `logs` and `probes`, readable and `--json`.

mod support;

use serde_json::{json, Value};
use std::io::Write;
use std::process::Command;
use support::*;

fn run(root: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(BIN)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn logs_and_probes_read_the_saved_session() {
    let workspace = Workspace::new("cli");
    let root = &workspace.root;
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    {
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(started["logFile"].as_str().unwrap())
            .unwrap();
        writeln!(log, r#"{{"probeId":"p1","hypothesisId":"H1","location":"a.sh:2","message":"n","data":{{"n":4}}}}"#).unwrap();
        writeln!(log, "oops").unwrap();
    }
    let (ok, out, _) = run(root, &["logs"]);
    assert!(ok);
    assert!(out.contains("p1 H1 a.sh:2  n  {\"n\":4}"), "{out}");
    assert!(out.contains("1 malformed line(s): [2]"), "{out}");
    let (_, out, _) = run(root, &["logs", "--summary", "--json"]);
    let summary: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["summary"]["probes"][0]["count"], 1);
    std::fs::write(
        root.join("x.py"),
        "# #region debug-probe p5 s1\n# #endregion debug-probe p5\n",
    )
    .unwrap();
    let (ok, out, _) = run(root, &["probes", "--rescan", "--json", "--session", "s1"]);
    assert!(ok);
    let ledger: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(ledger["untracked"], json!(["p5"]));
    let (_, out, _) = run(root, &["probes", "--session", "s1"]);
    assert!(out.starts_with("p5    live"), "{out}");
}
