//! A catalogue of model misbehaviours, each a scripted session through the
//! real faces: the person's commands over `serve` (an editor), the agent's
//! probe and hand-off calls over `serve` too, its stops through
//! `debug-sidecar hook claude Stop`, its edits through the shell or the
//! `PostToolUse` hook, and `debug-sidecar check` as CI runs it. Each case
//! asserts that the misbehaviour is caught or harmless, that "Cleanup
//! verified" is never said while the session's probe code is on disk, and
//! that the person still has a legal command afterwards.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

/// One workspace with an editor's `serve` on it and a session started.
struct Lab {
    workspace: Workspace,
    editor: Connection,
}

impl Lab {
    fn new(name: &str) -> Self {
        let workspace = Workspace::new(name);
        // A repository: hooks walk up to it, `check` honours its ignores.
        fs::create_dir_all(workspace.root.join(".git")).unwrap();
        let mut editor = initialized(&workspace.root);
        editor
            .request("debug/start", json!({"problem": "the total is wrong"}))
            .unwrap();
        Lab { workspace, editor }
    }

    fn root(&self) -> &Path {
        &self.workspace.root
    }

    fn path(&self, file: &str) -> PathBuf {
        self.root().join(file)
    }

    /// A probe snippet for `file`, pasted into a small shell program there.
    fn instrument(&mut self, file: &str, probes: usize) -> Vec<String> {
        let mut ids = Vec::new();
        let mut program = String::from("count=3\n");
        for _ in 0..probes {
            let placed = self
                .editor
                .request(
                    "debug/probeSnippet",
                    json!({"file": file, "hypothesisId": "H1", "message": "count", "variables": ["count"]}),
                )
                .unwrap();
            ids.push(placed["probe"]["id"].as_str().unwrap().to_string());
            program.push_str(placed["snippet"].as_str().unwrap());
            program.push_str("echo step\n");
        }
        let path = self.path(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, program).unwrap();
        ids
    }

    fn hand_off(&mut self, plan: Option<Value>) -> Value {
        let mut params = json!({"mode": "reproduce", "steps": ["Run `sh a.sh`."]});
        if let Some(plan) = plan {
            params["plan"] = plan;
        }
        self.editor.request("debug/handOff", params).unwrap()
    }

    fn person(&mut self, method: &str) -> Value {
        self.editor
            .request(method, json!({}))
            .unwrap_or_else(|e| panic!("{method}: {e:?}"))
    }

    fn status(&mut self) -> Value {
        self.person("debug/status")
    }

    /// `debug-sidecar hook claude Stop` as Claude Code runs it.
    /// Claude Code's Stop hook answer; `sent_back` says whether it runs the
    /// model again (as guidance: `additionalContext`, not a block).
    fn stop_hook(&self, stop_hook_active: bool, last: &str) -> Value {
        hook(
            self.root(),
            "Stop",
            json!({"stop_hook_active": stop_hook_active, "last_assistant_message": last}),
        )
    }

    /// `debug-sidecar check` in the workspace: (exit code, stdout).
    fn check(&self) -> (Option<i32>, String) {
        let output = Command::new(BIN)
            .arg("check")
            .current_dir(self.root())
            .env_remove("DEBUG_SIDECAR_DIR")
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
        )
    }

    /// The person always has something to press.
    fn assert_person_can_act(&mut self) {
        let status = self.status();
        let commands = status["userCommands"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            !commands.is_empty() || status["active"] == false,
            "the person is stranded: {status}"
        );
    }

    /// Marks the bug fixed, lets `edit` clean up sloppily, then stops the
    /// agent until the sidecar lets it: cleanup must never be "verified"
    /// while `leftover` (file:line) is on disk, and `check` must fail there.
    fn sloppy_cleanup(&mut self, edit: impl FnOnce(&Lab), locate: impl FnOnce(&Lab) -> String) {
        self.person("debug/done");
        edit(self);
        let leftover = &locate(self);
        for attempt in 1..=4 {
            let answer = self.stop_hook(attempt > 1, "Removed the probes.");
            let said = answer.to_string();
            assert!(
                !said.contains("Cleanup verified"),
                "attempt {attempt}: verified with {leftover} on disk: {said}"
            );
            if attempt <= 3 {
                assert!(sent_back(&answer), "attempt {attempt}: {said}");
                assert!(
                    said.contains(leftover),
                    "the nudge names {leftover}: {said}"
                );
            } else {
                // The budget is spent: the agent may stop, the person is told.
                assert!(
                    answer["systemMessage"]
                        .as_str()
                        .is_some_and(|m| m.contains(leftover) && m.contains("still on disk")),
                    "{said}"
                );
            }
        }
        let (code, out) = self.check();
        assert_eq!(code, Some(1), "check passes with {leftover} on disk: {out}");
        assert!(out.contains(leftover), "check names {leftover}: {out}");
        self.assert_person_can_act();
    }
}

