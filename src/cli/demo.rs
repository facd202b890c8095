//! `debug-sidecar demo`: a whole scripted debug session on a bundled buggy
//! shell program. It starts `debug-sidecar serve` and drives it over stdio
//! like an editor and an agent harness would, printing what the editor shows
//! and what the model is told at each step. It checks its own outcome and
//! exits 1 if the session did not end with cleanup verified.

use crate::rpc::client::Connection;
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitCode};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The bundled program: a checkout total that should take 10% off carts of
/// three or more items, but compares with `-gt`.
const PROGRAM: &str = r#"#!/bin/sh
# Sum cart prices (in cents) and take 10% off carts of 3 or more items.
total=0
count=0
for price in "$@"; do
  total=$((total + price))
  count=$((count + 1))
done
if [ "$count" -gt 3 ]; then
  total=$((total * 90 / 100))
fi
echo "total: $total"
"#;

const PROBE_ANCHOR: &str = "if [ \"$count\" ";
const BUG: &str = "if [ \"$count\" -gt 3 ]; then";
const FIX: &str = "if [ \"$count\" -ge 3 ]; then";
const ARGS: [&str; 3] = ["1000", "2000", "3000"];

pub fn run(keep: bool, logpoints: bool) -> anyhow::Result<ExitCode> {
    let workspace = TempWorkspace::create()?;
    let result = if logpoints {
        super::demo_logpoints::play(&workspace.root)
    } else {
        play(&workspace.root)
    };
    if keep {
        println!("\n(workspace kept at {})", workspace.root.display());
        std::mem::forget(workspace);
    }
    result
}

/// How long the demo waits for a notification the server owes it.
pub(super) const WAIT: Duration = Duration::from_secs(10);

