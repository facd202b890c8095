//! The hit table (issue 31): every probe of a run's round, with its hits,
//! and for one with no value the reason the run's records support, in the
//! three summary faces (`debug/logSummary`, `logs --summary --json`, MCP
//! `log_summary`) and first in the Proceed kickoff. Real programs: Python,
//! Node, a Python process whose code was loaded before its probe went in.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use support::*;

/// The probe the server registers for `file`, its block inserted before
/// 1-based `line` (indented by `indent`); None to leave it out of the file.
fn probe(
    server: &mut Connection,
    root: &Path,
    file: &str,
    hypothesis: &str,
    variables: Value,
    before: Option<(usize, &str)>,
) -> String {
    let answer = server
        .request(
            "debug/probeSnippet",
            json!({"file": file, "hypothesisId": hypothesis, "message": "here",
                   "variables": variables}),
        )
        .unwrap();
    if let Some((line, indent)) = before {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let block: Vec<String> = answer["snippet"]
            .as_str()
            .unwrap()
            .lines()
            .map(|l| format!("{indent}{l}"))
            .collect();
        lines.splice(line - 1..line - 1, block);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    answer["probe"]["id"].as_str().unwrap().to_string()
}

/// Per probe id: (hits, reason) of a summary's `probes`.
fn table(summary: &Value) -> BTreeMap<String, (u64, Option<String>)> {
    summary["probes"]
        .as_array()
        .unwrap_or_else(|| panic!("{summary}"))
        .iter()
        .map(|p| {
            (
                p["probeId"].as_str().unwrap().to_string(),
                (
                    p["hits"].as_u64().unwrap(),
                    p["reason"].as_str().map(str::to_string),
                ),
            )
        })
        .collect()
}

fn reason(summary: &Value, id: &str) -> Option<String> {
    table(summary)
        .get(id)
        .unwrap_or_else(|| panic!("{id} not in {summary}"))
        .1
        .clone()
}

fn row<'a>(summary: &'a Value, id: &str) -> &'a Value {
    summary["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["probeId"] == id)
        .unwrap_or_else(|| panic!("{id} not in {summary}"))
}

/// The CLI's `logs --summary --json`: its summary.
fn cli_summary(root: &Path) -> Value {
    let out = sidecar(root, &["logs", "--summary", "--json"], None);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["summary"].clone()
}

fn run(root: &Path, command: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--"];
    args.extend_from_slice(command);
    sidecar(root, &args, None)
}

