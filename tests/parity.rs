//! Seed parity (issue 18): each rule of the seeds (dsh-pet-progress,
//! fido-turn-states, pi-subagents-agent-record, omp-debug-mode-state) that
//! the protocol carries, stated as a test named after the rule and played
//! over the real binary (`serve`). Timing rules move the server's clock with
//! the test hooks' `debugSidecar/testClock` instead of waiting.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::time::Duration;
use support::*;

/// Every notification of `method` that arrives until the server goes quiet.
fn heard(server: &mut Connection, method: &str) -> Vec<Value> {
    server
        .drain(QUIET)
        .into_iter()
        .filter(|m| m["method"] == method)
        .map(|m| m["params"].clone())
        .collect()
}

/// `heard`, waiting (up to 10 s) for the first such notification: the
/// work before it (reading every other session's activity) may outlast
/// the quiet interval on a loaded machine.
fn heard_after(server: &mut Connection, method: &str) -> Vec<Value> {
    let Some(first) = server.wait_for(method, Duration::from_secs(10), |_| true) else {
        return Vec::new();
    };
    let mut all = vec![first];
    all.extend(heard(server, method));
    all
}

/// The bubbles `progress/changed` announced (null for "gone").
fn bubbles(server: &mut Connection) -> Vec<Value> {
    heard(server, "progress/changed")
        .into_iter()
        .map(|p| p["bubble"].clone())
        .collect()
}

/// Moves the server's clock forward by `ms` and runs its heartbeat.
fn advance(server: &mut Connection, ms: u64) {
    server
        .request("debugSidecar/testClock", json!({ "advanceMs": ms }))
        .expect("the test clock moves");
}

fn two_todos() -> Value {
    json!({ "todos": [
        { "content": "Write the test", "status": "completed" },
        { "content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug" }
    ]})
}

// ---- dsh-pet-progress ----

#[test]
fn the_bubble_expires_after_30_s_and_its_expiry_is_announced() {
    let workspace = Workspace::new("parity-ttl");
    let mut server = initialized(&workspace.root);
    server.notify("progress/todos", two_todos()).unwrap();
    let shown = bubbles(&mut server);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["percent"], 50);
    assert_eq!(shown[0]["title"], "Fixing the bug");

    // No turn runs, so nothing refreshes it: 29 s on it still shows.
    advance(&mut server, 29_000);
    assert_eq!(
        server.request("progress/state", json!({})).unwrap()["percent"],
        50
    );
    assert!(bubbles(&mut server).is_empty());
    // Past 30 s it is gone, and observers are told so once.
    advance(&mut server, 11_000);
    assert_eq!(
        server.request("progress/state", json!({})).unwrap(),
        Value::Null
    );
    assert_eq!(bubbles(&mut server), [Value::Null]);
    advance(&mut server, 10_000);
    assert!(bubbles(&mut server).is_empty());
}

#[test]
fn at_most_24_sessions_keep_progress_the_least_recently_touched_is_dropped() {
    let workspace = Workspace::new("parity-24");
    let mut server = initialized(&workspace.root);
    let with_session = |id: &str| {
        let mut params = two_todos();
        params["sessionId"] = json!(id);
        params
    };
    for n in 0..24 {
        server
            .notify("progress/todos", with_session(&format!("s{n}")))
            .unwrap();
        // Touched one after another, at distinct times.
        advance(&mut server, 10);
    }
    let _ = server.drain(QUIET);
    server
        .notify("progress/todos", with_session("s24"))
        .unwrap();
    let changes = heard_after(&mut server, "progress/changed");
    let gone: Vec<&Value> = changes
        .iter()
        .filter(|c| c["bubble"].is_null())
        .map(|c| &c["sessionId"])
        .collect();
    assert_eq!(gone, [&json!("s0")], "{changes:?}");
    let state = |server: &mut Connection, id: &str| {
        server
            .request("progress/state", json!({ "sessionId": id }))
            .unwrap()
    };
    assert_eq!(state(&mut server, "s0"), Value::Null);
    assert_eq!(state(&mut server, "s1")["percent"], 50);
    // The dropped session has nothing left to replay at its next turn start.
    for id in ["s0", "s1"] {
        server
            .notify("turn/event", json!({ "sessionId": id, "kind": "turnEnd" }))
            .unwrap();
    }
    let _ = server.drain(QUIET);
    for id in ["s0", "s1"] {
        server
            .notify(
                "turn/event",
                json!({ "sessionId": id, "kind": "turnStart" }),
            )
            .unwrap();
    }
    // (s0's turn start tracks it again, as the 25th: s2, now the least
    // recently touched, makes room.)
    let replayed: Vec<(Value, bool)> = heard_after(&mut server, "progress/changed")
        .into_iter()
        .map(|c| (c["sessionId"].clone(), c["bubble"].is_null()))
        .collect();
    assert_eq!(replayed, [(json!("s2"), true), (json!("s1"), false)]);
}

