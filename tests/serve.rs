//! `debug-sidecar serve` as a client meets it: the built binary, real
//! `Content-Length` frames over pipes, every error class, bad input, and the
//! exit codes of the LSP lifecycle.

mod support;

use debug_sidecar::rpc::client::{ClientError, Connection, RpcError};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use support::*;

fn rpc_error(result: Result<Value, ClientError>) -> RpcError {
    match result {
        Err(ClientError::Rpc(error)) => error,
        other => panic!("expected an error answer, got {other:?}"),
    }
}

/// The server still answers after whatever came before.
fn still_serving(server: &mut Connection) {
    let status = server
        .request("debug/status", json!({}))
        .expect("debug/status still answers");
    assert_eq!(status["sessionId"], "default");
}

/// The next answer with `id`, skipping notifications.
fn answer_with_id(server: &mut Connection, id: Value) -> Value {
    loop {
        let message = server.next_message(QUIET * 20).expect("an answer");
        if message.get("method").is_none() && message["id"] == id {
            return message;
        }
    }
}

#[test]
fn no_command_serves_protocol_v1_and_exits_0_after_shutdown() {
    let workspace = Workspace::new("default-command");
    let mut command = Command::new(BIN);
    command.current_dir(&workspace.root).stderr(Stdio::null());
    let mut server = Connection::start(command).unwrap();
    let init = server.initialize(&workspace.root, json!(null)).unwrap();
    assert_eq!(init["serverInfo"]["name"], "debug-sidecar");
    assert_eq!(
        init["capabilities"]["experimental"]["debugSidecar"]["protocolVersion"],
        1
    );
    still_serving(&mut server);
    assert_eq!(server.shutdown().unwrap().code(), Some(0));
}

#[test]
fn exit_without_shutdown_or_end_of_input_exits_1() {
    let workspace = Workspace::new("exit-codes");
    let mut server = initialized(&workspace.root);
    server.notify("exit", Value::Null).unwrap();
    assert_eq!(server.wait().unwrap().code(), Some(1));
    let server = initialized(&workspace.root);
    assert_eq!(server.wait().unwrap().code(), Some(1));
}

#[test]
fn a_whole_session_over_real_frames() {
    let workspace = Workspace::new("session");
    std::fs::write(workspace.root.join("run.sh"), "echo hi\n").unwrap();
    let mut server = initialized(&workspace.root);

    let started = server
        .request("debug/start", json!({ "problem": "prints hi, not hello" }))
        .unwrap();
    assert_eq!(started["stage"], "investigating");
    assert!(started["kickoff"]
        .as_str()
        .unwrap()
        .contains("prints hi, not hello"));
    let changed = server
        .wait_for("debug/stateChanged", QUIET * 10, |_| true)
        .expect("start is announced");
    assert_eq!(changed["revision"], started["revision"]);

    let placed = server
        .request(
            "debug/probeSnippet",
            json!({ "file": "run.sh", "message": "before echo", "variables": ["HOME"] }),
        )
        .unwrap();
    assert_eq!(placed["probe"]["id"], "p1");
    assert_eq!(placed["language"], "shell");
    assert!(placed["snippet"]
        .as_str()
        .unwrap()
        .contains("#region debug-probe p1"));

    let handed = server
        .request(
            "debug/handOff",
            json!({ "mode": "reproduce", "steps": ["Run `sh run.sh`."] }),
        )
        .unwrap();
    assert_eq!(handed["snapshot"]["stage"], "user_turn");
    assert!(handed["toolResult"].as_str().unwrap().contains("user_turn"));

    let proceeded = server.request("debug/proceed", json!({})).unwrap();
    assert_eq!(
        (proceeded["stage"].clone(), proceeded["round"].clone()),
        (json!("investigating"), json!(2))
    );
    assert!(proceeded["kickoff"]
        .as_str()
        .unwrap()
        .contains("pressed Proceed"));

    let done = server
        .request("debug/done", json!({ "note": "fixed" }))
        .unwrap();
    assert_eq!(done["stage"], "cleaning_up");
    // The probe was never pasted: the cleanup scan finds nothing left.
    let stop = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stop["decision"], "allow");
    assert!(stop["notice"]
        .as_str()
        .unwrap()
        .contains("Cleanup verified"));
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["active"], false);
    assert_eq!(server.shutdown().unwrap().code(), Some(0));
}