#[test]
fn each_probe_without_a_value_says_why_in_every_face_and_in_the_kickoff() {
    let workspace = Workspace::new("hits-python");
    let root = &workspace.root;
    std::fs::write(
        root.join("app.py"),
        "import sys\ntotal = 3\ncount = 2\nprint(total)\n",
    )
    .unwrap();
    std::fs::write(root.join("other.py"), "x = 1\n").unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "the total is wrong"}))
        .unwrap();
    // A logpoint on `count = 2`, whose line then changes: not set.
    let not_set = place_logpoint(&mut server, "app.py", 3, json!(["count"]))["probe"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let text = std::fs::read_to_string(root.join("app.py")).unwrap();
    std::fs::write(root.join("app.py"), text.replace("count = 2", "count = 5")).unwrap();
    let hit = probe(
        &mut server,
        root,
        "app.py",
        "H1",
        json!(["total"]),
        Some((4, "")),
    );
    let failed = probe(
        &mut server,
        root,
        "app.py",
        "H2",
        json!(["missing_name"]),
        Some((4, "")),
    );
    let unreached = probe(
        &mut server,
        root,
        "other.py",
        "H3",
        json!(["x"]),
        Some((2, "")),
    );
    let never_inserted = probe(&mut server, root, "app.py", "H4", json!(["total"]), None);
    let ran = run(root, &["python3", "app.py"]);
    assert!(ran.status.success(), "{ran:?}");

    let expected: BTreeMap<String, (u64, Option<String>)> = [
        (hit.clone(), (1, None)),
        (failed.clone(), (0, Some("probeFailed".to_string()))),
        (unreached.clone(), (0, Some("notReached".to_string()))),
        (never_inserted.clone(), (0, Some("notOnDisk".to_string()))),
        (not_set.clone(), (0, Some("notSet".to_string()))),
    ]
    .into_iter()
    .collect();
    let by_editor = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(table(&by_editor), expected, "{by_editor}");
    let failure = row(&by_editor, &failed);
    assert_eq!(
        (failure["count"].as_u64(), failure["failed"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(
        failure["evidence"]
            .as_str()
            .unwrap()
            .starts_with("NameError: name 'missing_name'"),
        "{failure}"
    );
    assert!(
        row(&by_editor, &not_set)["evidence"]
            .as_str()
            .unwrap()
            .contains("the line changed"),
        "{by_editor}"
    );
    assert_eq!(
        row(&by_editor, &unreached)["why"],
        "the program ended normally without running this line"
    );
    assert_eq!(table(&cli_summary(root)), expected);
    let for_person = sidecar(root, &["logs", "--summary"], None);
    let for_person = String::from_utf8_lossy(&for_person.stdout);
    println!("{for_person}");
    assert!(
        for_person.contains(&format!(
            "{unreached} (H3) at other.py:2: no value [notReached]: the program ended normally"
        )),
        "{for_person}"
    );
    let tool = &mcp_tool_texts(root, &[("log_summary", json!({}))])[0];
    for (id, why) in [
        (&failed, "no value [probeFailed]: it ran and recorded its own failure 1 time(s) \u{2014} NameError"),
        (&unreached, "no value [notReached]"),
        (&never_inserted, "no value [notOnDisk]"),
        (&not_set, "no value [notSet]"),
    ] {
        assert!(tool.contains(&format!("{id} (")) && tool.contains(why), "{why}:\n{tool}");
    }
    // Rows with no value come first: they are the finding.
    let first_hit = tool.find(&format!("{hit} (H1) x1")).unwrap();
    assert!(
        tool.find(&format!("{unreached} (H3)")).unwrap() < first_hit,
        "{tool}"
    );

    // The person proceeds: the kickoff leads with the rows.
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run `debug-sidecar run -- python3 app.py`."]}),
        )
        .unwrap();
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    let kickoff = proceeded["kickoff"].as_str().unwrap();
    assert!(
        kickoff.contains("4 probe(s) of that round logged no value; why, from the run's records:"),
        "{kickoff}"
    );
    assert!(
        kickoff.contains(&format!("{unreached} (H3) at other.py"))
            && kickoff
                .contains(": notReached: the program ended normally without running this line\n"),
        "{kickoff}"
    );
    // The program's own words (the error) stay out of the kickoff.
    assert!(!kickoff.contains("missing_name"), "{kickoff}");
    assert!(!kickoff.contains("No line arrived"), "{kickoff}");
}

#[test]
fn a_program_that_ended_first_and_values_json_cannot_write_in_node() {
    let workspace = Workspace::new("hits-node");
    let root = &workspace.root;
    std::fs::write(
        root.join("crash.js"),
        "const total = 3n;\nprocess.exit(4);\nfunction never() {\n  return total;\n}\n",
    )
    .unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "it crashes"}))
        .unwrap();
    // The lower block first: the upper one then does not move it.
    let after_exit = probe(
        &mut server,
        root,
        "crash.js",
        "H2",
        json!(["total"]),
        Some((4, "  ")),
    );
    let bigint = probe(
        &mut server,
        root,
        "crash.js",
        "H1",
        json!(["total"]),
        Some((2, "")),
    );
    let ran = run(root, &["node", "crash.js"]);
    assert_eq!(ran.status.code(), Some(4), "{ran:?}");
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        reason(&summary, &bigint).as_deref(),
        Some("probeFailed"),
        "{summary}"
    );
    assert!(
        row(&summary, &bigint)["evidence"]
            .as_str()
            .unwrap()
            .contains("BigInt"),
        "{summary}"
    );
    assert_eq!(
        reason(&summary, &after_exit).as_deref(),
        Some("exitedFirst"),
        "{summary}"
    );
    let why = row(&summary, &after_exit)["why"].as_str().unwrap();
    assert!(
        why.starts_with("the program exited with status 4 after ")
            && why.ends_with(" before any probe in crash.js logged"),
        "{why}"
    );
    assert_eq!(table(&cli_summary(root)), table(&summary));
}