#[test]
fn silence_beats_boilerplate_quiet_phases_keep_the_models_words() {
    let workspace = Workspace::new("parity-quiet");
    let mut server = initialized(&workspace.root);
    server
        .notify("progress/activity", json!({ "line": "I found the bug" }))
        .unwrap();
    for quiet in ["thinking", "review"] {
        server
            .notify("progress/activity", json!({ "phase": quiet }))
            .unwrap();
    }
    let shown = bubbles(&mut server);
    assert_eq!(shown.len(), 1, "{shown:?}");
    let bubble = server.request("progress/state", json!({})).unwrap();
    assert_eq!(bubble["line"], "I found the bug");
    assert_eq!(bubble["title"], "Latest output");
    assert_eq!(bubble["source"], "output");
    assert_eq!(bubble["percent"], Value::Null);
    // A phase that names something concrete always publishes.
    server
        .notify("progress/activity", json!({ "phase": "waiting" }))
        .unwrap();
    let shown = bubbles(&mut server);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["line"], "waiting for the model");
    assert_eq!(shown[0]["title"], "Current step");
    assert_eq!(shown[0]["source"], "phase");
}

#[test]
fn a_named_tool_call_says_calling_its_name_and_a_nameless_one_says_nothing() {
    let workspace = Workspace::new("parity-tool");
    let mut server = initialized(&workspace.root);
    server
        .notify(
            "progress/activity",
            json!({ "line": "Let me look at the cart" }),
        )
        .unwrap();
    let _ = server.drain(QUIET);
    server
        .notify("turn/event", json!({ "kind": "toolCall" }))
        .unwrap();
    assert!(
        bubbles(&mut server).is_empty(),
        "a nameless call says nothing"
    );
    server
        .notify("turn/event", json!({ "kind": "toolCall", "tool": "Read" }))
        .unwrap();
    let shown = bubbles(&mut server);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["line"], "calling Read");
    assert_eq!(shown[0]["title"], "Current step");
    assert_eq!(shown[0]["source"], "phase");
    // A measured session pays nothing for the fallback.
    server.notify("progress/todos", two_todos()).unwrap();
    let _ = server.drain(QUIET);
    server
        .notify("turn/event", json!({ "kind": "toolCall", "tool": "Grep" }))
        .unwrap();
    assert!(bubbles(&mut server).is_empty());
    assert_eq!(
        server.request("progress/state", json!({})).unwrap()["kind"],
        "todos"
    );
}

#[test]
fn the_panel_action_prints_the_full_todo_list() {
    let workspace = Workspace::new("parity-panel");
    let mut server = initialized(&workspace.root);
    server
        .notify("turn/event", json!({ "kind": "turnStart" }))
        .unwrap();
    server
        .notify(
            "progress/todos",
            json!({ "todos": [
                { "content": "Reproduce", "status": "completed" },
                { "content": "Probe", "status": "in_progress", "activeForm": "Probing" },
                { "content": "Fix", "status": "weird" },
                { "status": "completed" }
            ]}),
        )
        .unwrap();
    server
        .notify("turn/event", json!({ "kind": "turnEnd" }))
        .unwrap();
    // The turn's end retired the bubble; the list is still there to print.
    let view = server.request("progress/view", json!({})).unwrap();
    assert_eq!(view["bubble"], Value::Null);
    assert_eq!(
        view["todos"],
        json!([
            { "content": "Reproduce", "status": "completed", "activeForm": null },
            { "content": "Probe", "status": "in_progress", "activeForm": "Probing" },
            { "content": "Fix", "status": "pending", "activeForm": null }
        ])
    );
    assert_eq!(view["goal"], Value::Null);
    assert_eq!(view["sessionId"], "default");
    let empty = server
        .request("progress/view", json!({ "sessionId": "other" }))
        .unwrap();
    assert_eq!(
        empty,
        json!({"sessionId": "other", "todos": [], "goal": null, "activity": null, "bubble": null})
    );
}

