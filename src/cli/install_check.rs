//! `debug-sidecar install claude|codex --check`: whether the harness will
//! load and run what `--write` wrote. Both skip an untrusted project's
//! settings without a word in headless runs, so this says it instead.

use super::install::{events_of, Agent};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Report {
    missing: usize,
}

impl Report {
    fn line(&mut self, ok: bool, what: &str, fix: &str) {
        if ok {
            println!("ok       {what}");
        } else {
            self.missing += 1;
            println!("MISSING  {what}\n         {fix}");
        }
    }
}

fn read_json(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

fn read_toml(path: &Path) -> Option<toml_edit::DocumentMut> {
    std::fs::read_to_string(path).ok()?.parse().ok()
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// Every event of ours has a hook running `debug-sidecar hook <dialect>`.
fn has_our_hooks(settings: &Value, agent: Agent) -> bool {
    let (events, dialect) = events_of(agent);
    events.iter().all(|(event, _)| {
        settings["hooks"][*event]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|entry| entry["hooks"].as_array().into_iter().flatten())
            .filter_map(|hook| hook["command"].as_str())
            .any(|command| command.contains(&format!("hook {dialect} {event}")))
    })
}

pub fn run(agent: Agent) -> anyhow::Result<ExitCode> {
    let root = std::env::current_dir()?;
    let mut report = Report { missing: 0 };
    match agent {
        Agent::Claude => check_claude(&root, &mut report),
        Agent::Codex => check_codex(&root, &mut report),
        Agent::Gemini => check_gemini(&root, &mut report),
        Agent::Copilot => check_copilot(&root, &mut report),
        Agent::Opencode => check_opencode(&root, &mut report),
    }
    Ok(if report.missing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn check_claude(root: &Path, report: &mut Report) {
    let local = read_json(&root.join(".claude/settings.local.json"));
    let shared = read_json(&root.join(".claude/settings.json"));
    report.line(
        has_our_hooks(&local, Agent::Claude) || has_our_hooks(&shared, Agent::Claude),
        "hooks in .claude/settings.local.json",
        "run `debug-sidecar install claude --write` here",
    );
    let allowed = |settings: &Value| {
        settings["permissions"]["allow"]
            .as_array()
            .is_some_and(|allow| allow.iter().any(|a| a == "mcp__debug-sidecar"))
    };
    report.line(
        allowed(&local) || allowed(&shared),
        "permission for the mcp__debug-sidecar tools",
        "run `debug-sidecar install claude --write` here",
    );
    let mcp = read_json(&root.join(".mcp.json"));
    report.line(
        mcp["mcpServers"]["debug-sidecar"].is_object(),
        "the debug-sidecar MCP server in .mcp.json",
        "run `debug-sidecar install claude --write` here",
    );
    // Claude Code records the person's answer to "New MCP server found in
    // this project" here; a decline leaves the hooks running without tools.
    let listed = |settings: &Value, key: &str| {
        settings[key]
            .as_array()
            .is_some_and(|names| names.iter().any(|n| n == "debug-sidecar"))
    };
    let declined =
        listed(&local, "disabledMcpjsonServers") || listed(&shared, "disabledMcpjsonServers");
    let approved = listed(&local, "enabledMcpjsonServers")
        || listed(&shared, "enabledMcpjsonServers")
        || local["enableAllProjectMcpServers"] == true
        || shared["enableAllProjectMcpServers"] == true;
    if declined {
        report.line(
            false,
            "the debug-sidecar MCP server declined in Claude Code (disabledMcpjsonServers): \
             the hooks run, the tools and /mcp__debug-sidecar__ commands are gone",
            "run `claude mcp reset-project-choices` here, then `debug-sidecar install claude \
             --write`",
        );
    } else {
        report.line(
            approved,
            "the debug-sidecar MCP server approved (enabledMcpjsonServers)",
            "run `debug-sidecar install claude --write` here, or choose to use it when Claude \
             Code asks",
        );
    }
    let state = home().map(|home| read_json(&home.join(".claude.json")));
    let key = root.to_string_lossy();
    let trusted =
        state.is_some_and(|s| s["projects"][key.as_ref()]["hasTrustDialogAccepted"] == true);
    report.line(
        trusted,
        &format!("this folder trusted in ~/.claude.json ({key})"),
        "start `claude` here once and accept the trust dialog; until then its permissions \
         are ignored",
    );
}

fn check_codex(root: &Path, report: &mut Report) {
    let codex_home = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".codex")));
    let user = codex_home
        .as_ref()
        .and_then(|dir| read_toml(&dir.join("config.toml")));
    let project = read_toml(&root.join(".codex/config.toml"));
    let key = root.to_string_lossy().into_owned();
    let trusted = user.as_ref().is_some_and(|doc| {
        doc.get("projects")
            .and_then(|p| p.get(&key))
            .and_then(|p| p.get("trust_level"))
            .and_then(|t| t.as_str())
            == Some("trusted")
    });
    report.line(
        trusted,
        &format!(
            "this project trusted in {}/config.toml",
            display(&codex_home)
        ),
        &format!(
            "add `[projects.\"{key}\"]` with `trust_level = \"trusted\"` there (Codex loads no \
             .codex/ of an untrusted project)"
        ),
    );
    let server = |doc: &Option<toml_edit::DocumentMut>| {
        doc.as_ref().is_some_and(|doc| {
            doc.get("mcp_servers")
                .and_then(|s| s.get("debug-sidecar"))
                .is_some()
        })
    };
    report.line(
        server(&project) || server(&user),
        "the debug-sidecar MCP server in .codex/config.toml",
        "run `debug-sidecar install codex --write` here",
    );
    let hooks_file = root.join(".codex/hooks.json");
    report.line(
        has_our_hooks(&read_json(&hooks_file), Agent::Codex),
        "hooks in .codex/hooks.json",
        "run `debug-sidecar install codex --write` here",
    );
    // Codex records each trusted hook as `[hooks.state."<file>:<event>:…"]`.
    let prefix = format!("{}:", hooks_file.to_string_lossy());
    let trusted_hooks = user.as_ref().map_or(0, |doc| {
        doc.get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(|s| s.as_table_like())
            .map_or(0, |table| {
                table
                    .iter()
                    .filter(|(name, _)| name.starts_with(&prefix))
                    .count()
            })
    });
    report.line(
        trusted_hooks > 0,
        &format!("hooks trusted ({trusted_hooks} recorded)"),
        "start `codex` here once and accept the hooks (`codex exec` skips untrusted hooks \
         silently; an edited hook needs trusting again), or run `codex exec \
         --dangerously-bypass-hook-trust`",
    );
}

