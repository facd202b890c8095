//! `debug-sidecar check` as a pre-commit hook and a CI step see it.

mod support;

use serde_json::Value;
use std::process::Command;
use support::{Workspace, BIN};

fn check(root: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(BIN)
        .arg("check")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn a_clean_tree_passes() {
    let workspace = Workspace::new("check-clean");
    std::fs::write(workspace.root.join("app.js"), "console.log('hi')\n").unwrap();
    assert_eq!(check(&workspace.root, &[]), (Some(0), String::new()));
}

#[test]
fn a_planted_cursor_probe_fails_with_its_location() {
    let workspace = Workspace::new("check-cursor");
    std::fs::create_dir_all(workspace.root.join("src")).unwrap();
    std::fs::write(
        workspace.root.join("src/app.ts"),
        "const a = 1;\n// #region agent log\nfetch('http://127.0.0.1:7242/ingest/9f2c', {method: 'POST'}).catch(() => {});\n// #endregion\n",
    )
    .unwrap();
    let (code, out) = check(&workspace.root, &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("src/app.ts:2: Cursor agent log block"),
        "{out}"
    );
    assert!(out.contains("src/app.ts:3: loopback ingest URL"), "{out}");
}

#[test]
fn our_markers_of_any_session_and_half_blocks_fail() {
    let workspace = Workspace::new("check-ours");
    std::fs::write(
        workspace.root.join("a.py"),
        "# #region debug-probe p1 s1\nprint(1)\n# #endregion debug-probe p1\n# #endregion debug-probe p9\n",
    )
    .unwrap();
    std::fs::write(workspace.root.join("b.py"), "x = 1\n").unwrap();
    let (code, out) = check(&workspace.root, &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("a.py:1: debug-probe p1 (session s1)"), "{out}");
    assert!(
        out.contains("a.py:4: end marker of debug-probe p9 without its start"),
        "{out}"
    );
    // Only the paths given are checked.
    assert_eq!(check(&workspace.root, &["b.py"]).0, Some(0));
    let (code, json) = check(&workspace.root, &["--json"]);
    assert_eq!(code, Some(1));
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["clean"], false);
    assert_eq!(report["leftovers"].as_array().unwrap().len(), 2);
    assert_eq!(report["leftovers"][0]["kind"], "debug-probe");
}

#[test]
fn a_missing_path_is_an_error_not_a_pass() {
    let workspace = Workspace::new("check-missing");
    assert_eq!(check(&workspace.root, &["nope"]).0, Some(2));
}
