//! `debug-sidecar demo --logpoints`: the bundled demo's Python twin, then its
//! Node twin when `node` is on PATH, each debugged with logpoints only. The
//! agent places a logpoint (no file is edited), the person reproduces through
//! `debug-sidecar run` (the program's Python or Node loads the logpoint hook
//! and the logpoint's values land in the run), the fix is the only edit, and
//! cleanup is the logpoint's removal from the ledger. The demo checks that the
//! source was unchanged byte for byte until the fix.

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

/// The Node twin: the same bug in JavaScript.
pub const JS_PROGRAM: &str = r#"function checkout(prices) {
  // Sum cart prices (in cents); take 10% off carts of 3 or more items.
  let total = 0;
  let count = 0;
  for (const price of prices) {
    total += price;
    count += 1;
  }
  if (count > 3) {
    total = Math.floor((total * 90) / 100);
  }
  return total;
}

console.log("total:", checkout(process.argv.slice(2).map(Number)));
"#;

const ARGS: [&str; 3] = ["1000", "2000", "3000"];

/// One twin: its file, the bug and its fix, the interpreter the person's
/// runs use, and how that runtime names an undefined variable's error.
struct Twin {
    file: &'static str,
    program: &'static str,
    bug: &'static str,
    fix: &'static str,
    interpreter: &'static str,
    runtime: String,
    undefined: &'static str,
}

const PYTHON_TWIN: (&str, &str, &str, &str) = (
    "checkout.py",
    PROGRAM,
    "    if count > 3:",
    "    if count >= 3:",
);

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

