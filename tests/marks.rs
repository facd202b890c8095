//! The person's marks (issue 31): `debug-sidecar mark`, `debug/mark` and a
//! marker record posted to the ingest URL land in the current run; the
//! summary lists them by line in every face, and a page of the log reads
//! the lines after one mark and before the next.

mod support;

use serde_json::{json, Value};
use support::*;

fn cli(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    sidecar(root, args, None)
}

fn text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The 1-based line a `Marked ... at line N of run ...` message names.
fn line_in(message: &str) -> u64 {
    message
        .split("at line ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line in {message:?}"))
}

#[test]
fn marks_split_a_run_and_every_face_lists_them() {
    let workspace = Workspace::new("marks");
    let root = &workspace.root;
    // No session: nothing to mark, and the person is told so.
    let refused = cli(root, &["mark", "too early"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("mark"),
        "{refused:?}"
    );
    assert!(cli(root, &["start", "the total is wrong"]).status.success());
    assert!(cli(root, &["run", "--", "sh", "-c", "echo before"])
        .status
        .success());
    let marked = cli(root, &["mark", "clicked", "Save"]);
    assert!(marked.status.success(), "{marked:?}");
    let said = text(&marked);
    assert!(
        said.starts_with("Marked \"clicked Save\" at line "),
        "{said}"
    );
    let first = line_in(&said);
    assert!(cli(root, &["run", "--", "sh", "-c", "echo after"])
        .status
        .success());
    // The editor's face, with a secret in the words.
    let mut server = initialized(root);
    let by_editor = server
        .request(
            "debug/mark",
            json!({"words": "froze; token=ghp_0123456789abcdefghijABCDEFGHIJ012345"}),
        )
        .unwrap();
    let second = by_editor["line"].as_u64().unwrap();
    assert!(second > first, "{by_editor}");
    assert!(
        by_editor["words"].as_str().unwrap().contains("[redacted:"),
        "{by_editor}"
    );
    assert!(by_editor["message"]
        .as_str()
        .unwrap()
        .contains(&format!("at line {second} ")));
    // A page marks with one ingest call.
    let status = server.request("debug/status", json!({})).unwrap();
    let url = status["ingestUrl"].as_str().unwrap().to_string();
    assert_eq!(
        post(
            &url,
            "",
            &json!({"source": "marker", "words": "the page saw it"}).to_string()
        ),
        204
    );

    // Between the two marks: the second run's lines only.
    let between = server
        .request(
            "debug/logs",
            json!({"afterLine": first, "beforeLine": second, "limit": 500}),
        )
        .unwrap();
    let lines: Vec<u64> = between["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert!(!lines.is_empty(), "{between}");
    assert!(
        lines.iter().all(|&l| l > first && l < second),
        "{lines:?} not between {first} and {second}"
    );
    let texts: Vec<&str> = between["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["entry"]["message"].as_str())
        .collect();
    assert!(
        texts.contains(&"after") && !texts.contains(&"before"),
        "{between}"
    );
    assert_eq!(between["nextCursor"], Value::Null);
    let cli_before = text(&cli(
        root,
        &["logs", "--json", "--before-line", &first.to_string()],
    ));
    assert!(
        cli_before.contains("before") && !cli_before.contains("\"after\""),
        "{cli_before}"
    );

    // The summary lists the three marks, by line, in every face.
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    let marks: Vec<(u64, String)> = summary["marks"]
        .as_array()
        .unwrap_or_else(|| panic!("{summary}"))
        .iter()
        .map(|m| {
            (
                m["line"].as_u64().unwrap(),
                m["words"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(marks.len(), 3, "{summary}");
    assert_eq!(marks[0], (first, "clicked Save".to_string()));
    assert_eq!(marks[1].0, second);
    assert_eq!(marks[2].1, "the page saw it");
    assert!(
        summary["marks"][2]["timestamp"].is_u64(),
        "the page's mark has no time: {summary}"
    );
    let cli_summary = text(&cli(root, &["logs", "--summary"]));
    assert!(
        cli_summary.contains(&format!(
            "the person's marks: line {first} \"clicked Save\""
        )),
        "{cli_summary}"
    );
    let tool = &mcp_tool_texts(
        root,
        &[
            ("log_summary", json!({})),
            ("read_logs", json!({"afterLine": second})),
        ],
    );
    assert!(
        tool[0].contains(&format!("line {first} \"clicked Save\"")) && !tool[0].contains("ghp_"),
        "{}",
        tool[0]
    );
    assert!(
        tool[1].contains("the page saw it") && !tool[1].contains("clicked Save"),
        "{}",
        tool[1]
    );

    // The Proceed kickoff tells the agent where the marks are.
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    let kickoff = proceeded["kickoff"].as_str().unwrap();
    assert!(
        kickoff.contains("The user marked 3 moment(s) of run ")
            && kickoff.contains(&format!("\n  line {first} \"clicked Save\"\n"))
            && kickoff.contains("\"the page saw it\"")
            && !kickoff.contains("ghp_"),
        "{kickoff}"
    );

    // Cleaning up: the last run is closed, so is marking.
    server.request("debug/done", json!({})).unwrap();
    let closed = cli(root, &["mark", "late"]);
    assert_eq!(closed.status.code(), Some(1), "{closed:?}");
}

#[test]
fn the_summary_compares_each_probes_values_before_and_after_the_mark() {
    let workspace = Workspace::new("marks-around");
    let root = &workspace.root;
    std::fs::write(
        root.join("app.py"),
        "import sys\nn = int(sys.argv[1])\nprint(n)\n",
    )
    .unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "n jumps"}))
        .unwrap();
    let answer = server
        .request(
            "debug/probeSnippet",
            json!({"file": "app.py", "hypothesisId": "H1", "message": "n", "variables": ["n"]}),
        )
        .unwrap();
    let source = std::fs::read_to_string(root.join("app.py")).unwrap();
    let (head, tail) = source.split_at(source.find("print").unwrap());
    std::fs::write(
        root.join("app.py"),
        format!("{head}{}{tail}", answer["snippet"].as_str().unwrap()),
    )
    .unwrap();
    assert!(cli(root, &["run", "--", "python3", "app.py", "1"])
        .status
        .success());
    let marked = text(&cli(root, &["mark", "clicked", "Save"]));
    let line = line_in(&marked);
    assert!(cli(root, &["run", "--", "python3", "app.py", "7"])
        .status
        .success());
    assert!(cli(root, &["run", "--", "python3", "app.py", "7"])
        .status
        .success());

    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        summary["aroundMark"],
        json!({"line": line, "words": "clicked Save", "probes": [
            {"probeId": "p1", "before": 1, "after": 2,
             "valuesBefore": [{"n": 1}], "valuesAfter": [{"n": 7}]}
        ]}),
        "{summary}"
    );
    let expected = format!("around the person's mark at line {line} \"clicked Save\", per probe:");
    let person = text(&cli(root, &["logs", "--summary"]));
    assert!(
        person.contains(&expected)
            && person.contains("  p1: x1 before {\"n\":1}; x2 after {\"n\":7}"),
        "{person}"
    );
    let tool = &mcp_tool_texts(root, &[("log_summary", json!({}))])[0];
    assert!(
        tool.contains(&expected) && tool.contains("p1: x1 before {\"n\":1}; x2 after {\"n\":7}"),
        "{tool}"
    );
}
