//! The fix certificate (issue 31, part 4): a whole session (a probe, the
//! person's run, a confirmed hypothesis citing its line, the fix, a
//! verifying run, Mark fixed, the cleanup) through `debug-sidecar
//! certificate` and `check --certificate`; and every way a certificate is
//! refused: changed after it was written, a probe or a fingerprint of its
//! session back in the tree, a cited line changed in its run.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use support::*;

const BUGGY: &str = "def total(prices):\n    s = 0\n    for p in prices[1:]:\n        s += p\n    return s\n\nprint(total([3, 4, 5]))\n";
const FIXED: &str = "def total(prices):\n    s = 0\n    for p in prices:\n        s += p\n    return s\n\nprint(total([3, 4, 5]))\n";

fn run_program(root: &Path) {
    let ran = sidecar(root, &["run", "--", "python3", "app.py"], None);
    assert!(ran.status.success(), "{ran:?}");
}

/// A whole session that ends with its cleanup verified; returns the run of
/// round 1 and the line of its probe's record.
fn a_whole_session(root: &Path) -> (String, u64) {
    std::fs::write(root.join("app.py"), BUGGY).unwrap();
    let mut server = initialized(root);
    let started = server
        .request(
            "debug/start",
            json!({"problem": "the total is short by the first price"}),
        )
        .unwrap();
    let run1 = started["runId"].as_str().unwrap().to_string();
    server
        .request(
            "debug/recordHypotheses",
            json!({"hypotheses": [
                {"id": "H1", "statement": "the loop skips the first price", "status": "open"},
                {"id": "H2", "statement": "the prices arrive as strings", "status": "open"}
            ]}),
        )
        .unwrap();
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": "app.py", "hypothesisId": "H1", "variables": ["prices", "s"]}),
        )
        .unwrap();
    let block = placed["snippet"].as_str().unwrap();
    let indented: String = block.lines().map(|l| format!("    {l}\n")).collect();
    let probed = BUGGY.replace("    return s\n", &format!("{indented}    return s\n"));
    std::fs::write(root.join("app.py"), probed).unwrap();
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run `debug-sidecar run -- python3 app.py`."]}),
        )
        .unwrap();
    run_program(root);
    server.request("debug/proceed", json!({})).unwrap();
    let logs = server
        .request(
            "debug/logs",
            json!({"run": run1, "probe": placed["probeId"]}),
        )
        .unwrap();
    let line = logs["entries"][0]["line"].as_u64().unwrap();
    assert_eq!(logs["entries"][0]["entry"]["data"]["s"], 9);
    // The agent sees the same number before the record, and how to cite it.
    let read = &mcp_tool_texts(root, &[("read_logs", json!({"run": run1}))])[0];
    assert!(
        read.contains(&format!("cite one as {run1}:<line>"))
            && read.contains(&format!(
                "\n{line}: {{\"data\":{{\"prices\":[3,4,5],\"s\":9}}"
            )),
        "{read}"
    );
    let cite = format!("{run1}:{line} shows s=9 for prices [3, 4, 5]");
    server
        .request(
            "debug/recordHypotheses",
            json!({"hypotheses": [
                {"id": "H1", "statement": "the loop skips the first price", "status": "confirmed", "evidence": [cite]},
                {"id": "H2", "statement": "the prices arrive as strings", "status": "rejected", "evidence": [format!("{run1}#L{line}: the values are numbers")]}
            ]}),
        )
        .unwrap();
    // The fix, with the probe still in (the verifying run uses it).
    let fixed_probed = FIXED.replace("    return s\n", &format!("{indented}    return s\n"));
    std::fs::write(root.join("app.py"), fixed_probed).unwrap();
    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run it again."]}),
        )
        .unwrap();
    run_program(root);
    server
        .request("debug/done", json!({"note": "12 now, as it should"}))
        .unwrap();
    std::fs::write(root.join("app.py"), FIXED).unwrap();
    let stopped = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stopped["decision"], "allow", "{stopped}");
    assert_eq!(
        server.request("debug/status", json!({})).unwrap()["active"],
        false
    );
    (run1, line)
}