/// The version of the `node` on PATH, if there is one.
fn node_version() -> Option<String> {
    let output = Process::new("node").arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

pub fn play(root: &Path) -> anyhow::Result<ExitCode> {
    let Some(version) = python_version() else {
        bail!("demo --logpoints needs `python3` (3.8 or newer) on PATH");
    };
    let (file, program, bug, fix) = PYTHON_TWIN;
    let mut twins = vec![Twin {
        file,
        program,
        bug,
        fix,
        interpreter: "python3",
        runtime: format!("Python {version}"),
        undefined: "NameError",
    }];
    match node_version() {
        Some(version) => twins.push(Twin {
            file: "checkout.js",
            program: JS_PROGRAM,
            bug: "  if (count > 3) {",
            fix: "  if (count >= 3) {",
            interpreter: "node",
            runtime: format!("Node {version}"),
            undefined: "ReferenceError",
        }),
        None => println!("(no `node` on PATH: the Node twin is left out)"),
    }
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut server = Connection::spawn(&exe, root, false)
        .with_context(|| format!("cannot start {} serve", exe.display()))?;
    server.initialize(root, json!({ "sessionId": "demo" }))?;
    println!("debug-sidecar demo --logpoints: the checkout twins, with logpoints only");
    println!("workspace: {}", root.display());
    for twin in &twins {
        play_twin(&mut server, &exe, root, twin)?;
    }
    server.shutdown()?;
    println!("\nFixed on evidence from logpoints; no probe was ever written into the source.");
    Ok(ExitCode::SUCCESS)
}

/// One whole session on one twin, from the problem to verified cleanup.
fn play_twin(server: &mut Connection, exe: &Path, root: &Path, twin: &Twin) -> anyhow::Result<()> {
    let Twin {
        file,
        bug,
        fix,
        interpreter,
        ..
    } = *twin;
    let program = root.join(file);
    fs::write(&program, twin.program)?;
    let line = twin
        .program
        .lines()
        .position(|l| l == bug)
        .context("the bug's line")? as u32
        + 1;
    let command = format!("{interpreter} {file} {}", ARGS.join(" "));
    let reproduce = format!("debug-sidecar run -- {command}");

    println!("\n===== The {file} twin, run by {} =====", twin.runtime);

    heading("1. The user starts Debug Mode");
    let problem =
        format!("`{command}` prints total: 6000; a 3-item cart should get 10% off (5400).");
    let started = call(server, "debug/start", json!({ "problem": problem }))?;
    editor(&started);

    heading("2. The agent records hypotheses and places a logpoint (no file is edited)");
    call(
        server,
        "debug/recordHypotheses",
        json!({ "hypotheses": [
            hypothesis("H1", "The discount check uses > 3, so exactly 3 items get none.", "open"),
            hypothesis("H2", "The item count is wrong, so the check sees fewer than 3.", "open"),
        ]}),
    )?;
    agent("record_hypotheses H1, H2");
    let placed = call(
        server,
        "debug/probeSnippet",
        json!({
            "file": file,
            "kind": "logpoint",
            "line": line,
            "hypothesisId": "H1",
            "message": "count and total at the discount check",
            "variables": ["count", "total", "count > 3", "undefined_name"],
        }),
    )?;
    let probe_id = placed["probe"]["id"].as_str().context("no id")?.to_string();
    agent(&format!(
        "probe_snippet kind=logpoint {file}:{line} (H1) -> {probe_id}"
    ));
    editor(&placed["snapshot"]);

    heading("3. The agent hands the round to the user");
    let plan = json!([{
        "id": "e1",
        "method": "runtime_probe",
        "instructions": [format!("logpoint {probe_id} records count and total at the check.")],
    }]);
    let steps = vec![format!("Run `{reproduce}`."), "Press Proceed.".to_string()];
    let handed = hand_off(server, &steps, Some(plan))?;
    let run_id = handed["runId"].as_str().unwrap_or_default().to_string();
    notification(&handed);
    let context = call(server, "debug/context", json!({}))?;
    tell_model(
        "blackboard",
        context["content"].as_str().unwrap_or_default(),
    );

    heading("4. The user reproduces through debug-sidecar run and presses Proceed");
    let out = person_run(exe, root, twin)?;
    if fs::read_to_string(&program)? != twin.program {
        bail!("the source changed during the run");
    }
    sidecar(&format!("{file} is unchanged, byte for byte"));
    let proceeded = call(server, "debug/proceed", json!({}))?;
    editor(&proceeded);
    let entries = read_logs(server, &run_id, &probe_id)?;
    let data = entries
        .first()
        .map(|e| e["entry"]["data"].clone())
        .unwrap_or(Value::Null);
    if data["count"] != 3 || data["total"] != 6000 || data["count > 3"] != false {
        bail!("the logpoint did not record count=3, total=6000: {entries:?}\n{out}");
    }
    if !data["undefined_name"]["$error"]
        .as_str()
        .is_some_and(|e| e.starts_with(twin.undefined))
    {
        bail!("the failing expression was not recorded as an error: {data}");
    }

    heading("5. H1 confirmed: the agent fixes it (the only edit) and asks for verification");
    replace_in(&program, bug, fix)?;
    agent(&format!("edit {file}: `count > 3` -> `count >= 3`"));
    let verify = format!("Run `{reproduce}` again; it should print 5400.");
    let handed = hand_off(server, &[verify], None)?;
    editor(&handed);

    heading("6. The user verifies (the logpoint's line changed: run says so) and marks it fixed");
    let out = person_run(exe, root, twin)?;
    if !out.contains("total: 5400") {
        bail!("the fix did not work: {out}");
    }
    let done = call(server, "debug/done", json!({}))?;
    tell_model("kickoff", done["kickoff"].as_str().unwrap_or_default());

    heading("7. Cleanup: the logpoint leaves the ledger");
    expect_nudge(server, "the agent stopped with a logpoint in the ledger:")?;
    call(
        server,
        "debug/removeLogpoints",
        json!({ "probeIds": [probe_id] }),
    )?;
    agent(&format!("remove_logpoints [{probe_id}]"));
    let stop = call(server, "debug/stop", json!({}))?;
    match stop["notice"].as_str() {
        Some(notice) if stop["decision"] == "allow" => println!("\n{notice}"),
        _ => bail!("cleanup was not verified: {stop}"),
    }
    if fs::read_to_string(&program)? != twin.program.replace(bug, fix) {
        bail!("the source differs from the original by more than the fix");
    }
    sidecar(&format!(
        "{file} differs from the original by the fix alone"
    ));
    let check = Process::new(exe).arg("check").current_dir(root).output()?;
    println!("\n$ debug-sidecar check");
    println!("{}", String::from_utf8_lossy(&check.stderr).trim());
    if !check.status.success() {
        bail!("check failed after cleanup");
    }
    Ok(())
}

/// The person's `debug-sidecar run`.
fn person_run(exe: &Path, root: &Path, twin: &Twin) -> anyhow::Result<String> {
    println!(
        "$ debug-sidecar run -- {} {} {}",
        twin.interpreter,
        twin.file,
        ARGS.join(" ")
    );
    let output = Process::new(exe)
        .args([
            "run",
            "--session",
            "demo",
            "--",
            twin.interpreter,
            twin.file,
        ])
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
