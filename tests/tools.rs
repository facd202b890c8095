//! The tool catalogue through `serve` (`tools/list`, `tools/call`) beside
//! the MCP face: one definition, so both list the same tools and answer
//! the same texts. Also what a `serve` client learns of its sessions, and
//! its own edit tools making rescans follow.

mod support;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use support::{arguments, initialized, redact, spawn, text, Workspace, BIN, QUIET};

/// A session played through tools alone: what the agent would call.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "start_debug_session",
            json!({"problem": "The cart total is off by one."}),
        ),
        (
            "record_hypotheses",
            json!({"hypotheses": [
                {"id": "H1", "statement": "n is read before it is set", "status": "open"},
                {"id": "H2", "statement": "the loop skips the last item", "status": "open"},
                {"id": "H3", "statement": "the total is rounded down", "status": "open"}
            ]}),
        ),
        (
            "probe_snippet",
            json!({"file": "cart.sh", "hypothesisId": "H1", "variables": ["n"]}),
        ),
        ("probe_ledger", json!({"rescan": true})),
        (
            "hand_off_to_user",
            json!({"mode": "reproduce", "steps": ["Run ./cart.sh and read the total."]}),
        ),
        ("debug_status", json!({})),
        ("read_logs", json!({})),
        ("log_summary", json!({})),
        // A command the stage does not allow, bad arguments, no such tool.
        ("run_reproduction", json!({"command": ["true"]})),
        ("probe_snippet", json!({"file": 5})),
        ("no_such_tool", json!({})),
    ]
}

fn workspace(name: &str) -> Workspace {
    let workspace = Workspace::new(name);
    std::fs::write(workspace.root.join("cart.sh"), "n=3\necho $n\n").unwrap();
    workspace
}

#[tokio::test(flavor = "multi_thread")]
async fn both_faces_list_one_catalogue_and_answer_the_same_texts() {
    let served = workspace("tools-serve");
    let mut server = initialized(&served.root);
    let listed = server.request("tools/list", json!({})).unwrap();

    let mcp_side = workspace("tools-mcp");
    // A `serve` beside it, so its texts name an ingest URL too.
    let mut beside = initialized(&mcp_side.root);
    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").current_dir(&mcp_side.root);
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let mcp_tools: Vec<Value> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .collect();
    let served_tools = listed["tools"].as_array().unwrap();
    assert_eq!(served_tools.len(), mcp_tools.len());
    for (ours, theirs) in served_tools.iter().zip(&mcp_tools) {
        for key in ["name", "title", "description", "inputSchema", "annotations"] {
            assert_eq!(ours[key], theirs[key], "{} differs in {key}", ours["name"]);
        }
        assert!(ours["inputSchema"]["properties"].get("sessionId").is_none());
    }
    insta::assert_json_snapshot!("tools_list", listed);

    let mut answers = Vec::new();
    for (name, args) in calls() {
        let ours = server
            .request("tools/call", json!({"name": name, "arguments": args}))
            .unwrap();
        let theirs = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(arguments(args.clone())))
            .await
            .unwrap();
        let ours = redact(&ours, &served.root);
        let their_text = redact(&json!(text(&theirs)), &mcp_side.root);
        assert_eq!(ours["content"][0]["text"], their_text, "{name}");
        assert_eq!(ours["content"][0]["type"], "text");
        assert_eq!(
            ours["isError"],
            json!(theirs.is_error == Some(true)),
            "{name}"
        );
        answers.push(json!({"call": name, "arguments": args, "answer": ours}));
    }
    insta::assert_json_snapshot!("tools_call_session", answers);
    // The tools changed the session that `serve` serves, and it said so.
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["stage"], "user_turn");
    assert_eq!(status["probes"]["live"], 0, "the block was never inserted");
    client.cancel().await.unwrap();
    beside.drain(QUIET);
    beside.shutdown().unwrap();
    server.shutdown().unwrap();
}

