//! `debug-sidecar install claude|codex|gemini|copilot|opencode [--write]`: the hook and MCP server
//! configuration an agent needs, printed, or merged into the project's
//! config files without losing what is already there.

use crate::core::harness_memory::PersonCommandKind;
use crate::core::host::{Host, Wake};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    /// Gemini CLI: `.gemini/settings.json`, its own event names.
    Gemini,
    /// Copilot CLI: `.github/hooks/debug-sidecar.json` (Claude-shaped
    /// events) and `.mcp.json`.
    Copilot,
    /// OpenCode: no command hooks; a plugin in `.opencode/` and the MCP
    /// server in `opencode.json` (`install_opencode`).
    Opencode,
}

/// The hook events we answer, and whether they take a tool matcher.
pub const EVENTS: &[(&str, bool)] = &[
    ("SessionStart", false),
    ("UserPromptSubmit", false),
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("Stop", false),
];

/// Gemini CLI's names for the same moments, and `PreCompress` (only a
/// manual one is taken as a compression). Its tool matchers are regular
/// expressions: no matcher matches every tool.
pub const GEMINI_EVENTS: &[(&str, bool)] = &[
    ("SessionStart", false),
    ("BeforeAgent", false),
    ("BeforeTool", false),
    ("AfterTool", false),
    ("AfterAgent", false),
    ("PreCompress", false),
];

/// The events `agent`'s hooks file names, and its `hook` dialect.
pub fn events_of(agent: Agent) -> (&'static [(&'static str, bool)], &'static str) {
    match agent {
        Agent::Claude => (EVENTS, "claude"),
        Agent::Codex => (EVENTS, "codex"),
        Agent::Gemini => (GEMINI_EVENTS, "gemini"),
        Agent::Copilot => (EVENTS, "copilot"),
        Agent::Opencode => (&[], "opencode"),
    }
}

/// `{"hooks": {...}}` in the shape the four harnesses share (Copilot CLI's
/// hooks file also carries `"version": 1`).
pub fn hooks_config(agent: Agent, program: &str) -> Value {
    let (events, dialect) = events_of(agent);
    let mut hooks = Map::new();
    for (event, matcher) in events {
        let mut entry = json!({
            "hooks": [{"type": "command", "command": format!("{program} hook {dialect} {event}")}]
        });
        if *matcher {
            entry["matcher"] = json!("*");
        }
        hooks.insert(event.to_string(), json!([entry]));
    }
    if agent == Agent::Claude {
        // The waker: in the background after every turn, it wakes the idle
        // session when the person's Proceed comes from away from the chat.
        let wake = json!({"hooks": [{
            "type": "command",
            "command": format!("{program} hook claude {}", crate::hook::wake::EVENT),
            "asyncRewake": true,
            "timeout": crate::hook::wake::HOOK_TIMEOUT_SECS,
        }]});
        if let Some(stop) = hooks.get_mut("Stop").and_then(Value::as_array_mut) {
            stop.push(wake);
        }
    }
    if agent == Agent::Copilot {
        return json!({ "version": 1, "hooks": hooks });
    }
    json!({ "hooks": hooks })
}

/// What Claude Code needs besides the hooks: permission to call our MCP
/// tools (in `-p` mode it denies every call without it), and our server
/// in `.mcp.json` approved, as Claude Code records the person's "use this
/// server" (without it the interactive CLI asks with "continue without"
/// preselected, and one Enter leaves the hooks running without the tools).
pub fn claude_settings() -> Value {
    json!({
        "permissions": { "allow": ["mcp__debug-sidecar"] },
        "enabledMcpjsonServers": ["debug-sidecar"],
    })
}

pub fn mcp_config(program: &str) -> Value {
    json!({ "mcpServers": { "debug-sidecar": { "command": program, "args": ["mcp"] } } })
}

/// Merge our entries into `existing`: other keys, events and hooks stay;
/// an entry already running the same command is not added twice.
pub fn merge(existing: &mut Value, ours: &Value) {
    if !existing.is_object() {
        *existing = json!({});
    }
    for (key, value) in ours.as_object().into_iter().flatten() {
        let slot = &mut existing[key.as_str()];
        match (slot.as_object_mut(), value.as_object()) {
            (Some(_), Some(_)) if key == "hooks" => {
                for (event, entries) in value.as_object().into_iter().flatten() {
                    let list = &mut slot[event.as_str()];
                    if !list.is_array() {
                        *list = json!([]);
                    }
                    let Some(list) = list.as_array_mut() else {
                        continue;
                    };
                    for entry in entries.as_array().into_iter().flatten() {
                        let command = &entry["hooks"][0]["command"];
                        let present = list.iter().any(|e| {
                            e["hooks"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(|h| &h["command"] == command)
                        });
                        if !present {
                            list.push(entry.clone());
                        }
                    }
                }
            }
            (Some(map), Some(values)) => {
                for (name, inner) in values {
                    merge_value(map.entry(name.clone()).or_insert(Value::Null), inner);
                }
            }
            _ => merge_value(slot, value),
        }
    }
}

/// Ours into `slot`: objects key by key, lists gain what they lack (the
/// person's `permissions.allow` entries stay), anything else is ours.
fn merge_value(slot: &mut Value, ours: &Value) {
    match (slot, ours) {
        (Value::Object(map), Value::Object(values)) => {
            for (name, inner) in values {
                merge_value(map.entry(name.clone()).or_insert(Value::Null), inner);
            }
        }
        (Value::Array(list), Value::Array(items)) => {
            for item in items {
                if !list.contains(item) {
                    list.push(item.clone());
                }
            }
        }
        (slot, ours) => *slot = ours.clone(),
    }
}

pub(super) fn write_merged(path: &Path, ours: &Value) -> anyhow::Result<()> {
    let mut existing = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not valid JSON ({e}); nothing was changed",
                path.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e.into()),
    };
    merge(&mut existing, ours);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&existing)? + "\n")?;
    println!("updated {}", path.display());
    Ok(())
}

