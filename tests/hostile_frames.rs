//! Hostile frames on `serve` (issue 13), against the built binary: requests
//! that must be answered although tower-lsp-server would drop them, byte
//! streams whose meaning must not depend on how they are chunked, headers
//! that disagree about a body's length, cursors from nowhere, and a frame
//! whose parse would cost far more memory than its size.

mod support;

use debug_sidecar::rpc::client::{ClientError, Connection};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// How long an answer that should come is waited for.
const WAIT: Duration = Duration::from_secs(5);

/// An answer as `(id, error code)`; the code is `None` for a result.
type Outcome = (Value, Option<i64>);

fn outcome(answer: &Value) -> Outcome {
    (answer["id"].clone(), answer["error"]["code"].as_i64())
}

/// Answers (never notifications) until `expected` of them arrived, or
/// `WAIT` passed; then whatever else comes within `QUIET`. Sorted, since
/// the server may answer concurrent requests in any order.
fn answers(server: &mut Connection, expected: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    let mut got = Vec::new();
    while got.len() < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        match server.next_message(left) {
            Some(message) if message.get("method").is_none() => got.push(message),
            Some(_) => {}
            None => break,
        }
    }
    got.extend(
        server
            .drain(QUIET)
            .into_iter()
            .filter(|m| m.get("method").is_none()),
    );
    got.sort_by_key(|m| format!("{}|{}", m["id"], m["error"]["code"]));
    got
}

fn status(id: i64) -> Vec<u8> {
    frame(
        json!({"jsonrpc": "2.0", "id": id, "method": "debug/status"})
            .to_string()
            .as_bytes(),
    )
}

/// The server still answers a good request after whatever came before.
fn still_serving(server: &mut Connection) {
    let status = server
        .request("debug/status", json!({}))
        .expect("debug/status still answers");
    assert_eq!(status["sessionId"], "default");
}

#[test]
fn dollar_requests_with_an_id_are_answered_method_not_found() {
    let workspace = Workspace::new("dollar-requests");
    let mut server = initialized(&workspace.root);
    let messages = [
        json!({"jsonrpc": "2.0", "id": 7, "method": "$/setTrace", "params": {"value": "off"}}),
        json!({"jsonrpc": "2.0", "id": "u", "method": "$/unknownThing"}),
        // Notifications stay unanswered, and cancelling still works.
        json!({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}}),
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 99}}),
        json!({"jsonrpc": "2.0", "method": "$/unknownThing"}),
    ];
    let bytes: Vec<u8> = messages
        .iter()
        .flat_map(|m| frame(m.to_string().as_bytes()))
        .collect();
    server.send_raw(&bytes).unwrap();
    let got = answers(&mut server, 2);
    let outcomes: Vec<Outcome> = got.iter().map(outcome).collect();
    assert_eq!(
        outcomes,
        [(json!("u"), Some(-32601)), (json!(7), Some(-32601))],
        "{got:?}"
    );
    for answer in &got {
        let method = answer["error"]["data"].as_str().unwrap_or_default();
        assert!(
            method.starts_with("$/"),
            "the answer names the method: {answer}"
        );
    }
    still_serving(&mut server);
}

/// One fresh server fed `pieces`, each written after a pause so the server
/// reads it on its own: the answers to what they hold.
fn fed_in(pieces: &[Vec<u8>], expected: usize) -> Vec<Outcome> {
    let workspace = Workspace::new("chunks");
    let mut server = initialized(&workspace.root);
    still_serving(&mut server);
    for piece in pieces {
        server.send_raw(piece).unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }
    let got: Vec<Outcome> = answers(&mut server, expected).iter().map(outcome).collect();
    still_serving(&mut server);
    got
}

#[test]
fn what_follows_a_long_header_does_not_depend_on_how_the_bytes_arrive() {
    const MAX_HEADER: usize = 8 * 1024;
    // A runaway header, then a good frame.
    let runaway = vec![b'a'; MAX_HEADER + 1];
    let whole = [runaway.clone(), status(5)].concat();
    let at_once = fed_in(std::slice::from_ref(&whole), 2);
    let in_two = fed_in(&[runaway, status(5)], 2);
    assert_eq!(at_once, [(json!(5), None), (Value::Null, Some(-32700))]);
    assert_eq!(in_two, at_once);

    // A header block of exactly the limit, its blank line split off.
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": "debug/status"}).to_string();
    let length = format!("\r\nContent-Length: {}", body.len());
    let pad = MAX_HEADER - "X-Pad: ".len() - length.len();
    let header = format!("X-Pad: {}{length}", "p".repeat(pad));
    assert_eq!(header.len(), MAX_HEADER);
    let first = format!("{header}\r");
    let rest = format!("\n\r\n{body}");
    let at_once = fed_in(&[format!("{first}{rest}").into_bytes()], 1);
    let in_two = fed_in(&[first.into_bytes(), rest.into_bytes()], 1);
    assert_eq!(at_once, [(json!(6), None)]);
    assert_eq!(in_two, at_once);
}