fn check_gemini(root: &Path, report: &mut Report) {
    let settings = read_json(&root.join(".gemini/settings.json"));
    report.line(
        has_our_hooks(&settings, Agent::Gemini),
        "hooks in .gemini/settings.json",
        "run `debug-sidecar install gemini --write` here",
    );
    report.line(
        settings["mcpServers"]["debug-sidecar"].is_object(),
        "the debug-sidecar MCP server in .gemini/settings.json",
        "run `debug-sidecar install gemini --write` here",
    );
}

fn check_copilot(root: &Path, report: &mut Report) {
    report.line(
        has_our_hooks(
            &read_json(&root.join(".github/hooks/debug-sidecar.json")),
            Agent::Copilot,
        ),
        "hooks in .github/hooks/debug-sidecar.json",
        "run `debug-sidecar install copilot --write` here",
    );
    report.line(
        read_json(&root.join(".mcp.json"))["mcpServers"]["debug-sidecar"].is_object(),
        "the debug-sidecar MCP server in .mcp.json",
        "run `debug-sidecar install copilot --write` here",
    );
}

fn check_opencode(root: &Path, report: &mut Report) {
    use super::install_opencode::{files_in_place, has_mcp, CONFIG};
    report.line(
        has_mcp(&read_json(&root.join(CONFIG))),
        "the debug-sidecar MCP server in opencode.json",
        "run `debug-sidecar install opencode --write` here",
    );
    for (path, same) in files_in_place(root) {
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let what = if path.exists() && !same {
            format!("{shown} (another version than this binary's)")
        } else {
            shown
        };
        report.line(
            same,
            &what,
            "run `debug-sidecar install opencode --write` here",
        );
    }
}

fn display(dir: &Option<PathBuf>) -> String {
    dir.as_ref()
        .map_or("~/.codex".into(), |d| d.display().to_string())
}
