//! `debug-sidecar check` as a pre-commit hook and a CI step see it.

mod support;

use serde_json::Value;
use std::path::Path;
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

/// A snippet for `file` as the sidecar hands it out, with its marker lines
/// deleted (what `sed -i '/debug-probe/d'` leaves).
fn unmarked_snippet(file: &str, root: &std::path::Path) -> String {
    use debug_sidecar::core::model::{Probe, ProbeState};
    use debug_sidecar::workspace::snippet::{language_for, snippet, SnippetInput};
    let probe = Probe {
        id: "p4".into(),
        file: file.into(),
        line: None,
        round: 1,
        hypothesis_id: Some("H1".into()),
        language: None,
        state: ProbeState::Issued,
        trace: None,
        kind: Default::default(),
        logpoint: None,
    };
    let log = root.join(".debug-sidecar/sessions/s-9/runs/active.jsonl");
    let block = snippet(
        language_for(file, None).unwrap(),
        &SnippetInput {
            probe: &probe,
            session_id: "s-9",
            session_tag: "s-9",
            log_file: &log.to_string_lossy(),
            message: "total",
            variables: &["total"],
            ingest_url: None,
            post: false,
        },
    )
    .unwrap();
    block
        .lines()
        .filter(|line| !line.contains("debug-probe"))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn probes_whose_markers_were_deleted_fail_in_every_language() {
    let workspace = Workspace::new("check-unmarked");
    let files = [
        "a.py", "b.js", "c.go", "d.rs", "e.java", "f.c", "g.cpp", "h.sh", "i.rb", "j.php", "k.kt",
        "l.cs", "m.swift", "n.ts",
    ];
    for file in files {
        let body = unmarked_snippet(file, &workspace.root);
        std::fs::write(
            workspace.root.join(file),
            format!("first line\n{body}last line\n"),
        )
        .unwrap();
    }
    let (code, out) = check(&workspace.root, &[]);
    assert_eq!(code, Some(1), "{out}");
    for file in files {
        assert!(
            out.lines().any(|line| line.starts_with(&format!("{file}:"))
                && line.contains("code of debug-probe p4 (session s-9) with its markers gone")),
            "{file} is not reported: {out}"
        );
    }
    assert_eq!(
        out.lines().count(),
        files.len(),
        "one finding per probe: {out}"
    );
}

#[test]
fn loopback_ingest_calls_of_other_tools_fail_with_or_without_a_token() {
    let workspace = Workspace::new("check-ingest");
    std::fs::write(
        workspace.root.join("app.js"),
        "fetch('http://localhost:7777/ingest', {method: 'POST'});\n\
         navigator.sendBeacon(`http://[::1]:9/ingest/abc?x=1`, data);\n\
         fs.appendFileSync('/Users/me/app/.cursor/debug-1a2b3c.log', line);\n",
    )
    .unwrap();
    let (code, out) = check(&workspace.root, &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("app.js:1: loopback ingest URL"), "{out}");
    assert!(out.contains("app.js:2: loopback ingest URL"), "{out}");
    assert!(out.contains("app.js:3: Cursor agent log block"), "{out}");
}

#[test]
fn marker_text_in_strings_comments_and_docs_is_not_reported() {
    let workspace = Workspace::new("check-negative");
    let root = &workspace.root;
    std::fs::write(
        root.join("strings.py"),
        "HELP = \"wrap probes in #region debug-probe <id> <session>\"\n\
         log.info(\"#endregion debug-probe p1\")\n\
         # logs go to .debug-sidecar/sessions/s-9/runs/active.jsonl (a comment)\n\
         record = {\"probeId\": \"p1\"}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("api.ts"),
        "const url = `https://example.com/ingest/${id}`;\n\
         const route = '/api/sessions/s-9/runs/latest';\n",
    )
    .unwrap();
    // The sidecar's own documentation describes markers, fingerprints and
    // ingest URLs without being any of them.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = [
        "README.md",
        "protocol/README.md",
        "editors/vscode/README.md",
        "editors/nvim/README.md",
        "editors/emacs/README.md",
    ];
    for (i, doc) in docs.iter().enumerate() {
        std::fs::copy(repo.join(doc), root.join(format!("doc{i}.md"))).unwrap();
    }
    let (code, out) = check(root, &[]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
}

/// Issue 35: a session aborted with its Go block still in place keeps the
/// files its probes were in, so once the person removes the block by hand,
/// the imports it left are still reported; the record from a foreign state
/// directory cannot send the check outside the workspace.
#[test]
fn imports_left_by_a_block_of_an_aborted_session_fail() {
    let workspace = Workspace::new("check-go-aborted");
    let root = &workspace.root;
    let (mut server, block) = go_probe_placed(root);
    let imports = "import (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\n";
    std::fs::write(
        root.join("main.go"),
        format!("package main\n\n{imports}func main() {{\n\tn := 1\n{block}\tfmt.Println(n)\n}}\n"),
    )
    .unwrap();
    server
        .request("debug/abort", serde_json::json!({}))
        .unwrap();
    drop(server);
    // By hand, after the abort: the block goes, its imports stay.
    std::fs::write(
        root.join("main.go"),
        format!("package main\n\n{imports}func main() {{\n\tfmt.Println(1)\n}}\n"),
    )
    .unwrap();
    let (code, out) = check(root, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(
        out.starts_with("main.go:4: import \"encoding/json\""),
        "{out}"
    );
    // A kept list naming a path outside the workspace is not followed.
    let kept = root.join(".debug-sidecar/sessions/s1/aborted-files.json");
    let text = std::fs::read_to_string(&kept).unwrap();
    assert!(text.contains("main.go"), "{text}");
    std::fs::write(&kept, r#"{"files": ["../outside.go", "/etc/passwd"]}"#).unwrap();
    assert_eq!(check(root, &[]), (Some(0), String::new()));
}

/// Issue 35: a Go block's imports, left behind when the block was removed,
/// fail the check in the files the ledger names (Go does not build them);
/// once `goimports` dropped them, the check passes.
#[test]
fn imports_a_removed_go_block_left_behind_fail() {
    let workspace = Workspace::new("check-go-imports");
    let root = &workspace.root;
    let (mut server, needs) = go_probe_placed(root);
    let needs = needs.as_str();
    assert!(
        needs.contains("needs imports \"encoding/json\", \"fmt\", \"os\", \"time\""),
        "{needs}"
    );
    // The block is gone; its imports are not, and `fmt` is the program's.
    let left = "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc main() {\n\tfmt.Println(\"os.Exit\")\n}\n";
    std::fs::write(root.join("main.go"), left).unwrap();
    let (code, out) = check(root, &[]);
    assert_eq!(code, Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("main.go:4: import \"encoding/json\" is used by nothing now"),
        "{out}"
    );
    assert!(lines[1].starts_with("main.go:6: import \"os\""), "{out}");
    assert!(lines[2].starts_with("main.go:7: import \"time\""), "{out}");
    let (code, out) = check(root, &["--json"]);
    assert_eq!(code, Some(1));
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["leftovers"][0]["kind"], "go-unused-import");
    // Narrowed to another folder, main.go is not read.
    std::fs::create_dir_all(root.join("docs")).unwrap();
    assert_eq!(check(root, &["docs"]).0, Some(0));
    // Once the session ended with its cleanup verified, its record still
    // names main.go: the imports are still reported.
    let probed = left.replace(
        "func main() {\n",
        &format!("func main() {{\n\tn := 1\n{needs}"),
    );
    std::fs::write(root.join("main.go"), probed).unwrap();
    let request = |server: &mut debug_sidecar::rpc::client::Connection, method: &str, params| {
        server.request(method, params).unwrap()
    };
    request(
        &mut server,
        "debug/handOff",
        serde_json::json!({"mode": "reproduce", "steps": ["Run it."]}),
    );
    request(&mut server, "debug/proceed", serde_json::json!({}));
    request(&mut server, "debug/done", serde_json::json!({}));
    std::fs::write(root.join("main.go"), left).unwrap();
    let stopped = request(&mut server, "debug/stop", serde_json::json!({}));
    assert_eq!(stopped["decision"], "allow", "{stopped}");
    let (code, out) = check(root, &[]);
    assert_eq!((code, out.lines().count()), (Some(1), 3), "{out}");
    let tidy =
        "package main\n\nimport (\n\t\"fmt\"\n)\n\nfunc main() {\n\tfmt.Println(\"os.Exit\")\n}\n";
    std::fs::write(root.join("main.go"), tidy).unwrap();
    assert_eq!(check(root, &[]), (Some(0), String::new()));
}

/// A live session `s1` in `root` with a Go probe placed in its main.go:
/// the server and the block.
fn go_probe_placed(root: &Path) -> (debug_sidecar::rpc::client::Connection, String) {
    std::fs::write(root.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
    let mut server = support::initialized(root);
    server
        .request(
            "debug/start",
            serde_json::json!({"sessionId": "s1", "problem": "p"}),
        )
        .unwrap();
    let placed = server
        .request(
            "debug/probeSnippet",
            serde_json::json!({"file": "main.go", "hypothesisId": "H1", "variables": ["n"]}),
        )
        .unwrap();
    let block = placed["snippet"].as_str().unwrap().to_string();
    (server, block)
}
