//! Failure rates (issue 31): a flaky program (it fails on a fixed 7 of
//! every 20 runs) through `debug-sidecar run --repeat`, the rate in every
//! summary face and in the Proceed kickoff, `--until-fail`, and Mark fixed
//! gated on a post-fix repeat significantly better than the rate before.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use support::*;

/// Fails on runs 2, 5, 8, 11, 13, 16 and 19 of every 20 (a counter file),
/// unless `fixed` exists.
const FLAKY: &str = r#"import os, sys
n = int(open('count').read()) if os.path.exists('count') else 0
open('count', 'w').write(str(n + 1))
if not os.path.exists('fixed') and n % 20 in (1, 4, 7, 10, 12, 15, 18):
    print('lost an update', file=sys.stderr)
    sys.exit(1)
print('ok')
"#;

fn repeat(root: &Path, args: &[&str]) -> std::process::Output {
    let mut command = std::process::Command::new(BIN);
    command
        .arg("run")
        .args(args)
        .args(["--", "python3", "flaky.py"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION");
    command.output().unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_flaky_reproduction_is_measured_and_its_rate_reaches_every_face() {
    let workspace = Workspace::new("rates");
    let root = &workspace.root;
    std::fs::write(root.join("flaky.py"), FLAKY).unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "updates get lost"}))
        .unwrap();
    let ran = repeat(root, &["--repeat", "20"]);
    let said = stderr(&ran);
    assert_eq!(ran.status.code(), Some(1), "{said}");
    assert!(
        said.contains("debug-sidecar: attempt 2 of 20: the program exited with status 1"),
        "{said}"
    );
    assert!(
        said.contains(
            "debug-sidecar: the reproduction failed 7 of 20 (35%, 95% interval 18%-57%)."
        ),
        "{said}"
    );
    // Each attempt's exit record is numbered.
    let log = current_log(&mut server);
    let exits: Vec<Value> = records(&log)
        .into_iter()
        .filter(|r| r["source"] == "exit")
        .collect();
    assert_eq!(exits.len(), 20);
    assert_eq!(
        (exits[1]["attempt"].as_u64(), exits[1]["attempts"].as_u64()),
        (Some(2), Some(20))
    );
    assert_eq!(exits[1]["exitCode"], 1);

    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(
        summary["attempts"],
        json!({"failed": 7, "total": 20}),
        "{summary}"
    );
    let cli = sidecar(root, &["logs", "--summary", "--json"], None);
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(cli["summary"]["attempts"], summary["attempts"]);
    let person = sidecar(root, &["logs", "--summary"], None);
    assert!(
        String::from_utf8_lossy(&person.stdout)
            .contains("  the reproduction failed 7 of 20 (35%, 95% interval 18%-57%)"),
        "{person:?}"
    );
    let tool = &mcp_tool_texts(root, &[("log_summary", json!({}))])[0];
    assert!(
        tool.contains("; the reproduction failed 7 of 20 (35%, 95% interval 18%-57%))"),
        "{tool}"
    );

    server
        .request(
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Run `debug-sidecar run --repeat 20 -- python3 flaky.py`."]}),
        )
        .unwrap();
    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    let kickoff = proceeded["kickoff"].as_str().unwrap();
    assert!(
        kickoff.contains(
            "Its reproduction ran 20 times and failed 7 of 20 (35%, 95% interval 18%-57%)."
        ),
        "{kickoff}"
    );

    // --until-fail stops at the first failure (the counter is at 20 now:
    // runs 21 and 22, the second fails).
    let until = repeat(root, &["--repeat", "20", "--until-fail"]);
    let said = stderr(&until);
    assert_eq!(until.status.code(), Some(1), "{said}");
    assert!(said.contains("the reproduction failed 1 of 2 ("), "{said}");
    assert!(!said.contains("attempt 3 of 20"), "{said}");
}

#[test]
fn the_agent_measures_the_rate_with_run_reproduction_repeat() {
    let workspace = Workspace::new("rates-agent");
    let root = &workspace.root;
    std::fs::write(root.join("flaky.py"), FLAKY).unwrap();
    assert!(sidecar(root, &["start", "updates get lost"], None)
        .status
        .success());
    let texts = mcp_tool_texts(
        root,
        &[
            (
                "run_reproduction",
                json!({"command": ["python3", "flaky.py"], "repeat": 20}),
            ),
            (
                "run_reproduction",
                json!({"command": ["python3", "flaky.py"], "repeat": 20, "timeoutSec": 60}),
            ),
            (
                "run_reproduction",
                json!({"command": ["python3", "flaky.py"], "repeat": 0}),
            ),
        ],
    );
    assert!(
        texts[0].contains(
            "Its 20 attempts: the reproduction failed 7 of 20 (35%, 95% interval 18%-57%). \
             Exit status of each, in order: 0 1 0 0 1 0 0 1 0 0 1 0 1 0 0 1 0 0 1 0."
        ),
        "{}",
        texts[0]
    );
    assert!(
        texts[1].contains("could take longer than 600 s in all"),
        "{}",
        texts[1]
    );
    assert!(
        texts[2].contains("Invalid argument `repeat`: give 1 to 50 attempts."),
        "{}",
        texts[2]
    );
}