#[test]
fn pipelined_requests_apply_in_arrival_order() {
    let workspace = Workspace::new("order");
    let mut server = initialized(&workspace.root);
    let messages = [
        json!({"jsonrpc": "2.0", "id": 10, "method": "debug/start", "params": {"problem": "p"}}),
        json!({"jsonrpc": "2.0", "id": 11, "method": "debug/handOff",
               "params": {"mode": "reproduce", "steps": ["s"]}}),
        json!({"jsonrpc": "2.0", "id": 12, "method": "debug/proceed"}),
        json!({"jsonrpc": "2.0", "id": 13, "method": "debug/status"}),
    ];
    let bytes: Vec<u8> = messages
        .iter()
        .flat_map(|m| frame(m.to_string().as_bytes()))
        .collect();
    server.send_raw(&bytes).unwrap();
    for id in 10..=12 {
        let answer = server
            .answer(&json!(id))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(answer.is_object(), "{id}: {answer}");
    }
    let status = server.answer(&json!(13)).unwrap();
    assert_eq!(
        (status["round"].clone(), status["revision"].clone()),
        (json!(2), json!(3))
    );
}

#[test]
fn an_illegal_command_says_why_and_what_is_possible() {
    let workspace = Workspace::new("illegal");
    let mut server = initialized(&workspace.root);
    let error = rpc_error(server.request("debug/proceed", json!({})));
    assert_eq!(error.code, -32050);
    assert!(
        error.message.contains("no debug session is active"),
        "{}",
        error.message
    );
    assert_eq!(
        error.data,
        Some(json!({"command": "proceed", "stage": null, "legal": ["start"]}))
    );

    server
        .request("debug/start", json!({ "problem": "p" }))
        .unwrap();
    let error = rpc_error(server.request("debug/start", json!({ "problem": "again" })));
    assert_eq!(error.code, -32050);
    assert!(
        error.message.contains("a debug session is already active"),
        "{}",
        error.message
    );
    let data = error.data.unwrap();
    assert_eq!(data["stage"], "investigating");
    assert!(data["legal"]
        .as_array()
        .unwrap()
        .contains(&json!("handOff")));
    still_serving(&mut server);
}

#[test]
fn bad_params_are_answered_naming_the_field() {
    let workspace = Workspace::new("params");
    let mut server = initialized(&workspace.root);
    let cases = [
        (
            "debug/start",
            json!({ "problem": 5 }),
            "`problem`",
            json!("problem"),
        ),
        (
            "debug/start",
            json!({}),
            "missing field `problem`",
            json!("problem"),
        ),
        (
            "debug/start",
            json!({ "problem": "p", "problme": 1 }),
            "unknown field `problme`",
            json!("problme"),
        ),
        ("debug/start", json!([1]), "must be an object", Value::Null),
        (
            "debug/handOff",
            json!({ "mode": "reproduce", "steps": ["a", 7] }),
            "`steps[1]`",
            json!("steps[1]"),
        ),
        (
            "debug/handOff",
            json!({ "mode": "dance", "steps": [] }),
            "`mode`",
            json!("mode"),
        ),
        (
            "debug/status",
            json!({ "sessionId": "../../etc" }),
            "`sessionId`",
            json!("sessionId"),
        ),
        (
            "debug/status",
            json!({ "sessionId": 3 }),
            "`sessionId`",
            json!("sessionId"),
        ),
        (
            "debug/probeSnippet",
            json!({ "file": "report.cob" }),
            "`language`",
            json!("language"),
        ),
    ];
    for (method, params, words, field) in cases {
        if method == "debug/probeSnippet" {
            server
                .request("debug/start", json!({ "problem": "p" }))
                .unwrap();
        }
        let error = rpc_error(server.request(method, params.clone()));
        assert_eq!(error.code, -32602, "{method} {params}: {error:?}");
        assert!(
            error.message.contains(words),
            "{method} {params}: {}",
            error.message
        );
        assert_eq!(error.data.unwrap()["field"], field, "{method} {params}");
        still_serving(&mut server);
    }
    // A refused snippet leaves the ledger as it was.
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["probes"]["list"], json!([]));
}

#[test]
fn lifecycle_errors_and_unknown_methods() {
    let workspace = Workspace::new("lifecycle");
    let mut server = spawn(&workspace.root);
    let error = rpc_error(server.request("debug/status", json!({})));
    assert_eq!(error.code, -32002, "{error:?}");
    server.initialize(&workspace.root, json!({})).unwrap();
    let error = rpc_error(server.request("debug/fly", json!({})));
    assert_eq!(error.code, -32601, "{error:?}");
    still_serving(&mut server);
    server.request("shutdown", Value::Null).unwrap();
    let error = rpc_error(server.request("debug/status", json!({})));
    assert_eq!(error.code, -32600, "{error:?}");
    server.notify("exit", Value::Null).unwrap();
    assert_eq!(server.wait().unwrap().code(), Some(0));
}

#[test]
fn bad_initialization_options_name_the_field() {
    let workspace = Workspace::new("init-options");
    let mut server = spawn(&workspace.root);
    let error = rpc_error(server.initialize(&workspace.root, json!({ "sessionId": 5 })));
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("initializationOptions"),
        "{}",
        error.message
    );
    assert!(error.message.contains("`sessionId`"), "{}", error.message);
}

