//! The `mcp` face driven by a client no one here wrote: the Python reference
//! MCP SDK (`mcp` on PyPI), from the virtual environment `scripts/test`
//! creates and names in `DEBUG_SIDECAR_MCP_PYTHON`. The script is
//! `tests/mcp_client.py`.

mod support;

use serde_json::Value;
use std::process::Command;
use support::{Workspace, BIN};

#[test]
fn the_python_sdk_runs_a_session() {
    let Some(python) = std::env::var_os("DEBUG_SIDECAR_MCP_PYTHON") else {
        // `scripts/test` always sets it; CI must not pass by skipping.
        assert!(
            std::env::var_os("CI").is_none(),
            "DEBUG_SIDECAR_MCP_PYTHON is not set; run the tests through scripts/test"
        );
        eprintln!("skipped: DEBUG_SIDECAR_MCP_PYTHON is not set (scripts/test sets it)");
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
    assert_eq!(seen["tools"].as_array().unwrap().len(), 9);
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
