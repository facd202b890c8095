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
    // Gone from disk: a person reads that it was removed.
    std::fs::write(root.join("x.py"), "print(1)\n").unwrap();
    let (_, out, _) = run(root, &["probes", "--rescan", "--session", "s1"]);
    assert!(out.starts_with("p5    removed"), "{out}");
}

#[test]
fn a_person_runs_a_session_from_a_terminal_in_a_subfolder() {
    let workspace = Workspace::new("cli-person");
    let root = &workspace.root;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let sub = root.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    // Without words there is nothing to start on.
    let (ok, _, err) = run(&sub, &["start"]);
    assert!(!ok, "{err}");
    let (ok, out, err) = run(&sub, &["start", "the", "total", "is", "wrong"]);
    assert!(ok, "{err}");
    // For the person: a receipt, not the agent's kickoff.
    assert!(
        out.starts_with("Debug Mode started: round 1 is the agent's."),
        "{out}"
    );
    assert!(out.lines().count() <= 3, "{out}");
    assert!(!out.contains("Debug Mode is on."), "{out}");
    assert!(
        !sub.join(".debug-sidecar").exists(),
        "a stray state directory"
    );
    // A second start is refused with the commands that are legal now.
    let (ok, _, err) = run(&sub, &["start", "another", "problem"]);
    assert!(!ok);
    assert!(err.contains("Possible now:"), "{err}");
    let mut server = initialized(root);
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it."]}),
        )
        .unwrap();
    let (ok, out, err) = run(&sub, &["proceed", "--kickoff", "it", "printed", "12"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("Proceed (\"it printed 12\"): run r1-"),
        "{out}"
    );
    assert!(out.contains("round 2 is the agent's."), "{out}");
    assert!(
        out.contains("The user reproduced and pressed Proceed."),
        "{out}"
    );
    assert!(out.contains("  > it printed 12"), "{out}");
    let (ok, out, _) = run(&sub, &["done", "--kickoff"]);
    assert!(ok);
    assert!(out.contains("Clean up now"), "{out}");
    let (ok, out, _) = run(&sub, &["abort", "--kickoff"]);
    assert!(ok);
    assert!(out.contains("No probe is left on disk"), "{out}");
}

/// A reader that stops early (`status | head`) ends the command quietly,
/// as it ends `ls`, instead of a panic on the closed pipe.
#[test]
fn a_closed_pipe_ends_a_listing_quietly() {
    let workspace = Workspace::new("cli-pipe");
    let root = &workspace.root;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let (ok, _, err) = run(root, &["start", "the", "total", "is", "wrong"]);
    assert!(ok, "{err}");
    let mut child = Command::new(BIN)
        .args(["status", "--json"])
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the listing is written: every write meets a closed pipe.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!err.contains("panicked"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert!(
            output.status.success() || output.status.signal() == Some(13),
            "{:?}",
            output.status
        );
    }
}
