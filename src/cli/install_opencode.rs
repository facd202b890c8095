//! `debug-sidecar install opencode [--write|--check]`: OpenCode has no
//! command hooks, so the loop rides on a plugin (`editors/opencode/`, built
//! into this binary and written whole into `.opencode/`), beside the MCP
//! server in the project's `opencode.json`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The plugin and the protocol client it imports (`../shared/sidecar.ts`),
/// each at the path OpenCode loads it from, relative to the project.
pub const FILES: &[(&str, &str)] = &[
    (
        ".opencode/plugin/debug-sidecar.ts",
        include_str!("../../editors/opencode/debug-sidecar.ts"),
    ),
    (
        ".opencode/shared/sidecar.ts",
        include_str!("../../editors/shared/sidecar.ts"),
    ),
];

pub const CONFIG: &str = "opencode.json";

/// The MCP server entry of `opencode.json` (OpenCode's own shape: a local
/// server's `command` is the whole argument list).
pub fn mcp_config(program: &str) -> Value {
    json!({
        "$schema": "https://opencode.ai/config.json",
        "mcp": { "debug-sidecar": { "type": "local", "command": [program, "mcp"], "enabled": true } }
    })
}

/// Whether `config` (a parsed `opencode.json`) runs our MCP server.
pub fn has_mcp(config: &Value) -> bool {
    let server = &config["mcp"]["debug-sidecar"];
    server["enabled"] != false
        && server["command"]
            .as_array()
            .is_some_and(|c| c.iter().any(|a| a == "mcp"))
}

/// Each file of ours and whether the project holds this binary's copy.
pub fn files_in_place(root: &Path) -> Vec<(PathBuf, bool)> {
    FILES
        .iter()
        .map(|(path, text)| {
            let path = root.join(path);
            let same = std::fs::read_to_string(&path).is_ok_and(|held| held == *text);
            (path, same)
        })
        .collect()
}

pub fn run(root: &Path, write: bool, program: &str) -> anyhow::Result<()> {
    let config = root.join(CONFIG);
    if write {
        super::install::write_merged(&config, &mcp_config(program))?;
        for (path, text) in FILES {
            let path = root.join(path);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // Ours, written whole: a newer binary's copy replaces it.
            std::fs::write(&path, text)?;
            println!("updated {}", path.display());
        }
    } else {
        println!(
            "{}:\n{}\n",
            config.display(),
            serde_json::to_string_pretty(&mcp_config(program)).unwrap_or_default()
        );
        for (path, _) in FILES {
            println!(
                "{} (the plugin's code, written by --write)",
                root.join(path).display()
            );
        }
    }
    println!(
        "OpenCode loads the plugin from .opencode/plugin/ and the MCP server from \
         opencode.json when it starts in this folder. Start Debug Mode with \
         `/debug-sidecar:debug <the problem>` (in `opencode run`: `--command \
         debug-sidecar:debug \"<the problem>\"`), then `/debug-sidecar:debug-proceed` and \
         `/debug-sidecar:debug-done`. `debug-sidecar install opencode --check` says what is \
         missing."
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_entry_is_recognised_and_a_disabled_one_is_not() {
        assert!(has_mcp(&mcp_config("debug-sidecar")));
        let mut off = mcp_config("debug-sidecar");
        off["mcp"]["debug-sidecar"]["enabled"] = json!(false);
        assert!(!has_mcp(&off));
        assert!(!has_mcp(
            &json!({"mcp": {"debug-sidecar": {"command": "x"}}})
        ));
        assert!(!has_mcp(&Value::Null));
    }

    #[test]
    fn the_plugin_imports_the_client_where_it_is_written() {
        let plugin = FILES[0].1;
        assert!(plugin.contains("from \"../shared/sidecar.ts\""));
        // `.opencode/plugin/` + `../shared/sidecar.ts`, resolved.
        let mut resolved = Path::new(FILES[0].0).parent().unwrap().to_path_buf();
        for piece in ["..", "shared", "sidecar.ts"] {
            if piece == ".." {
                resolved.pop();
            } else {
                resolved.push(piece);
            }
        }
        assert_eq!(resolved, Path::new(FILES[1].0));
        // Only types come from OpenCode's package: nothing to install.
        let imports: Vec<&str> = plugin
            .lines()
            .filter(|l| l.starts_with("import") && l.contains("\"@opencode-ai/plugin\""))
            .collect();
        assert!(!imports.is_empty());
        assert!(
            imports.iter().all(|l| l.starts_with("import type ")),
            "{imports:?}"
        );
    }
}