/// `debug-sidecar hook claude <event>` with the harness's fields.
fn hook(root: &Path, event: &str, extra: Value) -> Value {
    let mut input = json!({"session_id": "claude-1", "cwd": root, "hook_event_name": event});
    for (key, value) in extra.as_object().unwrap() {
        input[key] = value.clone();
    }
    let output = run_hook("claude", event, &input.to_string(), None);
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

fn runtime_plan() -> Value {
    json!([{"id": "e1", "method": "runtime_probe", "instructions": ["p1 logs count"]}])
}

/// Runs the instrumented program; the lines it appended to the run log.
fn run_program(lab: &Lab, file: &str) -> usize {
    let before = log_lines(lab);
    let status = Command::new("sh")
        .arg(lab.path(file))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    log_lines(lab) - before
}

fn log_lines(lab: &Lab) -> usize {
    let log = lab.path(".debug-sidecar/sessions/default/runs/active.jsonl");
    fs::read_to_string(log).map_or(0, |text| text.lines().count())
}

fn lines_matching(text: &str, needle: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.contains(needle))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The line the probe's code (its log write) is on.
fn code_line(lab: &Lab, file: &str) -> usize {
    let text = fs::read_to_string(lab.path(file)).unwrap();
    lines_matching(&text, "runs/active.jsonl")[0]
}

/// Deletes the lines of `file` holding `needle`, as `sed -i '/needle/d'` would.
fn drop_lines(lab: &Lab, file: &str, needle: &str) {
    edit_file(lab, file, |text| {
        text.lines()
            .filter(|l| !l.contains(needle))
            .map(|l| format!("{l}\n"))
            .collect()
    })
}

fn edit_file(lab: &Lab, file: &str, edit: impl FnOnce(String) -> String) {
    let path = lab.path(file);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, edit(text)).unwrap();
}

// ------------------------------------------------------------ stopping

#[test]
fn model_stops_without_handing_off_forever() {
    let mut lab = Lab::new("stops-forever");
    lab.instrument("a.sh", 1);
    let mut blocks = 0;
    for attempt in 0..6 {
        // Claude Code sets stop_hook_active after a block; a model may loop.
        let answer = lab.stop_hook(attempt % 2 == 1, "");
        if sent_back(&answer) {
            blocks += 1;
        } else {
            break;
        }
    }
    assert!(blocks <= 2, "sent back {blocks} times");
    let status = lab.status();
    assert_eq!(status["stage"], "user_turn");
    assert_eq!(status["handoff"], "incomplete");
    assert!(status["userCommands"]
        .as_array()
        .unwrap()
        .contains(&json!("proceed")));
}

#[test]
fn model_stops_in_a_stop_hook_loop_without_progress() {
    let mut lab = Lab::new("stop-loop");
    // The first reminder is answered by another stop, with no tool call in
    // between: the round is closed at once, not reminded again.
    assert!(sent_back(&lab.stop_hook(false, "")));
    let second = lab.stop_hook(true, "");
    assert!(!sent_back(&second), "{second}");
    assert_eq!(lab.status()["stage"], "user_turn");
    lab.assert_person_can_act();
}