// ---- fido-turn-states ----

#[test]
fn the_provider_status_is_a_non_authoritative_detail_beside_the_label() {
    let workspace = Workspace::new("parity-detail");
    let mut server = initialized(&workspace.root);
    server
        .notify(
            "turn/event",
            json!({ "kind": "turnStart", "source": "user" }),
        )
        .unwrap();
    server
        .notify(
            "turn/event",
            json!({ "kind": "reasoning", "text": "searching the web\nfor prices" }),
        )
        .unwrap();
    let state = server.request("turn/state", json!({})).unwrap();
    assert_eq!(
        state,
        json!({"sessionId": "default", "state": "thinking", "label": "thinking…",
               "detail": "searching the web for prices"})
    );
    // The same state again keeps it; a new state without one drops it.
    server
        .notify("turn/event", json!({ "kind": "reasoning" }))
        .unwrap();
    server
        .notify("turn/event", json!({ "kind": "content" }))
        .unwrap();
    // The state machine wins: a detail saying "idle" moves nothing.
    server
        .notify("turn/event", json!({ "kind": "content", "text": "idle" }))
        .unwrap();
    server
        .notify(
            "turn/event",
            json!({ "kind": "turnEnd", "text": "still going" }),
        )
        .unwrap();
    let changes: Vec<(Value, Value)> = heard(&mut server, "turn/stateChanged")
        .into_iter()
        .map(|c| (c["state"].clone(), c["detail"].clone()))
        .collect();
    assert_eq!(
        changes,
        [
            (json!("connecting"), Value::Null),
            (json!("thinking"), json!("searching the web for prices")),
            (json!("streaming"), Value::Null),
            (json!("streaming"), json!("idle")),
            (json!("idle"), Value::Null),
        ]
    );
}

// ---- pi-subagents-agent-record ----

#[test]
fn a_record_shows_tool_uses_turns_usage_compactions_and_a_pending_question() {
    let workspace = Workspace::new("parity-agent");
    let mut server = initialized(&workspace.root);
    server
        .notify(
            "agents/event",
            json!({ "id": "a1", "kind": "queued", "type": "explore" }),
        )
        .unwrap();
    server
        .notify(
            "agents/event",
            json!({ "id": "a1", "kind": "running", "toolUses": 4, "turns": 2, "maxTurns": 8,
                    "usage": { "input": 1200, "output": 300, "cacheRead": 9000, "cacheWrite": 50 },
                    "compactions": 1 }),
        )
        .unwrap();
    server
        .notify(
            "agents/event",
            json!({ "id": "a1", "kind": "completed", "result": "two totals",
                    "question": "Which total should the cart show?" }),
        )
        .unwrap();
    let records = heard(&mut server, "agents/changed");
    assert_eq!(records.len(), 3, "{records:?}");
    // Queued: made now, not started yet (the seed sets startedAt at creation).
    assert!(records[0]["record"]["queuedAt"].is_u64());
    assert_eq!(records[0]["record"]["startedAt"], Value::Null);
    let listed = server.request("agents/list", json!({})).unwrap();
    let record = &listed["agents"][0];
    assert_eq!(record["status"], "completed");
    assert_eq!(
        (
            record["toolUses"].clone(),
            record["turns"].clone(),
            record["maxTurns"].clone()
        ),
        (json!(4), json!(2), json!(8))
    );
    assert_eq!(
        record["usage"],
        json!({ "input": 1200, "output": 300, "cacheRead": 9000, "cacheWrite": 50 })
    );
    assert_eq!(record["compactions"], 1);
    assert_eq!(
        record["pendingQuestion"],
        "Which total should the cart show?"
    );
    // An update moves no status; a late smaller total takes nothing back.
    server
        .notify(
            "agents/event",
            json!({ "id": "a1", "kind": "update", "toolUses": 2 }),
        )
        .unwrap();
    assert!(heard(&mut server, "agents/changed").is_empty());
    // Resuming answers the question and keeps the totals.
    server
        .notify("agents/event", json!({ "id": "a1", "kind": "resumed" }))
        .unwrap();
    let resumed = &heard(&mut server, "agents/changed")[0]["record"];
    assert_eq!(resumed["status"], "running");
    assert_eq!(resumed["pendingQuestion"], Value::Null);
    assert_eq!(resumed["toolUses"], 4);
}

