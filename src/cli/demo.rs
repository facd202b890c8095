//! `debug-sidecar demo`: a whole scripted debug session on a bundled buggy
//! shell program, printing what an editor would show and what the model would
//! be told at each step. It checks its own outcome and exits 1 if the session
//! did not end with cleanup verified.

use crate::core::machine::*;
use crate::core::model::*;
use crate::core::text;
use crate::engine::Engine;
use crate::workspace::{runlog, snippet};
use anyhow::{bail, Context};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

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

pub fn run(keep: bool) -> anyhow::Result<ExitCode> {
    let workspace = TempWorkspace::create()?;
    let result = play(&workspace.root);
    if keep {
        println!("\n(workspace kept at {})", workspace.root.display());
        std::mem::forget(workspace);
    }
    result
}

fn play(root: &Path) -> anyhow::Result<ExitCode> {
    let program = root.join("checkout.sh");
    fs::write(&program, PROGRAM)?;
    let mut engine = Engine::new(root, &root.join(".debug-sidecar"), "demo");
    let mut clock = Clock::new();

    println!("debug-sidecar demo: one debug session on a bundled buggy program");
    println!("workspace: {}", root.display());
    let before = execute(&program)?;
    println!(
        "\n$ sh checkout.sh {}    # expected: total: 5400",
        ARGS.join(" ")
    );
    println!("{before}");

    heading("1. The user starts Debug Mode");
    let problem = "`sh checkout.sh 1000 2000 3000` prints total: 6000; a 3-item cart should get 10% off (5400).";
    let effects = engine.apply(
        Command::Start {
            problem: problem.into(),
        },
        clock.tick(),
    )?;
    editor(&engine);
    tell_model("kickoff", &kickoff_text(&engine, &effects));

    heading("2. The agent records hypotheses and places a probe");
    let hypotheses = vec![
        hypothesis(
            "H1",
            "The discount check uses -gt, so exactly 3 items get no discount.",
        ),
        hypothesis(
            "H2",
            "The item count is wrong, so the check sees fewer than 3 items.",
        ),
    ];
    engine.apply(Command::RecordHypotheses(hypotheses.clone()), clock.tick())?;
    agent("record_hypotheses H1, H2");
    let effects = engine.apply(
        Command::RegisterProbe(ProbeRequest {
            file: "checkout.sh".into(),
            hypothesis_id: Some("H1".into()),
            language: Some("shell".into()),
        }),
        clock.tick(),
    )?;
    let probe = effects
        .iter()
        .find_map(|e| match e {
            Effect::ProbeRegistered { probe } => Some(probe.clone()),
            _ => None,
        })
        .context("the probe was not registered")?;
    let env = engine.env();
    let block = snippet::snippet(
        "shell",
        &snippet::SnippetInput {
            probe: &probe,
            session_id: engine.session_id(),
            session_tag: engine.session_tag(),
            log_file: &env.probe_log().context("no probe log")?,
            message: "count and total before the discount check",
            variables: &["count", "total"],
        },
    )?;
    agent(&format!(
        "probe_snippet checkout.sh (H1) -> {}; inserted above the discount check:",
        probe.id
    ));
    quote(&block);
    insert_before(&program, PROBE_ANCHOR, &block)?;
    let reconciled = engine.rescan(clock.tick())?;
    sidecar(&format!(
        "scan: live {:?}, missing {:?}",
        reconciled.live, reconciled.missing
    ));

    heading("3. The agent stops without handing the round over");
    expect_nudge(
        &mut engine,
        &mut clock,
        "stop blocked; the model is sent back with:",
    )?;

    heading("4. The agent hands the round to the user");
    let steps = vec![
        format!("Run `sh checkout.sh {}`.", ARGS.join(" ")),
        "Press Proceed.".to_string(),
    ];
    hand_off(
        &mut engine,
        &mut clock,
        steps.clone(),
        Some(vec![EvidenceRequest {
            id: "e1".into(),
            method: EvidenceMethod::RuntimeProbe,
            instructions: vec!["p1 logs count and total before the check.".into()],
            artifact_hint: None,
        }]),
    )?;
    editor(&engine);
    notification(&steps);
    tell_model(
        "blackboard (the context message, every turn)",
        &engine.blackboard().unwrap_or_default(),
    );

    heading("5. The user reproduces and presses Proceed");
    println!("$ sh checkout.sh {}", ARGS.join(" "));
    println!("{}", execute(&program)?);
    let closed_run = current_run(&engine)?;
    let effects = engine.apply(Command::Proceed(ProceedInput::default()), clock.tick())?;
    editor(&engine);
    tell_model("kickoff", &kickoff_text(&engine, &effects));
    let lines = runlog::read_lines(&engine.run_file(&closed_run))?;
    agent(&format!("read_logs {closed_run}:"));
    for line in &lines {
        quote(line);
    }
    if !lines
        .iter()
        .any(|l| l.contains("\"count\":\"3\"") && l.contains("\"total\":\"6000\""))
    {
        bail!("the probe did not log count=3, total=6000: {lines:?}");
    }

    heading("6. The evidence confirms H1: the agent fixes it and asks for verification");
    let mut confirmed = hypotheses;
    confirmed[0].status = HypothesisStatus::Confirmed;
    confirmed[0].evidence = vec![format!("{closed_run}: count=3 total=6000")];
    confirmed[1].status = HypothesisStatus::Rejected;
    engine.apply(Command::RecordHypotheses(confirmed), clock.tick())?;
    replace_in(&program, BUG, FIX)?;
    agent("record_hypotheses H1 confirmed, H2 rejected; edit checkout.sh: -gt 3 -> -ge 3");
    engine.apply(
        Command::ToolCall {
            tool: "Edit".into(),
        },
        clock.tick(),
    )?;
    let verify = format!(
        "Run `sh checkout.sh {}` again; it should print 5400.",
        ARGS.join(" ")
    );
    hand_off(&mut engine, &mut clock, vec![verify], None)?;
    editor(&engine);

    heading("7. The user verifies the fix and presses Mark fixed");
    let after = execute(&program)?;
    println!("$ sh checkout.sh {}\n{after}", ARGS.join(" "));
    if after != "total: 5400" {
        bail!("the fix did not work: {after}");
    }
    let effects = engine.apply(Command::Done { note: None }, clock.tick())?;
    editor(&engine);
    tell_model("kickoff", &kickoff_text(&engine, &effects));

    heading("8. Cleanup, verified against the ledger");
    expect_nudge(
        &mut engine,
        &mut clock,
        "the agent stopped with a probe still on disk; sent back with:",
    )?;
    remove_block(&program, &probe.id)?;
    agent(&format!("edit checkout.sh: removed the {} block", probe.id));
    engine.apply(
        Command::ToolCall {
            tool: "Edit".into(),
        },
        clock.tick(),
    )?;
    let decision = stop(&mut engine, &mut clock)?;
    match decision {
        StopDecision::Allow {
            notice: Some(notice @ Notice::CleanupVerified(_)),
        } if *engine.state() == DebugState::Inactive => {
            println!("\n{}", text::notice(&notice, 0));
        }
        other => bail!("cleanup was not verified: {other:?}"),
    }
    let leftovers = fs::read_to_string(&program)?;
    if leftovers.contains("debug-probe") {
        bail!("a marker is still in checkout.sh");
    }
    println!("\nThe bug is fixed on evidence, and no probe was left behind.");
    Ok(ExitCode::SUCCESS)
}