#[test]
fn code_loaded_before_its_probe_went_in_is_a_stale_build_and_no_recorded_program_says_so() {
    let workspace = Workspace::new("hits-stale");
    let root = &workspace.root;
    // A long-running program: it loads lib.py, then calls it later.
    std::fs::write(root.join("lib.py"), "def f(n):\n    return n * 2\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "import time, lib\ntime.sleep(1.5)\nprint(lib.f(2))\n",
    )
    .unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "f is off"}))
        .unwrap();
    // Before any program ran: nothing recorded tells.
    let early = probe(
        &mut server,
        root,
        "lib.py",
        "H1",
        json!(["n"]),
        Some((2, "    ")),
    );
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        reason(&summary, &early).as_deref(),
        Some("notRecorded"),
        "{summary}"
    );
    // Back out, start the program, then put the probe in while it runs.
    let placed = std::fs::read_to_string(root.join("lib.py")).unwrap();
    std::fs::write(root.join("lib.py"), "def f(n):\n    return n * 2\n").unwrap();
    let mut program = std::process::Command::new(BIN)
        .args(["run", "--", "python3", "app.py"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    std::fs::write(root.join("lib.py"), placed).unwrap();
    assert!(program.wait().unwrap().success());
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        reason(&summary, &early).as_deref(),
        Some("staleBuild"),
        "{summary}"
    );
    let why = row(&summary, &early)["why"].as_str().unwrap();
    assert!(
        why.starts_with("lib.py changed ")
            && why.ends_with(" after the program started: it ran the code from before"),
        "{why}"
    );
    // The same program run again sees the probe.
    assert!(run(root, &["python3", "app.py"]).status.success());
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(table(&summary)[&early], (1, None), "{summary}");
}

/// A compiled language: a Java value whose expression throws is recorded
/// by the block as its own failure (the exception's class), so the table
/// says `probeFailed` instead of a silent no-hit.
#[test]
fn a_java_value_that_throws_is_the_probes_own_failure() {
    let have = |tool: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("javac") || !have("java") {
        eprintln!("skipped: no JDK (javac, java) on this machine");
        return;
    }
    let workspace = Workspace::new("hits-java");
    let root = &workspace.root;
    std::fs::write(
        root.join("Main.java"),
        "public class Main {\n    public static void main(String[] args) {\n        int count = 3;\n        int zero = args.length;\n        System.out.println(\"done\");\n    }\n}\n",
    )
    .unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "the share is wrong"}))
        .unwrap();
    let threw = probe(
        &mut server,
        root,
        "Main.java",
        "H1",
        json!(["count", "count / zero"]),
        Some((5, "        ")),
    );
    let built = std::process::Command::new("javac")
        .arg("Main.java")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let ran = run(root, &["java", "Main"]);
    assert!(ran.status.success(), "{ran:?}");
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        reason(&summary, &threw).as_deref(),
        Some("probeFailed"),
        "{summary}"
    );
    assert!(
        row(&summary, &threw)["evidence"]
            .as_str()
            .unwrap()
            .contains("java.lang.ArithmeticException"),
        "{summary}"
    );
    assert_eq!(table(&cli_summary(root)), table(&summary));
}
