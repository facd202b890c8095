//! The `mcp` face driven by a client no one here wrote: the Python reference
//! MCP SDK (`mcp` on PyPI), from the virtual environment `scripts/test`
//! creates and names in `DEBUG_SIDECAR_MCP_PYTHON`. The script is
//! `tests/mcp_client.py`.

mod support;

use serde_json::Value;
use std::process::Command;
use support::{installed_tool, Workspace, BIN};

#[test]
fn the_python_sdk_runs_a_session() {
    let Some(python) = installed_tool("DEBUG_SIDECAR_MCP_PYTHON") else {
        return;
    };
    let workspace = Workspace::new("mcp-python");
    std::fs::write(workspace.root.join("cart.sh"), "n=3\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let output = Command::new(python)
        .args([script, BIN])
        .arg(&workspace.root)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the Python client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["server"], "debug-sidecar");
    assert_eq!(seen["tools"].as_array().unwrap().len(), 10);
    assert_eq!(
        seen["prompts"],
        serde_json::json!(["debug", "debug-proceed", "debug-done", "debug-abort"])
    );
    assert!(seen["kickoff"]
        .as_str()
        .unwrap()
        .starts_with("Debug Mode is on."));
    assert_eq!(seen["handOffError"], false);
    assert!(seen["handOff"]
        .as_str()
        .unwrap()
        .contains("stage is now user_turn"));
    assert!(seen["proceed"]
        .as_str()
        .unwrap()
        .contains("logged 1 line(s)"));
    let logs = seen["logs"].as_str().unwrap();
    assert!(
        logs.contains("not instructions") && logs.contains("\"probeId\":\"p1\""),
        "{logs}"
    );
    assert_eq!(seen["refused"]["isError"], true);
    assert!(seen["refused"]["text"].as_str().unwrap().contains("`mode`"));
    assert!(seen["blackboard"]
        .as_str()
        .unwrap()
        .starts_with("[DEBUG MODE · round 2"));
    assert!(
        seen["abort"].as_str().unwrap().contains("still on disk"),
        "{}",
        seen["abort"]
    );
}

/// `tests/mcp_form.py` at `revision` answering the form with `answer`.
fn form_run(python: &std::ffi::OsStr, revision: &str, answer: &str) -> Value {
    let workspace = Workspace::new(&format!("mcp-form-{revision}-{answer}"));
    std::fs::write(workspace.root.join("cart.sh"), "echo 0\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_form.py");
    let output = Command::new(python)
        .args([script, BIN])
        .arg(&workspace.root)
        .args([revision, answer])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the Python client failed at {revision} answering {answer}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The hand-off asks the person in the client's own form and applies the
/// answer as their command, at 2026-07-28 (a multi-round-trip result) and
/// before it (the blocking `elicitation/create`); a client without the
/// capability gets the hand-off as before. Blackboard updates reach a
/// `subscriptions/listen` stream and a legacy subscription alike.
#[test]
fn the_python_sdk_answers_the_hand_off_form_at_each_revision() {
    let Some(python) = installed_tool("DEBUG_SIDECAR_MCP_PYTHON") else {
        return;
    };
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for revision in ["2026-07-28", "2025-06-18"] {
        for answer in [
            "proceed", "fixed", "reply", "decline", "cancel", "junk", "none",
        ] {
            cases.push((revision, answer));
        }
    }
    cases.push(("2025-11-25", "proceed"));
    // Proceed given in a terminal while the form is open.
    cases.push(("2025-06-18", "elsewhere"));
    cases.push(("2026-07-28", "elsewhere"));
    let seen: Vec<(&str, &str, Value)> = std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                let python = &python;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(r, a)| (*r, *a, form_run(python, r, a)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter()
            .flat_map(|run| run.join().unwrap())
            .collect()
    });
    for (revision, answer, seen) in seen {
        let case = format!("{revision} {answer}: {seen:#}");
        assert_eq!(seen["protocol"], revision, "{case}");
        assert_eq!(seen["handOffError"], false, "{case}");
        // 2026-07-28 updates come on the subscriptions/listen stream, older
        // ones to the resources/subscribe subscriber.
        let updates = if revision == "2026-07-28" {
            "listened"
        } else {
            "updates"
        };
        assert!(seen[updates].as_u64().unwrap() >= 1, "{case}");
        let hand_off = seen["handOff"].as_str().unwrap();
        let board = seen["board"].as_str().unwrap();
        let forms = seen["forms"].as_array().unwrap();
        if answer == "none" {
            assert!(forms.is_empty(), "{case}");
        } else {
            assert_eq!(forms.len(), 1, "{case}");
            // Drawn in lines of at most 90 columns: read as one text.
            let message = forms[0]["message"].as_str().unwrap().replace('\n', " ");
            assert!(
                message.contains("1. Run `sh cart.sh`.") && message.contains("Say which total"),
                "{case}"
            );
            let choice = &forms[0]["schema"]["properties"]["choice"];
            assert_eq!(choice["oneOf"].as_array().unwrap().len(), 3, "{case}");
            assert_eq!(
                forms[0]["schema"]["required"],
                serde_json::json!(["choice"])
            );
        }
        let (says, stage) = match answer {
            "proceed" => (
                "The user reproduced and pressed Proceed.",
                "round 2 · stage investigating",
            ),
            "fixed" => ("The user marked the bug fixed.", "stage cleaning_up"),
            "reply" => ("which total?", "round 1 · stage user_turn"),
            "decline" => (
                "The user declined the hand-off form.",
                "round 1 · stage user_turn",
            ),
            "cancel" => ("closed without an answer", "round 1 · stage user_turn"),
            "junk" => ("got no answer", "round 1 · stage user_turn"),
            // The open call goes on from the kickoff of the terminal's Proceed.
            "elsewhere" => (
                "The user reproduced and pressed Proceed.",
                "round 2 · stage investigating",
            ),
            _ => ("stage is now user_turn", "round 1 · stage user_turn"),
        };
        assert!(hand_off.contains(says), "{case}");
        assert!(board.contains(stage), "{case}");
        if answer == "proceed" {
            assert!(hand_off.contains("the total was 0"), "{case}");
        }
        if answer == "elsewhere" {
            assert!(hand_off.contains("it printed 0"), "{case}");
            // The blocking form is withdrawn (the SDK cancels its handler);
            // 2026-07-28's cannot be, and ends when the person closes it.
            let withdrawn = seen["withdrawn"] == true;
            assert_eq!(withdrawn, revision != "2026-07-28", "{case}");
            if withdrawn {
                assert!(seen["handOffSeconds"].as_f64().unwrap() < 10.0, "{case}");
            }
        }
        for (name, tool) in seen["tools"].as_object().unwrap() {
            let hints = &tool["annotations"];
            assert!(tool["title"].is_string(), "{name}: {case}");
            // Only the tool that runs a workspace program promises nothing.
            assert_eq!(
                hints["destructiveHint"],
                name == "run_reproduction",
                "{name}"
            );
            assert_eq!(hints["openWorldHint"], false, "{name}");
            assert!(hints["idempotentHint"].is_boolean(), "{name}");
            assert!(hints["readOnlyHint"].is_boolean(), "{name}");
            // Text only: a result with structuredContent reaches Claude Code
            // and Codex as that JSON alone (protocol/README.md).
            assert!(tool["outputSchema"].is_null(), "{name}");
        }
    }
}