#[test]
fn malformed_frames_are_answered_and_the_server_keeps_serving() {
    let workspace = Workspace::new("frames");
    let mut server = initialized(&workspace.root);
    let ten_mb = vec![b' '; 10 * 1024 * 1024];
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "bad Content-Length",
            b"Content-Length: ten\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "no Content-Length",
            b"Content-Type: x\r\n\r\n".to_vec(),
            -32700,
        ),
        (
            "invalid JSON",
            frame(b"{\"jsonrpc\": \"2.0\", \"id\": "),
            -32700,
        ),
        ("invalid UTF-8", frame(&[b'"', 0xc3, 0x28, b'"']), -32700),
        (
            "a batch",
            frame(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"debug/status\"}]"),
            -32600,
        ),
        (
            "not JSON-RPC",
            frame(b"{\"id\":4,\"method\":\"debug/status\"}"),
            -32600,
        ),
        ("a 10 MB body", frame(&ten_mb), -32600),
    ];
    for (what, bytes, code) in cases {
        server.send_raw(&bytes).unwrap();
        let expected_id = if what == "not JSON-RPC" {
            json!(4)
        } else {
            Value::Null
        };
        let answer = answer_with_id(&mut server, expected_id);
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        still_serving(&mut server);
    }
}

#[test]
fn two_requests_with_the_same_id_are_both_answered() {
    let workspace = Workspace::new("same-id");
    let mut server = initialized(&workspace.root);
    let status = json!({"jsonrpc": "2.0", "id": 7, "method": "debug/status"});
    let body = status.to_string();
    server
        .send_raw(&[frame(body.as_bytes()), frame(body.as_bytes())].concat())
        .unwrap();
    for _ in 0..2 {
        let answer = answer_with_id(&mut server, json!(7));
        // The second is refused only while the first is still pending.
        let ok = answer.get("result").is_some() || answer["error"]["code"] == -32600;
        assert!(ok, "{answer}");
    }
    still_serving(&mut server);
}

#[test]
fn a_panic_is_answered_as_internal_error_and_survived() {
    let workspace = Workspace::new("panic");
    let mut server = initialized(&workspace.root);
    server
        .request("debug/start", json!({ "problem": "p" }))
        .unwrap();
    for place in ["handler", "engine", "handler"] {
        // The same id each time: a panicked request's id is released.
        server
            .send(
                &json!({"jsonrpc": "2.0", "id": "boom", "method": "debugSidecar/testPanic",
                          "params": {"where": place}}),
            )
            .unwrap();
        let answer = answer_with_id(&mut server, json!("boom"));
        assert_eq!(answer["error"]["code"], -32603, "{place}: {answer}");
    }
    let status = server.request("debug/status", json!({})).unwrap();
    assert_eq!(status["stage"], "investigating", "the session survived");
    assert_eq!(server.shutdown().unwrap().code(), Some(0));
}

#[test]
fn turn_state_notifications_only_report_changes() {
    let workspace = Workspace::new("turn");
    let mut server = initialized(&workspace.root);
    server
        .notify(
            "turn/event",
            json!({ "kind": "turnStart", "source": "user" }),
        )
        .unwrap();
    for _ in 0..1000 {
        server
            .notify("turn/event", json!({ "kind": "content" }))
            .unwrap();
    }
    server
        .notify("turn/event", json!({ "kind": "turnEnd" }))
        .unwrap();
    let state = server.request("turn/state", json!({})).unwrap();
    assert_eq!(
        state,
        json!({"sessionId": "default", "state": "idle", "label": "idle", "detail": null})
    );
    let states: Vec<Value> = server
        .drain(QUIET)
        .into_iter()
        .filter(|m| m["method"] == "turn/stateChanged")
        .map(|m| m["params"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [json!("connecting"), json!("streaming"), json!("idle")]
    );
}

#[test]
fn a_notification_with_bad_params_is_dropped_not_answered() {
    let workspace = Workspace::new("bad-notification");
    let mut server = initialized(&workspace.root);
    server
        .notify("turn/event", json!({ "kind": "dance" }))
        .unwrap();
    server
        .notify("progress/todos", json!({ "todos": "not a list" }))
        .unwrap();
    still_serving(&mut server);
    assert!(server.drain(QUIET).is_empty());
}

#[test]
fn stdin_that_is_no_pipe_and_stdout_that_is_a_file_work_too() {
    // Neither is a pipe: stdin (a socket) is read as a socket and stdout
    // (a file) is written in place.
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let workspace = Workspace::new("not-pipes");
    let uri = format!("file://{}", workspace.root.display());
    let output = workspace.root.join("out.bin");
    let (mut client, server_end) = UnixStream::pair().unwrap();
    let mut child = Command::new(BIN)
        .arg("serve")
        .current_dir(&workspace.root)
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(server_end)))
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let answers = |count: usize| -> Vec<Value> {
        for _ in 0..200 {
            let bytes = std::fs::read(&output).unwrap();
            let mut reader = std::io::BufReader::new(bytes.as_slice());
            let mut messages = Vec::new();
            while let Ok(Some(message)) = debug_sidecar::rpc::client::read_frame(&mut reader) {
                messages.push(message);
            }
            if messages.len() >= count {
                return messages;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the server did not answer");
    };
    let mut send = |message: Value| {
        client
            .write_all(&frame(message.to_string().as_bytes()))
            .unwrap()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"capabilities": {}, "workspaceFolders": [{"uri": uri, "name": "w"}]}}));
    answers(1);
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "debug/status"}));
    assert_eq!(answers(2)[1]["result"]["active"], false);
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    answers(3);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// The frames in `chunk`, or why it does not end at a frame's end.
fn whole_frames(chunk: &[u8]) -> Result<usize, String> {
    let (mut at, mut count) = (0, 0);
    while at < chunk.len() {
        let rest = &chunk[at..];
        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
            return Err(format!(
                "a header without its end: {:?}",
                String::from_utf8_lossy(rest)
            ));
        };
        let header = String::from_utf8_lossy(&rest[..end]);
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("not a header: {header:?}"))?;
        if rest.len() < end + 4 + length {
            return Err(format!(
                "a frame cut after {} of its {length} body bytes: {header:?}",
                rest.len() - end - 4
            ));
        }
        at += end + 4 + length;
        count += 1;
    }
    Ok(count)
}