/// A session whose round 1 measured the flaky rate (7 of 20), then the fix
/// (`fixed` exists) and a verifying hand-off in round 2.
fn measured_then_fixed(root: &Path) -> debug_sidecar::rpc::client::Connection {
    std::fs::write(root.join("flaky.py"), FLAKY).unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "updates get lost"}))
        .unwrap();
    assert_eq!(repeat(root, &["--repeat", "20"]).status.code(), Some(1));
    let steps = json!({"mode": "reproduce", "steps": ["Run it."]});
    server.request("debug/handOff", steps.clone()).unwrap();
    server.request("debug/proceed", json!({})).unwrap();
    std::fs::write(root.join("fixed"), "").unwrap();
    server.request("debug/handOff", steps).unwrap();
    server
}

#[test]
fn mark_fixed_on_a_flaky_bug_needs_a_significantly_better_repeat() {
    let workspace = Workspace::new("rates-gate");
    let root = &workspace.root;
    let mut server = measured_then_fixed(root);
    // One lucky run proves nothing.
    assert!(repeat(root, &[]).status.success());
    let refused = sidecar(root, &["done"], None);
    // As any command the session refuses.
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let why = stderr(&refused);
    assert!(
        why.contains(
            "Mark fixed needs more evidence: this bug fails only some of the time. Before the fix \
             the reproduction failed 7 of 20 (35%, 95% interval 18%-57%); since, it failed 0 of 1 \
             (0%, 95% interval 0%-79%), which that rate gives by chance too (p = 0.65; needs < \
             0.01). Run it at least 11 times without a failure"
        ),
        "{why}"
    );
    let by_editor = server.request("debug/done", json!({})).unwrap_err();
    assert!(
        format!("{by_editor:?}").contains("Mark fixed needs more evidence"),
        "{by_editor:?}"
    );
    assert_eq!(
        server.request("debug/status", json!({})).unwrap()["stage"],
        "user_turn",
        "a refused Mark fixed changed the stage"
    );
    // Ten more without a failure: 0 of 11 after 35% is significantly lower.
    assert!(repeat(root, &["--repeat", "10"]).status.success());
    let done = server.request("debug/done", json!({})).unwrap();
    let kickoff = done["kickoff"].as_str().unwrap();
    assert!(
        kickoff.contains(
            "The fix rests on the reproduction's rate: before, it failed 7 of 20 (35%, 95% \
             interval 18%-57%); since, it failed 0 of 11 (0%, 95% interval 0%-26%) (p = 0.0088, \
             significantly lower)."
        ),
        "{kickoff}"
    );
}

#[test]
fn the_person_may_mark_a_flaky_bug_fixed_anyway_and_the_agent_is_told() {
    let workspace = Workspace::new("rates-anyway");
    let root = &workspace.root;
    let mut server = measured_then_fixed(root);
    assert!(repeat(root, &[]).status.success());
    let anyway = sidecar(root, &["done", "--anyway", "--kickoff"], None);
    assert!(anyway.status.success(), "{anyway:?}");
    let said = String::from_utf8_lossy(&anyway.stdout);
    assert!(
        said.contains(
            "The person marked it fixed anyway, without the evidence of a lower rate: \
                       before, the reproduction failed 7 of 20"
        ),
        "{said}"
    );
    assert_eq!(
        server.request("debug/status", json!({})).unwrap()["stage"],
        "cleaning_up"
    );
}

/// Fails on 7 of every 20 attempts whatever order they run in: each takes
/// the next free slot (`mkdir` is atomic), then sleeps a little.
const FLAKY_SLOTS: &str = r#"import os, sys, time
n = 0
while True:
    try:
        os.mkdir('slot%d' % n)
        break
    except FileExistsError:
        n += 1
print('slot', n)
time.sleep(0.3)
if n % 20 in (1, 4, 7, 10, 12, 15, 18):
    print('lost an update', file=sys.stderr)
    sys.exit(1)
"#;

#[test]
fn attempts_run_side_by_side_with_jobs_and_each_line_names_its_attempt() {
    let workspace = Workspace::new("rates-jobs");
    let root = &workspace.root;
    std::fs::write(root.join("slots.py"), FLAKY_SLOTS).unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "updates get lost"}))
        .unwrap();
    let ran = std::process::Command::new(BIN)
        .args([
            "run", "--repeat", "20", "--jobs", "4", "--", "python3", "slots.py",
        ])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .output()
        .unwrap();
    let said = stderr(&ran);
    assert_eq!(ran.status.code(), Some(1), "{said}");
    assert!(
        said.contains("the reproduction failed 7 of 20 (35%, 95% interval 18%-57%)."),
        "{said}"
    );
    // Side by side, their output is recorded, not shown.
    assert!(
        ran.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&ran.stdout)
    );
    let records = records(&current_log(&mut server));
    let exits: Vec<&Value> = records.iter().filter(|r| r["source"] == "exit").collect();
    let mut numbers: Vec<u64> = exits
        .iter()
        .map(|r| r["attempt"].as_u64().unwrap())
        .collect();
    numbers.sort();
    assert_eq!(numbers, (1..=20).collect::<Vec<u64>>());
    // Every line says which attempt printed it.
    let lines: Vec<&Value> = records.iter().filter(|r| r["source"] == "stdout").collect();
    assert_eq!(lines.len(), 20);
    assert!(lines.iter().all(|r| r["attempt"].is_u64()), "{lines:?}");
    // Attempts overlapped: one started before another ended.
    let spans: Vec<(u64, u64)> = exits
        .iter()
        .map(|r| {
            let end = r["timestamp"].as_u64().unwrap();
            (end - r["durationMs"].as_u64().unwrap(), end)
        })
        .collect();
    let overlapped = spans
        .iter()
        .enumerate()
        .any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(overlapped, "no two attempts ran at once: {spans:?}");
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    assert_eq!(summary["attempts"], json!({"failed": 7, "total": 20}));
}