#[test]
fn duplicate_content_length_is_refused_and_the_next_frame_still_arrives() {
    let workspace = Workspace::new("duplicate-length");
    let mut server = initialized(&workspace.root);
    for (first, second) in [(2, 200), (200, 2), (2, 2)] {
        let bad = format!("Content-Length: {first}\r\ncontent-length: {second}\r\n\r\n{{}}");
        server
            .send_raw(&[bad.into_bytes(), status(5)].concat())
            .unwrap();
        let got = answers(&mut server, 2);
        let outcomes: Vec<Outcome> = got.iter().map(outcome).collect();
        assert_eq!(
            outcomes,
            [(json!(5), None), (Value::Null, Some(-32700))],
            "{first}, {second}: {got:?}"
        );
        let message = got[1]["error"]["message"].as_str().unwrap();
        assert!(message.contains("Content-Length"), "{message}");
        still_serving(&mut server);
    }
}

#[test]
fn a_cursor_out_of_range_is_invalid_params_naming_cursor() {
    let workspace = Workspace::new("cursor-range");
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({ "problem": "p" }))
        .unwrap();
    let run = started["runId"].as_str().unwrap().to_string();
    let log = started["logFile"].as_str().unwrap().to_string();
    std::fs::write(
        &log,
        "{\"probeId\":\"p1\",\"n\":1}\n{\"probeId\":\"p1\",\"n\":2}\n",
    )
    .unwrap();
    // Page size 1, so there is a cursor this server gave out.
    let first = server
        .request("debug/logs", json!({ "run": run, "limit": 1 }))
        .unwrap();
    let given = first["nextCursor"].as_str().unwrap().to_string();
    let next = server
        .request("debug/logs", json!({ "run": run, "cursor": given }))
        .unwrap();
    assert_eq!(
        next["entries"][0]["line"], 2,
        "a given cursor still reads on"
    );

    for cursor in [
        "18446744073709551615:0", // past what a file offset can be
        "9223372036854775807:1",
        "4096:1",                 // past the end of this log
        "1:0",                    // inside the first line
        "0:18446744073709551615", // more lines than bytes before it
        "x",
    ] {
        let answer = server.request("debug/logs", json!({ "run": run, "cursor": cursor }));
        let Err(ClientError::Rpc(error)) = answer else {
            panic!("{cursor}: expected an error, got {answer:?}");
        };
        assert_eq!(error.code, -32602, "{cursor}: {error:?}");
        assert!(error.message.contains("`cursor`"), "{cursor}: {error:?}");
        assert_eq!(error.data, Some(json!({"field": "cursor"})), "{cursor}");
    }
    still_serving(&mut server);
}

/// `serve` with its address space capped at `limit_kib`.
fn spawn_capped(root: &std::path::Path, limit_kib: u64) -> Connection {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {limit_kib} && exec \"$0\" serve"))
        .arg(BIN)
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .stderr(Stdio::null());
    Connection::start(command).expect("sh starts")
}

#[test]
fn an_8_mib_frame_of_small_objects_is_refused_within_a_memory_cap() {
    let workspace = Workspace::new("memory-cap");
    // An idle server maps about 400 MiB (thread stacks, malloc arenas); the
    // frame parsed into JSON values needs over 1 GiB more.
    let mut server = spawn_capped(&workspace.root, 1024 * 1024);
    server.initialize(&workspace.root, json!({})).unwrap();
    let head = r#"{"jsonrpc":"2.0","id":2,"method":"debug/status","params":{"x":["#;
    let tail = "]}}";
    let unit = r#"{"a":0},"#;
    let count = (8 * 1024 * 1024 - head.len() - tail.len()) / unit.len();
    let mut body = String::with_capacity(8 * 1024 * 1024);
    body.push_str(head);
    body.push_str(&unit.repeat(count));
    body.pop();
    body.push_str(tail);
    assert!(body.len() <= 8 * 1024 * 1024);
    server.send_raw(&frame(body.as_bytes())).unwrap();
    drop(body);
    let got = answers(&mut server, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(outcome(&got[0]), (json!(2), Some(-32600)), "{got:?}");
    let message = got[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("arrays and objects"), "{message}");
    still_serving(&mut server);
    assert_eq!(server.shutdown().unwrap().code(), Some(0));
}
