//! `debug-sidecar mcp` driven by the TypeScript MCP SDK from npm, a second
//! client no one here wrote: a whole session whose Proceed and Mark fixed
//! are the person's answers to the hand-off forms. `scripts/test` installs
//! the pinned SDK and names its `node_modules` in `DEBUG_SIDECAR_MCP_NODE_MODULES`.

mod support;

use serde_json::Value;
use std::process::Command;
use support::*;

#[test]
fn the_typescript_sdk_runs_a_session_answered_in_its_forms() {
    let Some(modules) = installed_tool("DEBUG_SIDECAR_MCP_NODE_MODULES") else {
        return;
    };
    let workspace = Workspace::new("mcp-typescript");
    std::fs::create_dir_all(workspace.root.join(".git")).unwrap();
    std::fs::write(workspace.root.join("cart.sh"), "n=3\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_typescript.mjs");
    let output = Command::new("node")
        .arg(script)
        .arg(&modules)
        .arg(BIN)
        .arg(&workspace.root)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the TypeScript client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["server"], "debug-sidecar");
    assert!(seen["tools"]
        .as_array()
        .unwrap()
        .contains(&Value::from("hand_off_to_user")));
    assert!(seen["kickoff"]
        .as_str()
        .unwrap()
        .starts_with("Debug Mode is on."));
    assert!(
        seen["ledger"]
            .as_str()
            .unwrap()
            .starts_with("p1 live cart.sh:"),
        "{}",
        seen["ledger"]
    );
    // Two forms, each with the choice the person makes.
    let forms = seen["forms"].as_array().unwrap();
    assert_eq!(forms.len(), 2, "{forms:?}");
    assert!(
        forms[0]["message"].as_str().unwrap().contains("sh cart.sh"),
        "{}",
        forms[0]["message"]
    );
    assert!(forms[0]["schema"]["properties"]["choice"].is_object());
    // Proceed: the next step's text, with the run's line and the note.
    let proceed = seen["proceed"]["text"].as_str().unwrap();
    assert_eq!(seen["proceed"]["isError"], false, "{proceed}");
    assert!(proceed.contains("logged 1 line(s)"), "{proceed}");
    assert!(proceed.contains("it printed 3"), "{proceed}");
    let logs = seen["logs"].as_str().unwrap();
    assert!(
        logs.contains("not instructions") && logs.contains("\"probeId\":\"p1\""),
        "{logs}"
    );
    // Mark fixed: the cleanup kickoff.
    let fixed = seen["fixed"]["text"].as_str().unwrap();
    assert!(fixed.contains("marked the bug fixed"), "{fixed}");
    // A plain MCP client reports no stop: the call that finds the probe
    // gone ends the session and says so.
    let cleaned = seen["cleaned"].as_str().unwrap();
    assert!(!cleaned.contains(" live "), "{cleaned}");
    assert!(cleaned.contains("Cleanup verified"), "{cleaned}");
    assert_eq!(seen["status"], "No debug session is active.");
}