/// A `serve` whose stdin is a stream socket pair (as Node spawns a child)
/// and whose stdout is a socket pair of `kind`; 40 requests, each read as it
/// comes. Returns every read in arrival order.
fn over_socket_pairs(kind: rustix::net::SocketType) -> Vec<Vec<u8>> {
    use rustix::net::{socketpair, AddressFamily, SocketFlags};
    use std::io::{Read, Write};
    let workspace = Workspace::new("socket-pairs");
    let uri = format!("file://{}", workspace.root.display());
    let pair = |kind| socketpair(AddressFamily::UNIX, kind, SocketFlags::CLOEXEC, None).unwrap();
    let (to_server, server_in) = pair(rustix::net::SocketType::STREAM);
    let (from_server, server_out) = pair(kind);
    let (mut to_server, mut from_server) = (
        std::fs::File::from(to_server),
        std::fs::File::from(from_server),
    );
    let mut child = Command::new(BIN)
        .arg("serve")
        .current_dir(&workspace.root)
        .stdin(Stdio::from(server_in))
        .stdout(Stdio::from(server_out))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reads = Vec::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut exchange = |message: Value| {
        to_server
            .write_all(&frame(message.to_string().as_bytes()))
            .unwrap();
        if message.get("id").is_none() {
            return;
        }
        // Requests are answered in order; notifications may come between.
        let answer = format!("\"id\":{}", message["id"]);
        loop {
            let read = from_server.read(&mut buffer).expect("an answer");
            assert!(read > 0, "the server closed its output");
            reads.push(buffer[..read].to_vec());
            if String::from_utf8_lossy(&buffer[..read]).contains(&answer) {
                return;
            }
        }
    };
    exchange(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"capabilities": {}, "workspaceFolders": [{"uri": uri, "name": "w"}]}}));
    exchange(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    for id in 2..40 {
        exchange(json!({"jsonrpc": "2.0", "id": id, "method": "debug/status"}));
    }
    exchange(json!({"jsonrpc": "2.0", "id": 40, "method": "shutdown"}));
    exchange(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    reads
}

#[test]
fn over_socket_pairs_as_node_spawns_a_child_it_serves() {
    let reads = over_socket_pairs(rustix::net::SocketType::STREAM);
    let bytes = reads.concat();
    let mut reader = std::io::BufReader::new(bytes.as_slice());
    let mut answered = 0;
    while let Ok(Some(message)) = debug_sidecar::rpc::client::read_frame(&mut reader) {
        answered += usize::from(message.get("id").is_some());
    }
    assert_eq!(answered, 40);
}

#[test]
fn each_frame_leaves_in_one_write() {
    // A client waiting in read() wakes at the first write, so a header
    // written before its body reaches it alone; vscode-jsonrpc then re-arms
    // a timer for the missing body every 10 s, forever if the server dies
    // in between. A packet socket keeps each write apart, so every read here
    // is one write of the server's.
    for read in over_socket_pairs(rustix::net::SocketType::SEQPACKET) {
        if let Err(why) = whole_frames(&read) {
            panic!("a write ended inside a frame: {why}");
        }
    }
}