fn check(root: &Path, file: &str) -> (bool, Value) {
    let out = sidecar(root, &["check", "--certificate", file, "--json"], None);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(out.status.success(), report["valid"] == true, "{report}");
    (out.status.success(), report)
}

#[test]
fn a_session_round_trips_through_its_certificate_and_a_changed_one_is_refused() {
    let workspace = Workspace::new("certificate");
    let root = &workspace.root;
    let (run1, line) = a_whole_session(root);

    let written = sidecar(root, &["certificate", "--out", "fix.json"], None);
    assert!(written.status.success(), "{written:?}");
    let said = String::from_utf8_lossy(&written.stderr);
    assert!(
        said.contains("2 hypothesis(es), 2 run(s), 1 probe(s) removed; wrote fix.json (sha256:"),
        "{said}"
    );
    let text = std::fs::read_to_string(root.join("fix.json")).unwrap();
    let certificate: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(certificate["format"], "debug-sidecar/fix-certificate");
    assert_eq!(
        certificate["problem"],
        "the total is short by the first price"
    );
    assert_eq!(certificate["rounds"], 2);
    let h1 = &certificate["hypotheses"][0];
    assert_eq!(h1["status"], "confirmed");
    assert_eq!(h1["cites"][0]["run"], run1.as_str());
    assert_eq!(h1["cites"][0]["line"], line);
    assert!(h1["cites"][0]["sha256"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(certificate["hypotheses"][1]["status"], "rejected");
    assert_eq!(certificate["hypotheses"][1]["cites"][0]["line"], line);
    // The runs before and after the fix, with their programs and tables.
    let runs = certificate["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["phase"], "beforeFix");
    assert_eq!(runs[1]["phase"], "afterFix");
    assert_eq!(runs[0]["programs"][0]["command"], "python3 app.py");
    assert_eq!(
        runs[0]["programs"][0]["ending"],
        json!({"kind": "exited", "code": 0})
    );
    assert_eq!(runs[0]["attempts"]["total"], 1);
    assert_eq!(runs[0]["hits"][0]["hits"], 1);
    assert_eq!(runs[1]["hits"][0]["hits"], 1);
    assert_eq!(
        certificate["fix"],
        json!({"round": 2, "anyway": false, "flaky": null})
    );
    assert_eq!(
        certificate["observations"][0]["text"],
        "12 now, as it should"
    );
    let cleanup = &certificate["cleanup"];
    assert_eq!(cleanup["probes"][0]["file"], "app.py");
    assert!(cleanup["filesScanned"].as_u64().unwrap() >= 1, "{cleanup}");
    let fingerprints: Vec<&str> = cleanup["fingerprints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(fingerprints.contains(&run1.as_str()), "{fingerprints:?}");
    assert!(
        fingerprints
            .iter()
            .any(|f| f.starts_with("#region debug-probe p1 ")),
        "{fingerprints:?}"
    );

    // It holds, and again when reformatted (the hash is over its content).
    let (valid, report) = check(root, "fix.json");
    assert!(valid, "{report}");
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "1 cited line(s) found unchanged in their runs"),
        "{report}"
    );
    std::fs::write(root.join("compact.json"), certificate.to_string()).unwrap();
    assert!(check(root, "compact.json").0);

    // Changed after it was written: refused.
    let mut tampered = certificate.clone();
    tampered["hypotheses"][1]["status"] = json!("confirmed");
    std::fs::write(root.join("tampered.json"), tampered.to_string()).unwrap();
    let (valid, report) = check(root, "tampered.json");
    assert!(!valid);
    assert!(
        report["failures"][0]
            .as_str()
            .unwrap()
            .starts_with("its content was changed after it was written"),
        "{report}"
    );

    // A fingerprint of the session back in a file: refused, with where.
    std::fs::write(root.join("notes.md"), format!("see {run1} for why\n")).unwrap();
    let (valid, report) = check(root, "fix.json");
    assert!(!valid);
    assert!(
        report["failures"].as_array().unwrap().iter().any(|f| f
            == &json!(format!(
                "notes.md:1: {run1} of session default is still there"
            ))),
        "{report}"
    );
    std::fs::remove_file(root.join("notes.md")).unwrap();

    // A probe of any session in the tree: refused as `check` refuses it.
    std::fs::write(
        root.join("left.py"),
        "# #region debug-probe p9 other\nx = 1\n# #endregion debug-probe p9\n",
    )
    .unwrap();
    let (valid, report) = check(root, "fix.json");
    assert!(!valid);
    assert!(
        report["failures"][0]
            .as_str()
            .unwrap()
            .starts_with("left.py:1: debug-probe p9"),
        "{report}"
    );
    std::fs::remove_file(root.join("left.py")).unwrap();

    // The cited line changed in its run: refused.
    let run_file = root.join(format!(".debug-sidecar/sessions/default/runs/{run1}.jsonl"));
    let original = std::fs::read_to_string(&run_file).unwrap();
    let edited: String = original
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i as u64 + 1 == line {
                format!("{}\n", l.replace("\"s\": 9", "\"s\": 12"))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(edited, original);
    std::fs::write(&run_file, edited).unwrap();
    let (valid, report) = check(root, "fix.json");
    assert!(!valid);
    assert!(
        report["failures"].as_array().unwrap().iter().any(|f| f
            == &json!(format!(
                "{run1}:{line} is not the line the certificate cites"
            ))),
        "{report}"
    );
    // Without the runs (a CI clone), the cited lines are noted, not checked.
    std::fs::remove_dir_all(root.join(".debug-sidecar")).unwrap();
    let (valid, report) = check(root, "fix.json");
    assert!(valid, "{report}");
    assert!(
        report["notes"].as_array().unwrap().iter().any(|n| {
            n
            == "1 cited line(s) not checked: their runs are not in this workspace's state directory"
        }),
        "{report}"
    );
    let human = sidecar(root, &["check", "--certificate", "fix.json"], None);
    assert!(human.status.success());
    assert!(
        String::from_utf8_lossy(&human.stderr)
            .contains("debug-sidecar check: the certificate of session default holds"),
        "{human:?}"
    );
}

#[test]
fn no_certificate_before_a_verified_end_and_bad_input_is_named() {
    let workspace = Workspace::new("certificate-none");
    let root = &workspace.root;
    let none = sidecar(root, &["certificate"], None);
    assert!(!none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("no session of this workspace has ended with its cleanup verified"),
        "{none:?}"
    );
    // An aborted session leaves no certificate.
    assert!(sidecar(root, &["start", "x"], None).status.success());
    assert!(sidecar(root, &["abort"], None).status.success());
    assert!(!sidecar(root, &["certificate"], None).status.success());
    std::fs::write(root.join("bad.json"), "{\"format\": 1}").unwrap();
    let (valid, report) = check(root, "bad.json");
    assert!(!valid);
    assert!(
        report["failures"][0]
            .as_str()
            .unwrap()
            .starts_with("it is not a fix certificate of version 1"),
        "{report}"
    );
    std::fs::write(root.join("bad.json"), "not json").unwrap();
    assert!(check(root, "bad.json").1["failures"][0]
        .as_str()
        .unwrap()
        .starts_with("it is not JSON"));
}

/// The README's certificate is a real one: its hash holds as shown.
#[test]
fn the_readme_shows_a_certificate_whose_hash_holds() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("```json\n{\n  \"format\": \"debug-sidecar/fix-certificate\"")
        .expect("the README shows a certificate");
    let body = &readme[start + "```json\n".len()..];
    let body = &body[..body.find("```").unwrap()];
    let shown: Value = serde_json::from_str(body).unwrap();
    let certificate: debug_sidecar::core::certificate::Certificate =
        serde_json::from_value(shown.clone()).unwrap();
    assert_eq!(
        debug_sidecar::core::certificate::content_hash(&shown),
        certificate.content_hash
    );
}