#[test]
fn a_stopped_record_keeps_its_status_when_a_late_completion_arrives() {
    let workspace = Workspace::new("parity-stopped");
    let mut server = initialized(&workspace.root);
    for event in [
        json!({ "id": "a1", "kind": "running" }),
        json!({ "id": "a1", "kind": "stopped" }),
        json!({ "id": "a1", "kind": "completed", "result": "late words" }),
    ] {
        server.notify("agents/event", event).unwrap();
    }
    let listed = server.request("agents/list", json!({})).unwrap();
    let record = &listed["agents"][0];
    assert_eq!(record["status"], "stopped");
    assert_eq!(record["result"], "late words");
    assert!(record["completedAt"].is_u64());
}

// ---- omp-debug-mode-state ----

#[test]
fn incomplete_is_set_by_the_sidecar_never_offered_to_the_agent() {
    // The schema (served as the MCP tool's input schema too) offers three modes.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("protocol/schema/debug.handOff.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let params = &schema["params"];
    assert_eq!(
        params["properties"]["mode"]["$ref"], "#/$defs/AgentHandoffMode",
        "{params}"
    );
    let modes: Vec<&Value> = params["$defs"]["AgentHandoffMode"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["const"])
        .collect();
    assert_eq!(
        modes,
        [&json!("reproduce"), &json!("capture"), &json!("question")]
    );
    let workspace = Workspace::new("parity-incomplete");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({ "problem": "the total is wrong" }))
        .unwrap();
    let refused = server
        .request(
            "debug/handOff",
            json!({ "mode": "incomplete", "steps": ["Run it."] }),
        )
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("-32602") || refused.contains("invalid params"),
        "{refused}"
    );
    assert!(refused.contains("`mode`"), "{refused}");
    // The error offers the agent's modes only.
    let offered = refused.split("expected").nth(1).unwrap_or_default();
    assert!(
        offered.contains("`reproduce`, `capture`, `question`") && !offered.contains("incomplete"),
        "{refused}"
    );
}

#[test]
fn the_persons_proceed_closes_a_round_the_agent_still_holds_as_incomplete() {
    let workspace = Workspace::new("parity-proceed");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({ "problem": "the total is wrong" }))
        .unwrap();
    // The agent's process is gone: a new server serves the saved session.
    assert_eq!(server.shutdown().unwrap().code(), Some(0));
    let mut server = initialized(&workspace.root);
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["stage"], "investigating");
    assert_eq!(status["userCommands"], json!(["proceed", "done", "abort"]));
    let proceeded = server
        .request("debug/proceed", json!({ "note": "nothing happened" }))
        .unwrap();
    assert_eq!(
        (proceeded["stage"].clone(), proceeded["round"].clone()),
        (json!("investigating"), json!(2))
    );
    let kickoff = proceeded["kickoff"].as_str().unwrap();
    assert!(
        kickoff.starts_with("You had not handed round 1 over, so it was closed as incomplete"),
        "{kickoff}"
    );
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(
            workspace
                .root
                .join(".debug-sidecar/sessions/default/state.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(state["rounds"][0]["handoff"], "incomplete");
}