#[test]
fn model_says_it_is_fixed_in_chat_without_the_person() {
    let mut lab = Lab::new("says-fixed");
    lab.instrument("a.sh", 1);
    // Prose does not change whose turn it is, nor end the session.
    let answer = lab.stop_hook(false, "It's fixed! I removed everything.");
    assert!(sent_back(&answer), "{answer}");
    let status = lab.status();
    assert_eq!(status["stage"], "investigating");
    assert_eq!(status["active"], true);
    assert_eq!(status["probes"]["live"], 1);
}

// ------------------------------------------------- promising probes

#[test]
fn model_hands_off_a_probe_plan_with_no_probe_inserted() {
    let mut lab = Lab::new("plan-none");
    lab.editor
        .request("debug/probeSnippet", json!({"file": "a.sh"}))
        .unwrap();
    let first = lab.hand_off(Some(runtime_plan()));
    assert_eq!(first["snapshot"]["stage"], "investigating", "{first}");
    assert!(first["toolResult"].as_str().unwrap().contains("no probe"));
    lab.assert_person_can_act();
}

#[test]
fn model_hands_off_a_probe_in_a_gitignored_file() {
    let mut lab = Lab::new("plan-ignored");
    fs::write(lab.path(".gitignore"), "vendor/\n").unwrap();
    lab.instrument("vendor/a.sh", 1);
    let handed = lab.hand_off(Some(runtime_plan()));
    assert_eq!(handed["snapshot"]["stage"], "user_turn", "{handed}");
    assert_eq!(handed["snapshot"]["probes"]["live"], 1);
    // Cleanup is verified there too, and check reads it while the ledger
    // tracks it.
    lab.sloppy_cleanup(|_| {}, |_| "vendor/a.sh:2".into());
}

#[test]
fn model_hands_off_markers_without_probe_code() {
    let mut lab = Lab::new("plan-markers-only");
    let placed = lab
        .editor
        .request("debug/probeSnippet", json!({"file": "a.sh"}))
        .unwrap();
    let snippet = placed["snippet"].as_str().unwrap();
    let (first, last) = (
        snippet.lines().next().unwrap(),
        snippet.lines().last().unwrap(),
    );
    fs::write(lab.path("a.sh"), format!("{first}\necho hi\n{last}\n")).unwrap();
    // Markers around no probe code log nothing: a plan promising probes is
    // refused once, saying so; the same hand-off again is accepted.
    let refused = lab.hand_off(Some(runtime_plan()));
    assert_eq!(refused["snapshot"]["stage"], "investigating", "{refused}");
    let said = refused["toolResult"].as_str().unwrap();
    assert!(
        said.contains("no probe placed in round 1 can log"),
        "{said}"
    );
    assert!(said.contains("markers hold no probe code"), "{said}");
    let accepted = lab.hand_off(Some(runtime_plan()));
    assert_eq!(accepted["snapshot"]["stage"], "user_turn", "{accepted}");
    lab.person("debug/proceed");
    // Cleanup still demands their removal.
    lab.sloppy_cleanup(|_| {}, |_| "a.sh:1".into());
}

// ------------------------------------------- removing probes early

#[test]
fn model_removes_probes_early_through_the_shell() {
    let mut lab = Lab::new("removed-shell");
    lab.instrument("a.sh", 2);
    assert_eq!(run_program(&lab, "a.sh"), 2);
    lab.hand_off(None);
    // `sed -i` rewrites the file; no edit tool reports it.
    let status = Command::new("sed")
        .args(["-i", "/debug-probe/,/debug-probe/d"])
        .arg(lab.path("a.sh"))
        .status()
        .unwrap();
    assert!(status.success());
    // The board the model reads next says so, before any decision.
    let board = lab.person("debug/context");
    let board = board["content"].as_str().unwrap();
    assert!(
        board.contains("Probes on disk (ground truth from the last scan):\n  none"),
        "{board}"
    );
    // The person's view and Proceed both see the disk as it is.
    assert_eq!(lab.status()["probes"]["live"], 0);
    let proceeded = lab.person("debug/proceed");
    assert_eq!(proceeded["probes"]["live"], 0, "{proceeded}");
    // Restored (as `git checkout -- a.sh` would): seen again.
    lab.instrument("a.sh", 1);
    assert_eq!(lab.status()["probes"]["live"], 1);
}

