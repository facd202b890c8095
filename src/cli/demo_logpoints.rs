//! `debug-sidecar demo --logpoints`: the bundled demo's Python twin, debugged
//! with logpoints only. The agent places a logpoint (no file is edited), the
//! person reproduces through `debug-sidecar run` (the program's Python loads
//! the logpoint hook and the logpoint's values land in the run), the fix is the only
//! edit, and cleanup is the logpoint's removal from the ledger. The demo
//! checks that the source was unchanged byte for byte until the fix.

use super::demo::{
    agent, call, editor, expect_nudge, hand_off, heading, hypothesis, notification, read_logs,
    replace_in, sidecar, tell_model,
};
use crate::rpc::client::Connection;
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::{Command as Process, ExitCode};

/// The twin: the same checkout, the same bug (`> 3` where `>= 3` is meant).
pub const PROGRAM: &str = r#"import sys


def checkout(prices):
    """Sum cart prices (in cents); take 10% off carts of 3 or more items."""
    total = 0
    count = 0
    for price in prices:
        total += price
        count += 1
    if count > 3:
        total = total * 90 // 100
    return total


print("total:", checkout([int(p) for p in sys.argv[1:]]))
"#;

const BUG: &str = "    if count > 3:";
const FIX: &str = "    if count >= 3:";
const ARGS: [&str; 3] = ["1000", "2000", "3000"];

