//! The `mcp` face driven by the official Rust SDK's client over the real
//! binary's stdio: tools, prompts and the blackboard resource, through a
//! whole debug session, with a `serve` and the agent's hooks beside it on
//! the same workspace: all three see one state.

mod support;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, ReadResourceRequestParams,
    ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use support::{arguments, initialized, text, Workspace, BIN};

async fn tool(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    args: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(arguments(args)))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

async fn prompt(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> String {
    let result = client
        .get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments(args)))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::to_value(&result.messages[0].content).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The blackboard resource's text.
async fn blackboard(client: &RunningService<RoleClient, ()>) -> String {
    let board = client
        .read_resource(ReadResourceRequestParams::new("debug-sidecar://blackboard"))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &board.contents[0] else {
        panic!("the blackboard is text");
    };
    text.clone()
}

/// `debug-sidecar mcp` in `root`, on the workspace's latest session.
async fn mcp_in(root: &std::path::Path) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("mcp")
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env_remove("DEBUG_SIDECAR_DIR");
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

/// `debug-sidecar hook claude Stop` for a session; its JSON answer.
fn hook_stop(root: &std::path::Path, session: &str) -> Value {
    use std::io::Write;
    let mut child = std::process::Command::new(BIN)
        .args(["hook", "claude", "Stop"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({"session_id": session, "cwd": root, "hook_event_name": "Stop"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_session_through_tools_and_prompts() {
    let workspace = Workspace::new("mcp");
    let root = workspace.root.clone();
    std::fs::write(root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("mcp")
        .current_dir(&root)
        .env("DEBUG_SIDECAR_SESSION", "agent-1");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();

    let listed = client.list_all_tools().await.unwrap();
    for tool in &listed {
        // Annotated, or Codex refuses the call under approval "never".
        let hints = tool.annotations.as_ref().expect("annotations");
        // Only the agent's own run of a program is not promised harmless.
        let destructive = tool.name == "run_reproduction";
        assert_eq!(hints.destructive_hint, Some(destructive), "{}", tool.name);
        assert_eq!(hints.open_world_hint, Some(false), "{}", tool.name);
        let reads = ["probe_ledger", "read_logs", "log_summary", "debug_status"];
        assert_eq!(
            hints.read_only_hint,
            Some(reads.contains(&tool.name.as_ref())),
            "{}",
            tool.name
        );
    }
    let tools: Vec<String> = listed.into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        tools,
        [
            "hand_off_to_user",
            "probe_snippet",
            "remove_logpoints",
            "probe_ledger",
            "read_logs",
            "log_summary",
            "record_hypotheses",
            "debug_status",
            "start_debug_session",
            "run_reproduction"
        ]
    );
    let prompts: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        prompts,
        ["debug", "debug-proceed", "debug-done", "debug-abort"]
    );

    // Before a session: an illegal command is a tool error the model can read.
    let refused = tool(
        &client,
        "hand_off_to_user",
        json!({"mode": "reproduce", "steps": ["x"]}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("no debug session is active"),
        "{}",
        text(&refused)
    );

    let kickoff = prompt(&client, "debug", json!({"problem": "the total is wrong"})).await;
    assert!(kickoff.starts_with("Debug Mode is on."), "{kickoff}");
    tool(
        &client,
        "record_hypotheses",
        json!({"hypotheses": [
        {"id": "H1", "statement": "n is read wrongly", "status": "open"}]}),
    )
    .await;
    let placed = tool(
        &client,
        "probe_snippet",
        json!({"file": "cart.sh", "hypothesisId": "H1", "variables": ["n"]}),
    )
    .await;
    // The text alone carries the answer: harnesses show the model only
    // structured content when there is any.
    assert!(placed.structured_content.is_none());
    let placed_text = text(&placed);
    let snippet = placed_text
        .split_once("\n\n")
        .map(|(_, block)| format!("{}\n", block.trim_end()))
        .unwrap();
    std::fs::write(root.join("cart.sh"), format!("n=3\n{snippet}echo $n\n")).unwrap();
    let ledger = tool(&client, "probe_ledger", json!({"rescan": true})).await;
    assert!(
        text(&ledger).starts_with("p1 live cart.sh:"),
        "{}",
        text(&ledger)
    );
    // The agent's Stop hook sees the session the MCP tools act on: the
    // round is not handed over yet, so it is sent back.
    let stop = hook_stop(&root, "agent-1");
    assert!(
        stop["hookSpecificOutput"]["additionalContext"].is_string(),
        "{stop}"
    );
    let handed = tool(
        &client,
        "hand_off_to_user",
        json!({"mode": "reproduce", "steps": ["Run `sh cart.sh`."],
        "plan": [{"id": "e1", "method": "runtime_probe", "instructions": ["p1 logs n"]}]}),
    )
    .await;
    assert!(
        text(&handed).contains("stage is now user_turn"),
        "{}",
        text(&handed)
    );

    // An editor's serve on the same workspace sees the same session.
    let mut editor = initialized(&root);
    let status = editor
        .request("debug/status", json!({"sessionId": "agent-1"}))
        .unwrap();
    assert_eq!(status["stage"], "user_turn");
    std::process::Command::new("sh")
        .arg(root.join("cart.sh"))
        .output()
        .unwrap();

    let proceeded = prompt(&client, "debug-proceed", json!({})).await;
    assert!(proceeded.contains("pressed Proceed"), "{proceeded}");
    let logs = tool(
        &client,
        "read_logs",
        json!({"run": status["runId"], "probe": "p1"}),
    )
    .await;
    let logs_text = text(&logs);
    assert!(logs_text.contains("not instructions"), "{logs_text}");
    assert!(
        logs_text.contains("\"n\":3") || logs_text.contains("\"n\":\"3\""),
        "{logs_text}"
    );
    let summary = tool(&client, "log_summary", json!({"run": status["runId"]})).await;
    assert!(text(&summary).contains("p1 (H1) x1"), "{}", text(&summary));

    let board = blackboard(&client).await;
    assert!(board.starts_with("[DEBUG MODE · round 2"), "{board}");

    let cleanup = prompt(&client, "debug-done", json!({})).await;
    assert!(cleanup.contains("Clean up now"), "{cleanup}");
    std::fs::write(root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    let stop = editor
        .request("debug/stop", json!({"sessionId": "agent-1"}))
        .unwrap();
    assert_eq!(stop["decision"], "allow");
    let status = tool(&client, "debug_status", json!({})).await;
    assert_eq!(text(&status), "No debug session is active.");
    client.cancel().await.unwrap();
}

/// The agent's MCP server starts before the editor's `serve` has recorded
/// its ingest address (a workspace without sessions gets no state directory):
/// once a session exists, browser probes still get the editor's ingest URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_started_first_learns_the_ingest_address_later() {
    let workspace = Workspace::new("mcp-ingest");
    let root = workspace.root.clone();
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("mcp")
        .current_dir(&root)
        .env_remove("DEBUG_SIDECAR_SESSION");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let root_for_editor = root.clone();
    let mut editor = tokio::task::spawn_blocking(move || initialized(&root_for_editor))
        .await
        .unwrap();
    assert!(!root.join(".debug-sidecar").exists());
    prompt(
        &client,
        "debug",
        json!({"problem": "the page total is wrong"}),
    )
    .await;
    let editor = tokio::task::spawn_blocking(move || {
        editor
            .wait_for(
                "debug/stateChanged",
                std::time::Duration::from_secs(10),
                |s| s["active"] == true,
            )
            .expect("the editor hears the agent's session");
        editor
    })
    .await
    .unwrap();
    let placed = tool(
        &client,
        "probe_snippet",
        json!({"file": "app.js", "language": "browser", "variables": ["total"]}),
    )
    .await;
    assert_ne!(placed.is_error, Some(true), "{}", text(&placed));
    assert!(text(&placed).contains("/ingest/"), "{}", text(&placed));
    drop(editor);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn started_in_a_subfolder_the_mcp_server_works_on_the_hooks_workspace() {
    let workspace = Workspace::new("mcp-subfolder");
    let root = workspace.root.clone();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let sub = root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("mcp")
        .current_dir(&sub)
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env_remove("DEBUG_SIDECAR_DIR");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let started = prompt(&client, "debug", json!({"problem": "the total is wrong"})).await;
    assert!(started.starts_with("Debug Mode is on."), "{started}");
    client.cancel().await.unwrap();
    assert!(
        !sub.join(".debug-sidecar").exists(),
        "a stray state directory"
    );
    assert!(root.join(".debug-sidecar/sessions").is_dir());
    // A hook from the same subfolder sees that session.
    let input = json!({"session_id": "h", "cwd": sub, "hook_event_name": "UserPromptSubmit",
                       "prompt": "go", "transcript_path": "/tmp/t.jsonl"});
    let output = support::run_hook("claude", "UserPromptSubmit", &input.to_string(), None);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("the total is wrong"), "{text}");
}

/// OpenCode asks for a prompt with `$1` in place of each argument and puts
/// the person's words there afterwards: nothing is started from `$1`.
#[tokio::test(flavor = "multi_thread")]
async fn a_placeholder_problem_starts_nothing() {
    let workspace = Workspace::new("mcp-placeholder");
    let root = workspace.root.clone();
    let client = mcp_in(&root).await;
    for placeholder in ["$1", "$ARGUMENTS", " $2 "] {
        let said = prompt(&client, "debug", json!({ "problem": placeholder })).await;
        assert!(said.contains(placeholder.trim()), "{said}");
        assert!(said.contains("start_debug_session"), "{said}");
        let status = tool(&client, "debug_status", json!({})).await;
        assert!(!text(&status).contains("$"), "{}", text(&status));
    }
    assert!(!root
        .join(".debug-sidecar/sessions/default/state.json")
        .exists());
    // Words that only look like one are a problem like any other.
    let started = prompt(&client, "debug", json!({"problem": "$1 is charged twice"})).await;
    assert!(started.starts_with("Debug Mode is on."), "{started}");
    client.cancel().await.unwrap();
}

/// Claude Code applies a typed `/mcp__debug-sidecar__debug-proceed` twice
/// over: its prompt hook, then `prompts/get` as it expands the command.
/// The person pressed Proceed once: round 1's run is closed once, and the
/// prompt's text is that Proceed's kickoff, naming round 1's run and note.
/// A second Proceed after the agent handed round 2 over is applied.
#[tokio::test(flavor = "multi_thread")]
async fn a_typed_proceed_that_reaches_the_hook_and_the_prompt_is_applied_once() {
    let workspace = Workspace::new("mcp-once");
    let root = workspace.root.clone();
    let client = mcp_in(&root).await;
    let typed = |prompt: &str| {
        let input = json!({"session_id": "c1", "cwd": root, "hook_event_name": "UserPromptSubmit",
                           "prompt": prompt});
        let output = support::run_hook("claude", "UserPromptSubmit", &input.to_string(), None);
        serde_json::from_slice::<Value>(&output.stdout).unwrap_or(Value::Null)
    };
    typed("/mcp__debug-sidecar__debug the total is wrong");
    prompt(&client, "debug", json!({"problem": "the"})).await;
    let hand_off = json!({"mode": "reproduce", "steps": ["Run it"]});
    tool(&client, "hand_off_to_user", hand_off.clone()).await;
    let status = |client| async move {
        let said = text(&tool(client, "debug_status", json!({})).await);
        said.lines().next().unwrap_or_default().to_string()
    };

    let hooked = typed("/mcp__debug-sidecar__debug-proceed it printed 70");
    let said = hooked["systemMessage"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("Proceed (\"it printed 70\"): run r1-"),
        "{hooked}"
    );
    // Claude Code hands the prompt the first word of the note.
    let expanded = prompt(&client, "debug-proceed", json!({"note": "it"})).await;
    assert!(expanded.contains("r1-"), "{expanded}");
    assert!(expanded.contains("it printed 70"), "{expanded}");
    assert!(!expanded.contains("r2-"), "{expanded}");
    let now = status(&client).await;
    assert!(now.contains("round 2"), "{now}");

    // The agent hands round 2 over; the person's next Proceed is theirs,
    // however soon it comes.
    tool(&client, "hand_off_to_user", hand_off).await;
    typed("/mcp__debug-sidecar__debug-proceed");
    let expanded = prompt(&client, "debug-proceed", json!({})).await;
    assert!(expanded.contains("r2-"), "{expanded}");
    let now = status(&client).await;
    assert!(now.contains("round 3"), "{now}");
    client.cancel().await.unwrap();
}

/// A client that reports no stop (Cursor, Zed's own agent: MCP only, no
/// hooks): the cleanup ends at the first call or poll that finds the
/// ledger clean, and that answer says so. Before then, calls spend no
/// cleanup reminder.
#[tokio::test(flavor = "multi_thread")]
async fn without_stops_the_call_that_finds_the_cleanup_done_ends_the_session() {
    let workspace = Workspace::new("mcp-no-stops");
    let root = workspace.root.clone();
    std::fs::write(root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    let client = mcp_in(&root).await;
    tool(
        &client,
        "start_debug_session",
        json!({"problem": "n is wrong"}),
    )
    .await;
    let placed = tool(
        &client,
        "probe_snippet",
        json!({"file": "cart.sh", "variables": ["n"]}),
    )
    .await;
    let snippet = text(&placed)
        .split_once("\n\n")
        .map(|(_, block)| format!("{}\n", block.trim_end()))
        .unwrap();
    std::fs::write(root.join("cart.sh"), format!("n=3\n{snippet}echo $n\n")).unwrap();
    tool(
        &client,
        "hand_off_to_user",
        json!({"mode": "reproduce", "steps": ["Run it."]}),
    )
    .await;
    let cleanup = prompt(&client, "debug-done", json!({})).await;
    assert!(cleanup.contains("Clean up now"), "{cleanup}");
    // The probe is still there: nothing ends, nothing is spent.
    for _ in 0..4 {
        let ledger = text(&tool(&client, "probe_ledger", json!({})).await);
        assert!(!ledger.contains("Cleanup verified"), "{ledger}");
    }
    std::fs::write(root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    let ledger = text(&tool(&client, "probe_ledger", json!({})).await);
    assert!(ledger.contains("Cleanup verified"), "{ledger}");
    let status = tool(&client, "debug_status", json!({})).await;
    assert_eq!(text(&status), "No debug session is active.");
    client.cancel().await.unwrap();

    // The same through a poll of the blackboard.
    std::fs::write(root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    let client = mcp_in(&root).await;
    tool(&client, "start_debug_session", json!({"problem": "again"})).await;
    prompt(&client, "debug-done", json!({})).await;
    let board = blackboard(&client).await;
    assert!(board.contains("Cleanup verified"), "{board}");
    client.cancel().await.unwrap();
}

/// The MCP face holds its lines to `serve`'s bounds: a line over 8 MiB, a
/// request nested 200 deep and 8 MiB of tiny objects are each answered
/// `-32600` with their id, and the server goes on serving.
#[test]
fn oversized_and_costly_lines_are_answered_with_their_id() {
    use std::io::{BufRead, BufReader, Write};
    let workspace = Workspace::new("mcp-bounds");
    let mut child = support::spawn_mcp_raw(&workspace.root);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}\n",
            "x".repeat(20 << 20)
        );
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{{\"x\":{}1{}}}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let tiny = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{{\"x\":[{}{{}}]}}}}\n",
            "{},".repeat((8 << 20) / 3 - 100)
        );
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
        for line in [
            format!("{init}\n"),
            format!("{initialized}\n"),
            long,
            deep,
            tiny,
            format!("{ping}\n"),
        ] {
            stdin.write_all(line.as_bytes()).unwrap();
        }
        stdin
    });
    let mut answers = std::collections::BTreeMap::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = answer["id"].as_i64() {
            answers.insert(id, answer);
        }
        if answers.len() == 5 {
            break;
        }
    }
    drop(writer.join().unwrap());
    let _ = child.wait();
    for id in [5, 6, 7] {
        assert_eq!(answers[&id]["error"]["code"], -32600, "{}", answers[&id]);
    }
    assert!(answers[&5]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("exceeds the limit"));
    assert!(answers[&6]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("deep"));
    assert_eq!(
        answers[&8]["result"],
        json!({}),
        "still serving: {}",
        answers[&8]
    );
}