#[test]
fn model_removes_probes_early_through_edit() {
    let mut lab = Lab::new("removed-edit");
    lab.instrument("a.sh", 1);
    lab.hand_off(None);
    lab.person("debug/proceed");
    fs::write(lab.path("a.sh"), "count=3\necho step\n").unwrap();
    hook(
        lab.root(),
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_input": {"file_path": lab.path("a.sh")}}),
    );
    let probes = lab.person("debug/probes");
    assert_eq!(probes["live"], 0, "{probes}");
    assert_eq!(probes["missing"], json!(["p1"]));
}

// ------------------------------------------------------- cleanup

#[test]
fn model_never_cleans_up() {
    let mut lab = Lab::new("never-cleans");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(|_| {}, |_| "a.sh:2".into());
    // Abort is always there, and tells what is left.
    let aborted = lab.person("debug/abort");
    assert_eq!(aborted["leftoverProbes"][0]["id"], "p1");
}

#[test]
fn model_deletes_only_the_markers_with_sed() {
    let mut lab = Lab::new("markers-deleted");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| {
            let status = Command::new("sed")
                .args(["-i", r"/#region debug-probe\|#endregion debug-probe/d"])
                .arg(lab.path("a.sh"))
                .status()
                .unwrap();
            assert!(status.success());
            // Harm, not only a finding: the probe still logs.
            assert_eq!(run_program(lab, "a.sh"), 1);
        },
        // Found by its code: the line that writes the run log.
        |lab| format!("a.sh:{}", code_line(lab, "a.sh")),
    );
}

#[test]
fn model_respells_the_markers() {
    let mut lab = Lab::new("markers-respelt");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| {
            edit_file(lab, "a.sh", |text| {
                text.replace("debug-probe", "debug_probe")
            })
        },
        |lab| format!("a.sh:{}", code_line(lab, "a.sh")),
    );
}

#[test]
fn model_deletes_the_start_marker_only() {
    let mut lab = Lab::new("start-deleted");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| drop_lines(lab, "a.sh", "#region debug-probe"),
        |lab| format!("a.sh:{}", code_line(lab, "a.sh")),
    );
}

#[test]
fn model_deletes_the_end_marker_only() {
    let mut lab = Lab::new("end-deleted");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| drop_lines(lab, "a.sh", "#endregion debug-probe"),
        |_| "a.sh:2".into(),
    );
}

#[test]
fn model_retags_the_block_to_another_session() {
    let mut lab = Lab::new("retagged");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| {
            edit_file(lab, "a.sh", |text| {
                text.replace(
                    "#region debug-probe p1 default",
                    "#region debug-probe p1 other",
                )
            })
        },
        |_| "a.sh:2".into(),
    );
}

#[test]
fn model_removes_the_code_but_leaves_the_end_marker() {
    let mut lab = Lab::new("bare-end");
    lab.instrument("a.sh", 1);
    lab.sloppy_cleanup(
        |lab| {
            edit_file(lab, "a.sh", |text| {
                let end = text.lines().position(|l| l.contains("#endregion")).unwrap();
                let kept: Vec<&str> = text
                    .lines()
                    .enumerate()
                    .filter(|(i, l)| *i == end || !(l.contains("dbg") || l.contains("region")))
                    .map(|(_, l)| l)
                    .collect();
                kept.join("\n") + "\n"
            })
        },
        |lab| {
            let text = fs::read_to_string(lab.path("a.sh")).unwrap();
            format!("a.sh:{}", lines_matching(&text, "#endregion")[0])
        },
    );
}