/// The MCP server entry in a Codex `config.toml`, added to what is there.
pub fn merge_codex_toml(existing: &str, program: &str) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = existing
        .parse()
        .map_err(|e| anyhow::anyhow!("it is not valid TOML ({e}); nothing was changed"))?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| anyhow::anyhow!("its `mcp_servers` is not a table; nothing was changed"))?;
    let mut ours = toml_edit::Table::new();
    ours.insert("command", toml_edit::value(program));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    ours.insert("args", toml_edit::value(args));
    servers.insert("debug-sidecar", toml_edit::Item::Table(ours));
    Ok(doc.to_string())
}

fn write_codex_toml(path: &Path, program: &str) -> anyhow::Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.into()),
    };
    let merged = merge_codex_toml(&existing, program)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, merged)?;
    println!("updated {}", path.display());
    Ok(())
}

/// The install's last words: how the person starts, goes on and ends in
/// that host, as they type it there.
pub(super) fn start_line(host: Host) -> String {
    use PersonCommandKind::{Done, Proceed, Start};
    let wake = match host.wake() {
        Wake::Woken(how) => format!(
            "A Proceed or Mark fixed given outside the chat (a terminal, an editor) starts the \
             agent's next turn by itself: {how}. `DEBUG_SIDECAR_WAKE=off` in the environment \
             {} starts in turns that off.",
            host.name()
        ),
        Wake::None(why) => format!(
            "A Proceed or Mark fixed given outside the chat does not start the agent's turn \
             here ({why}): say \"go on\" in the chat and it reads the evidence."
        ),
        Wake::Elsewhere => String::new(),
    };
    format!(
        "In {}: to start Debug Mode, {}; after reproducing, {}; when it is fixed, {}.\n{wake}",
        host.name(),
        host.spelling(Start).clause(),
        host.spelling(Proceed).clause(),
        host.spelling(Done).clause()
    )
}