fn stop(engine: &mut Engine, clock: &mut Clock) -> anyhow::Result<StopDecision> {
    let effects = engine.apply(Command::Stop, clock.tick())?;
    effects
        .into_iter()
        .find_map(|e| match e {
            Effect::Stop(decision) => Some(decision),
            _ => None,
        })
        .context("stop gave no decision")
}

/// The agent stops and the sidecar must send it back; the demo fails otherwise.
fn expect_nudge(engine: &mut Engine, clock: &mut Clock, what: &str) -> anyhow::Result<()> {
    let StopDecision::Block { nudge } = stop(engine, clock)? else {
        bail!("this stop should have been blocked");
    };
    let session = engine.state().session().context("session ended early")?;
    sidecar(what);
    tell_model("nudge", &text::nudge_reason(session, &nudge));
    Ok(())
}

fn kickoff_text(engine: &Engine, effects: &[Effect]) -> String {
    let Some(session) = engine.state().session() else {
        return String::new();
    };
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Kickoff(k) => Some(text::kickoff(session, *k, &engine.env())),
            _ => None,
        })
        .unwrap_or_default()
}

/// The agent calls the hand-off tool; the demo shows the tool result it gets.
fn hand_off(
    engine: &mut Engine,
    clock: &mut Clock,
    steps: Vec<String>,
    plan: Option<Vec<EvidenceRequest>>,
) -> anyhow::Result<()> {
    let effects = engine.apply(
        Command::HandOff(HandOff {
            mode: Some(HandoffMode::Reproduce),
            steps,
            plan,
            hypotheses: None,
            message: None,
        }),
        clock.tick(),
    )?;
    let session = engine.state().session().context("no session")?;
    for effect in &effects {
        if let Effect::HandOff(result) = effect {
            agent("hand_off_to_user (reproduce)");
            tell_model("tool result", &text::hand_off_result(session, result));
        }
    }
    Ok(())
}

fn current_run(engine: &Engine) -> anyhow::Result<String> {
    Ok(engine
        .state()
        .session()
        .context("no session")?
        .run_id()
        .to_string())
}

fn hypothesis(id: &str, statement: &str) -> Hypothesis {
    Hypothesis {
        id: id.into(),
        statement: statement.into(),
        status: HypothesisStatus::Open,
        evidence: Vec::new(),
    }
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

fn replace_in(file: &Path, from: &str, to: &str) -> anyhow::Result<()> {
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

fn heading(title: &str) {
    println!(
        "\n── {title} {}",
        "─".repeat(70usize.saturating_sub(title.len()))
    );
}

fn editor(engine: &Engine) {
    let line = match engine.state().session() {
        None => "Debug Mode off".to_string(),
        Some(s) => {
            let turn = match s.stage {
                Stage::Investigating => "agent investigating",
                Stage::UserTurn => "your turn",
                Stage::CleaningUp => "agent cleaning up",
            };
            format!(
                "Debug: round {} · {} · {} probe(s) on disk · run {}",
                s.round().index,
                turn,
                s.live_probe_count(),
                s.run_id()
            )
        }
    };
    println!("editor  ▸ [{line}]");
}

fn notification(steps: &[String]) {
    println!("editor  ▸ notification: Reproduce the problem:");
    for (i, step) in steps.iter().enumerate() {
        println!("            {}. {step}", i + 1);
    }
    println!("            [Proceed]  [Mark fixed]");
}

fn agent(action: &str) {
    println!("agent   ▸ {action}");
}

fn sidecar(what: &str) {
    println!("sidecar ▸ {what}");
}

fn tell_model(what: &str, body: &str) {
    println!("model   ◂ {what}:");
    quote(body);
}

fn quote(body: &str) {
    for line in body.lines() {
        println!("          │ {line}");
    }
}

/// Real milliseconds, but strictly increasing so run ids never collide.
struct Clock(u64);

impl Clock {
    fn new() -> Self {
        Clock(0)
    }

    fn tick(&mut self) -> u64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.0 = now.max(self.0 + 1);
        self.0
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