fn play(root: &Path) -> anyhow::Result<ExitCode> {
    let program = root.join("checkout.sh");
    fs::write(&program, PROGRAM)?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut server = Connection::spawn(&exe, root, false)
        .with_context(|| format!("cannot start {} serve", exe.display()))?;
    let init = server.initialize(root, json!({ "sessionId": "demo" }))?;

    println!("debug-sidecar demo: one debug session on a bundled buggy program");
    println!("workspace: {}", root.display());
    println!(
        "server:    {} serve (protocol v{}), driven over stdio like an editor would",
        exe.display(),
        init["capabilities"]["experimental"]["debugSidecar"]["protocolVersion"]
    );
    let before = execute(&program)?;
    println!(
        "\n$ sh checkout.sh {}    # expected: total: 5400",
        ARGS.join(" ")
    );
    println!("{before}");

    heading("1. The user starts Debug Mode");
    let problem = "`sh checkout.sh 1000 2000 3000` prints total: 6000; a 3-item cart should get 10% off (5400).";
    let started = call(&mut server, "debug/start", json!({ "problem": problem }))?;
    editor(&started);
    tell_model("kickoff", started["kickoff"].as_str().unwrap_or_default());

    heading("2. The agent records hypotheses and places a probe");
    let hypotheses = json!([
        hypothesis(
            "H1",
            "The discount check uses -gt, so exactly 3 items get no discount.",
            "open"
        ),
        hypothesis(
            "H2",
            "The item count is wrong, so the check sees fewer than 3 items.",
            "open"
        ),
    ]);
    call(
        &mut server,
        "debug/recordHypotheses",
        json!({ "hypotheses": hypotheses }),
    )?;
    agent("record_hypotheses H1, H2");
    let placed = call(
        &mut server,
        "debug/probeSnippet",
        json!({
            "file": "checkout.sh",
            "hypothesisId": "H1",
            "message": "count and total before the discount check",
            "variables": ["count", "total"],
        }),
    )?;
    let probe_id = placed["probe"]["id"]
        .as_str()
        .context("no probe id")?
        .to_string();
    let block = placed["snippet"].as_str().context("no snippet")?;
    agent(&format!(
        "probe_snippet checkout.sh (H1) -> {probe_id}; inserted above the discount check:"
    ));
    quote(block);
    insert_before(&program, PROBE_ANCHOR, block)?;
    edited(&mut server)?;
    let scanned = server
        .wait_for("debug/stateChanged", WAIT, |s| s["probes"]["live"] == 1)
        .context("the scan after the edit did not find the probe")?;
    sidecar(&format!(
        "scan after the edit: {probe_id} live at {}",
        scanned["probes"]["list"][0]["file"]
            .as_str()
            .unwrap_or_default()
            .to_string()
            + ":"
            + &scanned["probes"]["list"][0]["line"].to_string()
    ));

    heading("3. The agent stops without handing the round over");
    expect_nudge(&mut server, "stop blocked; the model is sent back with:")?;

    heading("4. The agent hands the round to the user");
    let steps = vec![
        format!("Run `sh checkout.sh {}`.", ARGS.join(" ")),
        "Press Proceed.".to_string(),
    ];
    let plan = json!([{
        "id": "e1",
        "method": "runtime_probe",
        "instructions": [format!("{probe_id} logs count and total before the check.")],
    }]);
    let handed = hand_off(&mut server, &steps, Some(plan))?;
    let closed_run = handed["runId"].as_str().unwrap_or_default().to_string();
    editor(&handed);
    notification(&handed);
    let context = call(&mut server, "debug/context", json!({}))?;
    tell_model(
        "blackboard (the context message, every turn)",
        context["content"].as_str().unwrap_or_default(),
    );

    heading("5. The user reproduces and presses Proceed");
    println!("$ sh checkout.sh {}", ARGS.join(" "));
    println!("{}", execute(&program)?);
    let Some(appended) = server.wait_for("debug/logAppended", WAIT, |a| a["run"] == closed_run)
    else {
        bail!("the probe's line was never announced (debug/logAppended)");
    };
    let arrived = call(
        &mut server,
        "debug/logs",
        json!({ "run": closed_run, "cursor": appended["cursor"] }),
    )?;
    println!("editor  ▸ run log (lines arrive as the program writes them):");
    for entry in arrived["entries"].as_array().into_iter().flatten() {
        println!(
            "            #{} {} {}",
            entry["line"],
            entry["entry"]["probeId"].as_str().unwrap_or("-"),
            entry["entry"]["data"]
        );
    }
    let proceeded = call(&mut server, "debug/proceed", json!({}))?;
    editor(&proceeded);
    tell_model("kickoff", proceeded["kickoff"].as_str().unwrap_or_default());
    let entries = read_logs(&mut server, &closed_run, &probe_id)?;
    let confirmed = entries
        .iter()
        .any(|e| e["entry"]["data"]["count"] == "3" && e["entry"]["data"]["total"] == "6000");
    if !confirmed {
        bail!("the probe did not log count=3, total=6000: {entries:?}");
    }

    heading("6. The evidence confirms H1: the agent fixes it and asks for verification");
    let mut confirmed = hypothesis(
        "H1",
        "The discount check uses -gt, so exactly 3 items get no discount.",
        "confirmed",
    );
    confirmed["evidence"] = json!([format!("{closed_run}: count=3 total=6000")]);
    let rejected = hypothesis(
        "H2",
        "The item count is wrong, so the check sees fewer than 3 items.",
        "rejected",
    );
    call(
        &mut server,
        "debug/recordHypotheses",
        json!({ "hypotheses": [confirmed, rejected] }),
    )?;
    replace_in(&program, BUG, FIX)?;
    agent("record_hypotheses H1 confirmed, H2 rejected; edit checkout.sh: -gt 3 -> -ge 3");
    edited(&mut server)?;
    let verify = format!(
        "Run `sh checkout.sh {}` again; it should print 5400.",
        ARGS.join(" ")
    );
    let handed = hand_off(&mut server, &[verify], None)?;
    editor(&handed);

    heading("7. The user verifies the fix and presses Mark fixed");
    let after = execute(&program)?;
    println!("$ sh checkout.sh {}\n{after}", ARGS.join(" "));
    if after != "total: 5400" {
        bail!("the fix did not work: {after}");
    }
    let done = call(&mut server, "debug/done", json!({}))?;
    editor(&done);
    tell_model("kickoff", done["kickoff"].as_str().unwrap_or_default());

    heading("8. Cleanup, verified against the ledger");
    expect_nudge(
        &mut server,
        "the agent stopped with a probe still on disk; sent back with:",
    )?;
    remove_block(&program, &probe_id)?;
    agent(&format!("edit checkout.sh: removed the {probe_id} block"));
    edited(&mut server)?;
    let stop = call(&mut server, "debug/stop", json!({}))?;
    let status = call(&mut server, "debug/status", json!({}))?;
    match stop["notice"].as_str() {
        Some(notice) if stop["decision"] == "allow" && status["active"] == false => {
            println!("\n{notice}");
        }
        _ => bail!("cleanup was not verified: {stop}"),
    }
    editor(&status);
    let check = Process::new(&exe)
        .arg("check")
        .current_dir(root)
        .output()
        .context("could not run debug-sidecar check")?;
    println!("\n$ debug-sidecar check    # the pre-commit hook");
    if !check.status.success() {
        bail!(
            "check found probes after cleanup: {}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    println!("{}", String::from_utf8_lossy(&check.stderr).trim());
    let exit = server.shutdown()?;
    if !exit.success() {
        bail!("the server did not exit cleanly: {exit}");
    }
    println!("\nThe bug is fixed on evidence, and no probe was left behind.");
    Ok(ExitCode::SUCCESS)
}

/// A request that must succeed.
/// The agent reads one probe's lines of a run; each is shown as it came.
pub(super) fn read_logs(
    server: &mut Connection,
    run: &str,
    probe: &str,
) -> anyhow::Result<Vec<Value>> {
    let logs = call(server, "debug/logs", json!({ "run": run, "probe": probe }))?;
    agent(&format!("read_logs {run} (probe {probe}):"));
    let entries = logs["entries"].as_array().cloned().unwrap_or_default();
    for entry in &entries {
        quote(&entry["entry"].to_string());
    }
    Ok(entries)
}

pub(super) fn call(server: &mut Connection, method: &str, params: Value) -> anyhow::Result<Value> {
    server
        .request(method, params)
        .with_context(|| format!("{method} failed"))
}

/// The harness reports an edit tool call: the sidecar rescans for probes.
pub(super) fn edited(server: &mut Connection) -> anyhow::Result<()> {
    server.notify("turn/event", json!({ "kind": "toolCall", "tool": "Edit" }))?;
    Ok(())
}

/// The agent stops and the sidecar must send it back; the demo fails otherwise.
pub(super) fn expect_nudge(server: &mut Connection, what: &str) -> anyhow::Result<()> {
    let stop = call(server, "debug/stop", json!({}))?;
    if stop["decision"] != "block" {
        bail!("this stop should have been blocked: {stop}");
    }
    sidecar(what);
    tell_model("nudge", stop["reason"].as_str().unwrap_or_default());
    Ok(())
}

/// The agent calls the hand-off tool; the demo shows the tool result it gets.
/// Returns the new snapshot.
pub(super) fn hand_off(
    server: &mut Connection,
    steps: &[String],
    plan: Option<Value>,
) -> anyhow::Result<Value> {
    let result = call(
        server,
        "debug/handOff",
        json!({ "mode": "reproduce", "steps": steps, "plan": plan }),
    )?;
    agent("hand_off_to_user (reproduce)");
    tell_model(
        "tool result",
        result["toolResult"].as_str().unwrap_or_default(),
    );
    Ok(result["snapshot"].clone())
}

pub(super) fn hypothesis(id: &str, statement: &str, status: &str) -> Value {
    json!({ "id": id, "statement": statement, "status": status, "evidence": [] })
}

fn execute(program: &Path) -> anyhow::Result<String> {
    let output = Process::new("sh")
        .arg(program)
        .args(ARGS)
        .output()
        .context("could not run sh")?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn insert_before(file: &Path, anchor: &str, block: &str) -> anyhow::Result<()> {
    let text = fs::read_to_string(file)?;
    let at = text.find(anchor).context("anchor not found")?;
    fs::write(file, format!("{}{}{}", &text[..at], block, &text[at..]))?;
    Ok(())
}

pub(super) fn replace_in(file: &Path, from: &str, to: &str) -> anyhow::Result<()> {
    let text = fs::read_to_string(file)?;
    fs::write(file, text.replace(from, to))?;
    Ok(())
}

/// What the agent does in cleanup: delete the block between its markers.
fn remove_block(file: &Path, probe_id: &str) -> anyhow::Result<()> {
    let text = fs::read_to_string(file)?;
    let mut inside = false;
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| {
            let start = line.contains(&crate::core::markers::start_marker(probe_id, ""));
            let end = line.contains(&crate::core::markers::end_marker(probe_id));
            let drop = inside || start;
            if start {
                inside = true;
            }
            if end {
                inside = false;
            }
            !drop && !end
        })
        .collect();
    fs::write(file, kept.join("\n") + "\n")?;
    Ok(())
}

/// The status bar an editor shows, from a snapshot.
pub(super) fn editor(snapshot: &Value) {
    let line = if snapshot["active"] != true {
        "Debug Mode off".to_string()
    } else {
        let turn = match snapshot["stage"].as_str() {
            Some("investigating") => "agent investigating",
            Some("user_turn") => "your turn",
            Some("cleaning_up") => "agent cleaning up",
            _ => "?",
        };
        format!(
            "Debug: round {} · {} · {} probe(s) on disk · run {}",
            snapshot["round"],
            turn,
            snapshot["probes"]["live"],
            snapshot["runId"].as_str().unwrap_or_default()
        )
    };
    println!("editor  ▸ [{line}]");
}

/// The notification an editor raises when the round becomes the user's.
pub(super) fn notification(snapshot: &Value) {
    println!("editor  ▸ notification: Reproduce the problem:");
    for (i, step) in snapshot["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!(
            "            {}. {}",
            i + 1,
            step.as_str().unwrap_or_default()
        );
    }
    println!("            [Proceed]  [Mark fixed]");
}

pub(super) fn heading(title: &str) {
    println!(
        "\n── {title} {}",
        "─".repeat(70usize.saturating_sub(title.len()))
    );
}

pub(super) fn agent(action: &str) {
    println!("agent   ▸ {action}");
}

pub(super) fn sidecar(what: &str) {
    println!("sidecar ▸ {what}");
}

pub(super) fn tell_model(what: &str, body: &str) {
    println!("model   ◂ {what}:");
    quote(body);
}

pub(super) fn quote(body: &str) {
    for line in body.lines() {
        println!("          │ {line}");
    }
}

struct TempWorkspace {
    root: PathBuf,
}

impl TempWorkspace {
    fn create() -> anyhow::Result<Self> {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let root =
            std::env::temp_dir().join(format!("debug-sidecar-demo-{}-{stamp}", std::process::id()));
        fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
        Ok(TempWorkspace { root })
    }
}

impl Drop for TempWorkspace {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}
