//! `debug-sidecar acp` driven by the ACP TypeScript SDK from npm (the
//! client side of the SDK claude-agent-acp is built on), against the
//! scripted agent: the SDK checks every update the proxy makes itself
//! against the protocol's schema. `scripts/test` installs the pinned SDK
//! and names its `node_modules` in `DEBUG_SIDECAR_ACP_NODE_MODULES`.

mod support;

use debug_sidecar::core::text::NUDGE_NOTICE;
use serde_json::Value;
use std::process::Command;
use support::*;

#[test]
fn the_typescript_sdk_takes_our_commands_and_messages_as_valid_acp() {
    let Some(modules) = installed_tool("DEBUG_SIDECAR_ACP_NODE_MODULES") else {
        return;
    };
    let workspace = Workspace::new("acp-typescript");
    std::fs::create_dir_all(workspace.root.join(".git")).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp_typescript.mjs");
    let fake = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/fake_acp_agent.py"
    );
    let output = Command::new("node")
        .arg(script)
        .arg(&modules)
        .arg(BIN)
        .arg(&workspace.root)
        .arg(fake)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the TypeScript client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["agent"], "fake-agent");
    let lists = seen["commands"].as_array().unwrap();
    assert_eq!(
        lists[0],
        serde_json::json!(["debug", "debug-proceed", "debug-done", "debug-abort"])
    );
    assert_eq!(
        lists.last().unwrap(),
        &serde_json::json!([
            "review",
            "debug",
            "debug-proceed",
            "debug-done",
            "debug-abort"
        ])
    );
    assert_eq!(seen["stopReason"], "end_turn");
    let chunks: Vec<&str> = seen["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        chunks[0].starts_with("debug-sidecar: Debug Mode started"),
        "{chunks:?}"
    );
    let sent_back = chunks.iter().filter(|c| c.contains(NUDGE_NOTICE)).count();
    assert_eq!(sent_back, 2, "{chunks:?}");
    // The SDK would have dropped an update it found invalid and said so.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("Invalid") && !stderr.contains("ZodError"),
        "{stderr}"
    );
}