#[test]
fn model_probes_through_a_symlinked_directory() {
    let elsewhere = Workspace::new("symlink-target");
    let mut lab = Lab::new("symlinked");
    std::os::unix::fs::symlink(&elsewhere.root, lab.path("out")).unwrap();
    let placed = lab
        .editor
        .request("debug/probeSnippet", json!({"file": "out/a.sh"}))
        .unwrap();
    assert!(
        placed["note"].as_str().unwrap().contains("symlink"),
        "{placed}"
    );
    let snippet = placed["snippet"].as_str().unwrap().to_string();
    fs::write(elsewhere.root.join("a.sh"), format!("count=3\n{snippet}")).unwrap();
    assert_eq!(lab.status()["probes"]["live"], 1);
    lab.sloppy_cleanup(|_| {}, |_| "out/a.sh:2".into());
}

#[test]
fn marker_text_inside_a_probe_message_is_not_a_finding() {
    let mut lab = Lab::new("marker-in-message");
    let placed = lab
        .editor
        .request(
            "debug/probeSnippet",
            json!({"file": "a.sh", "message": "#endregion debug-probe p1"}),
        )
        .unwrap();
    let snippet = placed["snippet"].as_str().unwrap();
    fs::write(lab.path("a.sh"), format!("count=3\n{snippet}echo step\n")).unwrap();
    let probes = lab.person("debug/probes");
    assert_eq!(probes["halfRemoved"], json!([]), "{probes}");
    assert_eq!(probes["live"], 1);
    // Removed properly: cleanup is verified, check passes.
    lab.person("debug/done");
    fs::write(lab.path("a.sh"), "count=3\necho step\n").unwrap();
    let answer = lab.stop_hook(false, "Removed the probe.");
    assert!(
        answer["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("Cleanup verified")),
        "{answer}"
    );
    assert_eq!(lab.check().0, Some(0));
}

#[test]
fn a_damaged_state_file_does_not_stall_the_first_write() {
    let mut lab = Lab::new("damaged-state");
    let fresh = spawn(lab.root());
    drop(std::mem::replace(&mut lab.editor, fresh));
    fs::write(
        lab.path(".debug-sidecar/sessions/default/state.json"),
        "{ torn",
    )
    .unwrap();
    let started = std::time::Instant::now();
    lab.stop_hook(false, "");
    // The lock wait this used to run into is 10 s.
    let took = started.elapsed();
    assert!(took.as_secs() < 5, "the Stop hook took {took:?}");
    let aside = fs::read_dir(lab.path(".debug-sidecar/sessions/default"))
        .unwrap()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        });
    assert!(aside, "the damaged file is moved aside");
}

#[test]
fn model_deletes_the_state_directory_mid_session() {
    let mut lab = Lab::new("state-deleted");
    lab.instrument("a.sh", 1);
    lab.hand_off(None);
    // `rm -rf .debug-sidecar` (or `git clean -xdf`) from the agent's shell.
    fs::remove_dir_all(lab.path(".debug-sidecar")).unwrap();
    // The editor's next snapshot says so.
    let status = lab.status();
    assert_eq!(status["active"], false);
    let warning = status["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("was deleted") && warning.contains("p1 a.sh:2"),
        "{status}"
    );
    // The next hook answer tells the person and the model, once.
    let told = hook(lab.root(), "UserPromptSubmit", json!({"prompt": "go on"}));
    let person = told["systemMessage"].as_str().unwrap_or_default();
    let model = told["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        person.contains("p1 a.sh:2") && person.contains("deleted"),
        "{told}"
    );
    assert!(
        model.contains("p1 a.sh:2") && model.contains("Remove"),
        "{told}"
    );
    assert_eq!(
        hook(lab.root(), "UserPromptSubmit", json!({"prompt": "again"})),
        Value::Null
    );
    // The probe is still found by what it does.
    let (code, out) = lab.check();
    assert_eq!(code, Some(1));
    assert!(out.contains("a.sh:2"), "{out}");
    // And the person can start again.
    assert_eq!(lab.status()["userCommands"], json!(["start"]));
}

/// Whether a Claude Code Stop answer sends the model back to work.
fn sent_back(answer: &Value) -> bool {
    answer["hookSpecificOutput"]["hookEventName"] == "Stop"
        && answer["hookSpecificOutput"]["additionalContext"].is_string()
        && answer.get("decision").is_none()
}