#[test]
fn tools_call_refuses_malformed_params_only() {
    let workspace = workspace("tools-params");
    let mut server = initialized(&workspace.root);
    for params in [
        json!({}),
        json!({"name": "debug_status", "extra": 1}),
        json!({"name": "debug_status", "arguments": [1]}),
        json!({"name": "debug_status", "sessionId": "../x"}),
    ] {
        let answer = server.request("tools/call", params.clone());
        let Err(debug_sidecar::rpc::client::ClientError::Rpc(error)) = answer else {
            panic!("{params}: expected -32602, got {answer:?}");
        };
        assert_eq!(error.code, -32602, "{params}");
    }
    // A call on a named session acts on that one.
    let named = server
        .request(
            "tools/call",
            json!({"name": "start_debug_session", "sessionId": "other",
                   "arguments": {"problem": "p"}}),
        )
        .unwrap();
    assert_eq!(named["isError"], false);
    let other = server
        .request("debug/status", json!({"sessionId": "other"}))
        .unwrap();
    assert_eq!(other["stage"], "investigating");
    server.shutdown().unwrap();
}

#[test]
fn initialize_names_the_session_and_debug_sessions_lists_them() {
    let workspace = workspace("tools-sessions");
    let mut server = spawn(&workspace.root);
    let init = server.initialize(&workspace.root, json!({})).unwrap();
    let ours = &init["capabilities"]["experimental"]["debugSidecar"];
    assert_eq!(ours["sessionId"], "default");
    assert_eq!(ours["sessionBound"], false);
    let empty = server.request("debug/sessions", json!({})).unwrap();
    assert_eq!(empty, json!({"current": "default", "sessions": []}));
    server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let listed = server.request("debug/sessions", json!({})).unwrap();
    assert_eq!(listed["current"], "s1");
    assert_eq!(listed["sessions"][0]["sessionId"], "s1");
    assert_eq!(listed["sessions"][0]["stage"], "investigating");
    assert!(listed["sessions"][0]["updatedAt"].as_u64().unwrap() > 0);
    insta::assert_json_snapshot!("sessions", redact(&listed, &workspace.root));
    // Another client started the session: a new `serve` follows it.
    let mut follower = spawn(&workspace.root);
    let init = follower.initialize(&workspace.root, json!({})).unwrap();
    let theirs = &init["capabilities"]["experimental"]["debugSidecar"];
    assert_eq!(theirs["sessionId"], "s1");
    assert_eq!(theirs["sessionBound"], false);
    let mut bound = spawn(&workspace.root);
    let init = bound
        .initialize(&workspace.root, json!({"sessionId": "mine"}))
        .unwrap();
    let named = &init["capabilities"]["experimental"]["debugSidecar"];
    assert_eq!(named["sessionId"], "mine");
    assert_eq!(named["sessionBound"], true);
    let refused = server.request("debug/sessions", json!({"sessionId": "s1"}));
    assert!(refused.is_err(), "debug/sessions takes no params");
    for connection in [server, follower, bound] {
        connection.shutdown().unwrap();
    }
}

/// The block `debug/probeSnippet` hands out, inserted into `file`.
fn insert_probe(
    server: &mut debug_sidecar::rpc::client::Connection,
    root: &std::path::Path,
    file: &str,
) {
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": file, "variables": ["n"]}),
        )
        .unwrap();
    let snippet = placed["snippet"].as_str().unwrap();
    std::fs::write(root.join(file), format!("n=3\n{snippet}\necho $n\n")).unwrap();
}

#[test]
fn the_clients_edit_tools_make_a_rescan_follow() {
    let workspace = workspace("tools-edits");
    std::fs::write(workspace.root.join("total.sh"), "n=1\n").unwrap();
    let mut server = spawn(&workspace.root);
    server
        .initialize(&workspace.root, json!({"editTools": ["my_patch"]}))
        .unwrap();
    server
        .request("debug/start", json!({"problem": "p"}))
        .unwrap();
    insert_probe(&mut server, &workspace.root, "cart.sh");
    // A tool the client declared as editing files.
    server
        .notify(
            "turn/event",
            json!({"kind": "toolCall", "tool": "my_patch"}),
        )
        .unwrap();
    let seen = server.wait_for("debug/stateChanged", QUIET * 20, |s| {
        s["probes"]["live"] == 1
    });
    assert!(
        seen.is_some(),
        "the declared edit tool's call was not rescanned"
    );
    // Any tool the event says edited files.
    insert_probe(&mut server, &workspace.root, "total.sh");
    server
        .notify(
            "turn/event",
            json!({"kind": "toolCall", "tool": "bash", "edits": true}),
        )
        .unwrap();
    let seen = server.wait_for("debug/stateChanged", QUIET * 20, |s| {
        s["probes"]["live"] == 2
    });
    assert!(
        seen.is_some(),
        "an event saying it edited was not rescanned"
    );
    server.shutdown().unwrap();
}
