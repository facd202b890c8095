//! ACP messages as the proxy reads and writes them (protocol version 1:
//! JSON-RPC 2.0, one message per line). Pure: every function here takes
//! and gives JSON values.

use crate::core::harness::PERSON_COMMANDS;
use serde_json::{json, Value};

/// The name our MCP server has in a session's `mcpServers`.
pub const MCP_SERVER_NAME: &str = "debug-sidecar";

/// The first text block of a prompt: the only one an agent reads a slash
/// command from.
pub fn first_text(prompt: &[Value]) -> Option<&str> {
    prompt
        .iter()
        .find(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|block| block.get("text"))
        .and_then(Value::as_str)
}

pub fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// A prompt with the board added: always a block of its own after the
/// person's, so a slash command in the first block stays first.
pub fn with_board(prompt: &mut Vec<Value>, block: String) {
    prompt.push(text_block(block));
}

/// A `session/update` notification the proxy sends the editor itself,
/// marked as ours.
fn session_update(session_id: &str, update: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": update,
            "_meta": { "debugSidecar": true },
        },
    })
}

/// A message chunk the proxy shows in the agent's pane.
pub fn chunk(session_id: &str, text: String) -> Value {
    session_update(
        session_id,
        json!({ "sessionUpdate": "agent_message_chunk", "content": text_block(text) }),
    )
}

/// The person's commands as ACP slash commands.
pub fn our_commands() -> Vec<Value> {
    PERSON_COMMANDS
        .iter()
        .map(|command| {
            let mut entry = json!({ "name": command.name, "description": command.description });
            if let Some(argument) = command.argument {
                entry["input"] = json!({ "hint": argument.description });
            }
            entry
        })
        .collect()
}

fn is_ours(command: &Value) -> bool {
    let name = command.get("name").and_then(Value::as_str);
    PERSON_COMMANDS.iter().any(|c| Some(c.name) == name)
}

/// The agent's commands without any of ours (ours replace theirs of the
/// same name).
pub fn agent_commands(update: &Value) -> Vec<Value> {
    update
        .get("availableCommands")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter(|c| !is_ours(c)).cloned().collect())
        .unwrap_or_default()
}

/// The whole list the editor is given: the agent's, then ours.
pub fn merged_commands(agent: &[Value]) -> Vec<Value> {
    agent.iter().cloned().chain(our_commands()).collect()
}

/// An `available_commands_update` with `commands`.
pub fn commands_update(session_id: &str, commands: Vec<Value>) -> Value {
    session_update(
        session_id,
        json!({ "sessionUpdate": "available_commands_update", "availableCommands": commands }),
    )
}

/// Adds our MCP server (this very binary's `mcp` face) to a session's
/// `mcpServers`, unless the editor already configured one by that name.
pub fn add_mcp_server(params: &mut Value, program: &str) {
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let servers = params
        .entry("mcpServers")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(servers) = servers.as_array_mut() else {
        return;
    };
    let present = servers
        .iter()
        .any(|s| s.get("name").and_then(Value::as_str) == Some(MCP_SERVER_NAME));
    if !present {
        servers.push(json!({
            "name": MCP_SERVER_NAME,
            "command": program,
            "args": ["mcp"],
            // The person is in the editor, whichever agent connects.
            "env": [{"name": crate::core::host::HOST_ENV, "value": "acp"}],
        }));
    }
}

/// A `plan` update's entries as todos (`content`, `status`).
pub fn plan_todos(update: &Value) -> Vec<Value> {
    update
        .get("entries")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|entry| {
                    let content = entry.get("content").and_then(Value::as_str)?;
                    let status = entry
                        .get("status")
                        .and_then(Value::as_str)
                        .unwrap_or("pending");
                    Some(json!({ "content": content, "status": status }))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a tool call of this ACP kind changes files.
pub fn edits(kind: Option<&str>) -> bool {
    matches!(kind, Some("edit" | "delete" | "move"))
}

/// The files a tool call names (`locations[].path`).
pub fn locations(update: &Value) -> Vec<String> {
    update
        .get("locations")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|l| l.get("path").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// An error response to `id`.
pub fn error_response(id: Value, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32603, "message": message },
    })
}

/// A result response to `id`.
pub fn result_response(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_goes_after_a_slash_command() {
        let mut prompt = vec![text_block("/review the diff".into())];
        with_board(&mut prompt, "BOARD".into());
        assert_eq!(first_text(&prompt), Some("/review the diff"));
        assert_eq!(prompt[1]["text"], "BOARD");
    }

    #[test]
    fn first_text_skips_other_blocks() {
        let prompt = vec![
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
            text_block("hello".into()),
        ];
        assert_eq!(first_text(&prompt), Some("hello"));
        assert_eq!(first_text(&[]), None);
    }

    #[test]
    fn ours_replace_the_agents_of_the_same_name() {
        let update = json!({"availableCommands": [
            {"name": "review", "description": "r"},
            {"name": "debug", "description": "the agent's own"},
        ]});
        let merged = merged_commands(&agent_commands(&update));
        let names: Vec<&str> = merged.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "review",
                "debug",
                "debug-proceed",
                "debug-done",
                "debug-abort"
            ]
        );
        assert_eq!(merged[1]["description"], "Start Debug Mode on a problem");
    }

    #[test]
    fn the_mcp_server_is_added_once() {
        let mut params = json!({"cwd": "/w", "mcpServers": [{"name": "other", "command": "x", "args": [], "env": []}]});
        add_mcp_server(&mut params, "/bin/ds");
        add_mcp_server(&mut params, "/bin/ds");
        let servers = params["mcpServers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[1]["args"], json!(["mcp"]));
        let mut bare = json!({"cwd": "/w"});
        add_mcp_server(&mut bare, "/bin/ds");
        assert_eq!(bare["mcpServers"][0]["name"], MCP_SERVER_NAME);
    }

    #[test]
    fn a_plan_becomes_todos() {
        let update = json!({"entries": [
            {"content": "read", "priority": "high", "status": "completed"},
            {"content": "fix", "priority": "low"},
            {"priority": "low"},
        ]});
        assert_eq!(
            plan_todos(&update),
            vec![
                json!({"content": "read", "status": "completed"}),
                json!({"content": "fix", "status": "pending"}),
            ]
        );
    }
}