/// The version of the `python3` the person's runs use, when it is 3.8 or
/// newer (what the logpoint hook needs).
fn python_version() -> Option<String> {
    let output = Process::new("python3")
        .args([
            "-c",
            "import sys; print('%d.%d.%d' % sys.version_info[:3]); sys.exit(sys.version_info < (3, 8))",
        ])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

pub fn play(root: &Path) -> anyhow::Result<ExitCode> {
    let Some(version) = python_version() else {
        bail!("demo --logpoints needs `python3` (3.8 or newer) on PATH");
    };
    let program = root.join("checkout.py");
    fs::write(&program, PROGRAM)?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut server = Connection::spawn(&exe, root, false)
        .with_context(|| format!("cannot start {} serve", exe.display()))?;
    server.initialize(root, json!({ "sessionId": "demo" }))?;
    let line = PROGRAM
        .lines()
        .position(|l| l == BUG)
        .context("the bug's line")? as u32
        + 1;
    let reproduce = format!(
        "debug-sidecar run -- python3 checkout.py {}",
        ARGS.join(" ")
    );

    println!("debug-sidecar demo --logpoints: the Python twin, with logpoints only");
    println!("workspace: {}", root.display());
    println!("interpreter for the runs: python3 (Python {version})");

    heading("1. The user starts Debug Mode");
    let problem = "`python3 checkout.py 1000 2000 3000` prints total: 6000; a 3-item cart should \
                   get 10% off (5400).";
    let started = call(&mut server, "debug/start", json!({ "problem": problem }))?;
    editor(&started);

    heading("2. The agent records hypotheses and places a logpoint (no file is edited)");
    call(
        &mut server,
        "debug/recordHypotheses",
        json!({ "hypotheses": [
            hypothesis("H1", "The discount check uses > 3, so exactly 3 items get none.", "open"),
            hypothesis("H2", "The item count is wrong, so the check sees fewer than 3.", "open"),
        ]}),
    )?;
    agent("record_hypotheses H1, H2");
    let placed = call(
        &mut server,
        "debug/probeSnippet",
        json!({
            "file": "checkout.py",
            "kind": "logpoint",
            "line": line,
            "hypothesisId": "H1",
            "message": "count and total at the discount check",
            "variables": ["count", "total", "count > 3", "undefined_name"],
        }),
    )?;
    let probe_id = placed["probe"]["id"].as_str().context("no id")?.to_string();
    agent(&format!(
        "probe_snippet kind=logpoint checkout.py:{line} (H1) -> {probe_id}"
    ));
    editor(&placed["snapshot"]);

    heading("3. The agent hands the round to the user");
    let plan = json!([{
        "id": "e1",
        "method": "runtime_probe",
        "instructions": [format!("logpoint {probe_id} records count and total at the check.")],
    }]);
    let steps = vec![format!("Run `{reproduce}`."), "Press Proceed.".to_string()];
    let handed = hand_off(&mut server, &steps, Some(plan))?;
    let run_id = handed["runId"].as_str().unwrap_or_default().to_string();
    notification(&handed);
    let context = call(&mut server, "debug/context", json!({}))?;
    tell_model(
        "blackboard",
        context["content"].as_str().unwrap_or_default(),
    );

    heading("4. The user reproduces through debug-sidecar run and presses Proceed");
    let out = person_run(&exe, root)?;
    if fs::read_to_string(&program)? != PROGRAM {
        bail!("the source changed during the run");
    }
    sidecar("checkout.py is unchanged, byte for byte");
    let proceeded = call(&mut server, "debug/proceed", json!({}))?;
    editor(&proceeded);
    let entries = read_logs(&mut server, &run_id, &probe_id)?;
    let data = entries
        .first()
        .map(|e| e["entry"]["data"].clone())
        .unwrap_or(Value::Null);
    if data["count"] != 3 || data["total"] != 6000 || data["count > 3"] != false {
        bail!("the logpoint did not record count=3, total=6000: {entries:?}\n{out}");
    }
    if !data["undefined_name"]["$error"]
        .as_str()
        .is_some_and(|e| e.starts_with("NameError"))
    {
        bail!("the failing expression was not recorded as an error: {data}");
    }

    heading("5. H1 confirmed: the agent fixes it (the only edit) and asks for verification");
    replace_in(&program, BUG, FIX)?;
    agent("edit checkout.py: `count > 3` -> `count >= 3`");
    let verify = format!("Run `{reproduce}` again; it should print 5400.");
    let handed = hand_off(&mut server, &[verify], None)?;
    editor(&handed);

    heading("6. The user verifies (the logpoint's line changed: run says so) and marks it fixed");
    let out = person_run(&exe, root)?;
    if !out.contains("total: 5400") {
        bail!("the fix did not work: {out}");
    }
    let done = call(&mut server, "debug/done", json!({}))?;
    tell_model("kickoff", done["kickoff"].as_str().unwrap_or_default());

    heading("7. Cleanup: the logpoint leaves the ledger");
    expect_nudge(
        &mut server,
        "the agent stopped with a logpoint in the ledger:",
    )?;
    call(
        &mut server,
        "debug/removeLogpoints",
        json!({ "probeIds": [probe_id] }),
    )?;
    agent(&format!("remove_logpoints [{probe_id}]"));
    let stop = call(&mut server, "debug/stop", json!({}))?;
    match stop["notice"].as_str() {
        Some(notice) if stop["decision"] == "allow" => println!("\n{notice}"),
        _ => bail!("cleanup was not verified: {stop}"),
    }
    if fs::read_to_string(&program)? != PROGRAM.replace(BUG, FIX) {
        bail!("the source differs from the original by more than the fix");
    }
    sidecar("checkout.py differs from the original by the fix alone");
    let check = Process::new(&exe).arg("check").current_dir(root).output()?;
    println!("\n$ debug-sidecar check");
    println!("{}", String::from_utf8_lossy(&check.stderr).trim());
    if !check.status.success() {
        bail!("check failed after cleanup");
    }
    server.shutdown()?;
    println!("\nFixed on evidence from a logpoint; no probe was ever written into the source.");
    Ok(ExitCode::SUCCESS)
}

/// The person's `debug-sidecar run`.
fn person_run(exe: &Path, root: &Path) -> anyhow::Result<String> {
    println!(
        "$ debug-sidecar run -- python3 checkout.py {}",
        ARGS.join(" ")
    );
    let output = Process::new(exe)
        .args(["run", "--session", "demo", "--", "python3", "checkout.py"])
        .args(ARGS)
        .current_dir(root)
        .output()
        .context("could not run debug-sidecar run")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}");
    for line in stderr.lines() {
        println!("{line}");
    }
    Ok(format!("{stdout}{stderr}"))
}
