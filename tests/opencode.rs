//! OpenCode's side of the sidecar: `install opencode` (the plugin from
//! `editors/`, the MCP server in `opencode.json`) and a `serve` client that
//! names its host (`clientInfo`), whose texts then name the tools as
//! OpenCode calls them. The plugin itself runs in the lab (`lab/opencode.py`).

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

use support::*;

const PLUGIN: &str = include_str!("../editors/opencode/debug-sidecar.ts");
const CLIENT: &str = include_str!("../editors/shared/sidecar.ts");

fn sidecar(root: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn install_writes_the_plugin_and_the_mcp_server_and_checks_them() {
    let workspace = Workspace::new("install-opencode");
    let root = &workspace.root;
    std::fs::write(
        root.join("opencode.json"),
        r#"{"model": "lab/scripted", "mcp": {"other": {"type": "local", "command": ["x"]}}}"#,
    )
    .unwrap();
    let before = sidecar(root, &["install", "opencode", "--check"]);
    assert_eq!(before.status.code(), Some(1), "{before:?}");
    let printed = sidecar(root, &["install", "opencode"]);
    assert!(printed.status.success());
    assert!(!root.join(".opencode").exists(), "printing wrote files");

    let wrote = sidecar(root, &["install", "opencode", "--write"]);
    assert!(wrote.status.success(), "{wrote:?}");
    let plugin = root.join(".opencode/plugin/debug-sidecar.ts");
    assert_eq!(read(&plugin), PLUGIN);
    assert_eq!(read(&root.join(".opencode/shared/sidecar.ts")), CLIENT);
    let config: Value = serde_json::from_str(&read(&root.join("opencode.json"))).unwrap();
    assert_eq!(config["model"], "lab/scripted");
    assert_eq!(config["mcp"]["other"]["command"], json!(["x"]));
    assert_eq!(
        config["mcp"]["debug-sidecar"],
        json!({"type": "local", "command": ["debug-sidecar", "mcp"], "enabled": true})
    );
    let check = sidecar(root, &["install", "opencode", "--check"]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");

    // Written twice, nothing is doubled.
    sidecar(root, &["install", "opencode", "--write"]);
    let again: Value = serde_json::from_str(&read(&root.join("opencode.json"))).unwrap();
    assert_eq!(again, config);

    // A plugin of another version (an older binary's, or edited) is named.
    std::fs::write(&plugin, "export default {}\n").unwrap();
    let stale = sidecar(root, &["install", "opencode", "--check"]);
    assert_eq!(stale.status.code(), Some(1));
    let said = String::from_utf8_lossy(&stale.stdout);
    assert!(
        said.contains("another version than this binary's"),
        "{said}"
    );

    // A disabled server is not ours running.
    sidecar(root, &["install", "opencode", "--write"]);
    let mut off = again.clone();
    off["mcp"]["debug-sidecar"]["enabled"] = json!(false);
    std::fs::write(root.join("opencode.json"), off.to_string()).unwrap();
    let disabled = sidecar(root, &["install", "opencode", "--check"]);
    assert_eq!(disabled.status.code(), Some(1));
}

#[test]
fn a_broken_opencode_json_is_left_as_it_is() {
    let workspace = Workspace::new("install-opencode-broken");
    let root = &workspace.root;
    std::fs::write(root.join("opencode.json"), "{ not json").unwrap();
    let wrote = sidecar(root, &["install", "opencode", "--write"]);
    assert!(!wrote.status.success());
    assert!(String::from_utf8_lossy(&wrote.stderr).contains("nothing was changed"));
    assert_eq!(read(&root.join("opencode.json")), "{ not json");
}

fn kickoff_with_client(client_info: Option<Value>) -> String {
    let workspace = Workspace::new("opencode-naming");
    let root = &workspace.root;
    let mut server = spawn(root);
    let mut params = json!({
        "processId": null,
        "capabilities": {},
        "workspaceFolders": [{"uri": format!("file://{}", root.display()), "name": "w"}],
    });
    if let Some(info) = client_info {
        params["clientInfo"] = info;
    }
    server.request("initialize", params).unwrap();
    server.notify("initialized", json!({})).unwrap();
    let started = server
        .request("debug/start", json!({"problem": "the total is wrong"}))
        .unwrap();
    started["kickoff"].as_str().unwrap().to_string()
}

#[test]
fn a_client_that_names_opencode_gets_texts_naming_opencodes_tools() {
    let named = kickoff_with_client(Some(json!({"name": "opencode", "version": "1.18.33"})));
    assert!(named.contains("debug-sidecar_hand_off_to_user"), "{named}");
    let bare = kickoff_with_client(None);
    assert!(!bare.contains("debug-sidecar_"), "{bare}");
    let other = kickoff_with_client(Some(json!({"name": "Visual Studio Code"})));
    assert!(!other.contains("debug-sidecar_"), "{other}");
}