pub fn run(agent: Agent, write: bool) -> anyhow::Result<ExitCode> {
    let program = "debug-sidecar";
    let root = std::env::current_dir()?;
    let hooks = hooks_config(agent, program);
    match agent {
        Agent::Claude => {
            // settings.local.json: Claude Code started in a subfolder reads
            // the repository's local settings but not its settings.json
            // (2.1.332), and a personal tool's hooks are not the team's.
            let settings = root.join(".claude/settings.local.json");
            let mcp = root.join(".mcp.json");
            let mut hooks = hooks;
            merge(&mut hooks, &claude_settings());
            let skill = skill_path(agent, &root);
            if write {
                write_merged(&settings, &hooks)?;
                write_merged(&mcp, &mcp_config(program))?;
                write_skill(&skill)?;
            } else {
                print_file(&settings, &hooks);
                print_file(&mcp, &mcp_config(program));
                println!("{}:\n{}", skill.display(), crate::core::text::skill_md());
            }
            println!(
                "Claude Code applies a project's permissions only once its folder is trusted: \
                 start `claude` here once and accept the trust dialog (in `-p` mode every call \
                 of our tools is denied until then). `debug-sidecar install claude --check` \
                 says whether it is.\n\n{}",
                start_line(Host::ClaudeCode)
            );
        }
        Agent::Codex => {
            let hooks_file = root.join(".codex/hooks.json");
            let config = root.join(".codex/config.toml");
            let skill = skill_path(agent, &root);
            if write {
                write_merged(&hooks_file, &hooks)?;
                write_codex_toml(&config, program)?;
                write_skill(&skill)?;
            } else {
                print_file(&hooks_file, &hooks);
                println!("{}:\n{}", skill.display(), crate::core::text::skill_md());
                println!(
                    "{}:\n{}",
                    config.display(),
                    merge_codex_toml("", program).unwrap_or_default()
                );
            }
            println!(
                "Codex reads a project's .codex/ only when the project is trusted, and runs \
                 each hook only once that hook is trusted: the TUI asks, `codex exec` skips an \
                 untrusted hook without a word, and a hook edited later is untrusted again. \
                 Trust the project in ~/.codex/config.toml:\n\n\
                 [projects.\"{}\"]\ntrust_level = \"trusted\"\n\n\
                 then start `codex` once in this folder and accept its hooks (or run `codex exec \
                 --dangerously-bypass-hook-trust`). `debug-sidecar install codex --check` says \
                 what is still missing. Codex has no MCP prompts: its prompt hook applies our \
                 commands typed as they are, or ask it in words (it calls start_debug_session).\n\n{}",
                root.display(),
                start_line(Host::Codex)
            );
        }
        Agent::Gemini => {
            let settings = root.join(".gemini/settings.json");
            let mut ours = hooks;
            merge(&mut ours, &mcp_config(program));
            if write {
                write_merged(&settings, &ours)?;
            } else {
                print_file(&settings, &ours);
            }
            println!(
                "Gemini CLI reads a project's .gemini/settings.json only in a trusted folder: \
                 start `gemini` here once and trust it, or run it with `--skip-trust` or \
                 GEMINI_CLI_TRUST_WORKSPACE=true. It asks before each tool call unless you \
                 allow it (--approval-mode). `debug-sidecar install gemini --check` says what \
                 is missing.\n\n{}",
                start_line(Host::Gemini)
            );
        }
        Agent::Opencode => super::install_opencode::run(&root, write, program)?,
        Agent::Copilot => {
            let hooks_file = root.join(".github/hooks/debug-sidecar.json");
            let mcp = root.join(".mcp.json");
            if write {
                write_merged(&hooks_file, &hooks)?;
                write_merged(&mcp, &mcp_config(program))?;
            } else {
                print_file(&hooks_file, &hooks);
                print_file(&mcp, &mcp_config(program));
            }
            println!(
                "Copilot CLI runs a repository's hooks only in a trusted folder: accept the \
                 folder when `copilot` asks, or pass `--trust-folder`. In `-p` mode it does \
                 not expand MCP prompts: the prompt hook applies our commands typed as they \
                 are. `debug-sidecar install copilot --check` says what is missing.\n\n{}",
                start_line(Host::Copilot)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where each harness reads a project's skills: Claude Code's
/// `.claude/skills/`, Codex's `.agents/skills/`. (No skill is written for
/// Gemini CLI or Copilot CLI: their skill folders were not tried here.)
pub fn skill_path(agent: Agent, root: &Path) -> std::path::PathBuf {
    let dir = match agent {
        Agent::Claude => ".claude/skills",
        Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::Opencode => ".agents/skills",
    };
    root.join(dir)
        .join(crate::core::text::SKILL_NAME)
        .join("SKILL.md")
}

/// The skill, written whole: it is ours, and a newer binary's replaces it.
fn write_skill(path: &Path) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, crate::core::text::skill_md())?;
    println!("updated {}", path.display());
    Ok(())
}

fn print_file(path: &Path, value: &Value) {
    println!(
        "{}:\n{}\n",
        path.display(),
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_what_is_there_and_adds_ours_once() {
        let mut existing = json!({
            "model": "opus",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "other-tool"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            }
        });
        let ours = hooks_config(Agent::Claude, "debug-sidecar");
        merge(&mut existing, &ours);
        merge(&mut existing, &ours);
        assert_eq!(existing["model"], "opus");
        assert_eq!(
            existing["hooks"]["Notification"].as_array().unwrap().len(),
            1
        );
        let stop = existing["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 3, "{stop:?}");
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            "debug-sidecar hook claude Stop"
        );
        // The waker runs in the background and wakes the session (exit 2).
        assert_eq!(
            stop[2]["hooks"][0],
            json!({"type": "command", "command": "debug-sidecar hook claude Wake",
                   "asyncRewake": true, "timeout": 86400})
        );
        assert_eq!(existing["hooks"]["PostToolUse"][0]["matcher"], "*");
        let mut settings = json!({"permissions": {"allow": ["Bash(ls)"], "deny": ["Read(.env)"]},
            "enabledMcpjsonServers": ["mine"]});
        merge(&mut settings, &claude_settings());
        merge(&mut settings, &claude_settings());
        assert_eq!(
            settings["permissions"],
            json!({"allow": ["Bash(ls)", "mcp__debug-sidecar"], "deny": ["Read(.env)"]})
        );
        assert_eq!(
            settings["enabledMcpjsonServers"],
            json!(["mine", "debug-sidecar"])
        );
        let toml = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let merged = merge_codex_toml(toml, "debug-sidecar").unwrap();
        assert!(merged.starts_with(toml), "{merged}");
        assert!(merged.contains(
            "[mcp_servers.debug-sidecar]\ncommand = \"debug-sidecar\"\nargs = [\"mcp\"]"
        ));
        assert_eq!(merge_codex_toml(&merged, "debug-sidecar").unwrap(), merged);
        assert!(merge_codex_toml("mcp_servers = 3", "x").is_err());
        let mut mcp = json!({"mcpServers": {"other": {"command": "x"}}});
        merge(&mut mcp, &mcp_config("debug-sidecar"));
        assert_eq!(mcp["mcpServers"]["other"]["command"], "x");
        assert_eq!(mcp["mcpServers"]["debug-sidecar"]["args"], json!(["mcp"]));
    }
}
