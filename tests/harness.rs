//! The server driven in process, through its tower service, as ruff and
//! Biome test theirs: no pipes, no framing. Dropping the harness performs
//! `shutdown` and `exit` and fails if any server message went unread.
//! Responses and notifications are snapshot-tested.

mod support;

use debug_sidecar::protocol::{catalogue, Kind};
use debug_sidecar::rpc::guard::Guard;
use debug_sidecar::rpc::server::{self, Backend};
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use support::{redact, Workspace};
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::Request;
use tower_lsp_server::{ClientSocket, LspService};

struct Harness {
    service: Guard<LspService<Backend>>,
    socket: ClientSocket,
    workspace: Workspace,
    next_id: i64,
}

impl Harness {
    async fn new() -> Self {
        let (service, socket, _) = server::build();
        let mut harness = Harness {
            service: Guard::new(service, Arc::new(AtomicBool::new(false))),
            socket,
            workspace: Workspace::new("harness"),
            next_id: 0,
        };
        let uri = format!("file://{}", harness.workspace.root.display());
        let init = harness
            .call(
                "initialize",
                json!({"capabilities": {}, "workspaceFolders": [{"uri": uri, "name": "w"}]}),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "debug-sidecar");
        harness.notify("initialized", json!({})).await;
        harness
    }

    /// A request; returns the whole response, redacted.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let request = Request::build(method.to_string())
            .params(params)
            .id(self.next_id)
            .finish();
        let response = self
            .service
            .ready()
            .await
            .unwrap()
            .call(request)
            .await
            .unwrap()
            .expect("a request is answered");
        redact(
            &serde_json::to_value(response).unwrap(),
            &self.workspace.root,
        )
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let request = Request::build(method.to_string()).params(params).finish();
        let response = self
            .service
            .ready()
            .await
            .unwrap()
            .call(request)
            .await
            .unwrap();
        assert!(
            response.is_none(),
            "a notification was answered: {response:?}"
        );
    }

    /// Server-to-client messages until none arrives for a while.
    async fn notifications(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(Some(message)) =
            tokio::time::timeout(Duration::from_millis(200), self.socket.next()).await
        {
            out.push(redact(
                &serde_json::to_value(message).unwrap(),
                &self.workspace.root,
            ));
        }
        out
    }

    /// A request and the notifications it caused, as one exchange.
    async fn exchange(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params.clone()).await;
        let notifications = self.notifications().await;
        json!({ "request": { "method": method, "params": params }, "response": response,
                "notifications": notifications })
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        // Whatever the last call caused has had time to arrive.
        std::thread::sleep(Duration::from_millis(100));
        let unread: Vec<String> =
            std::iter::from_fn(|| self.socket.next().now_or_never().flatten())
                .map(|m| serde_json::to_string(&m).unwrap_or_default())
                .collect();
        let id = self.next_id + 1;
        futures::executor::block_on(async {
            let shutdown = Request::build("shutdown").id(id).finish();
            let service = self.service.ready().await.unwrap();
            let answer = service.call(shutdown).await.unwrap();
            assert!(answer.is_some_and(|r| r.is_ok()), "shutdown failed");
            let exit = Request::build("exit").finish();
            let service = self.service.ready().await.unwrap();
            assert!(service.call(exit).await.unwrap().is_none());
        });
        assert!(unread.is_empty(), "server messages nobody read: {unread:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_catalogued_method_is_served() {
    let mut harness = Harness::new().await;
    for spec in catalogue() {
        match spec.kind {
            Kind::Request => {
                let response = harness.call(spec.method, json!({})).await;
                assert_ne!(
                    response["error"]["code"], -32601,
                    "{} is not served",
                    spec.method
                );
            }
            Kind::ClientNotification => harness.notify(spec.method, json!({})).await,
            Kind::ServerNotification => {}
        }
    }
    harness.notifications().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_round_trip_of_a_session() {
    let mut harness = Harness::new().await;
    let mut exchanges = Vec::new();
    for (method, params) in [
        (
            "debug/start",
            json!({"problem": "The cart total is off by 10%."}),
        ),
        (
            "debug/handOff",
            json!({"mode": "reproduce", "steps": ["Add 3 items.", "Open the cart."]}),
        ),
        (
            "debug/proceed",
            json!({"observations": [{"text": "Total shows 60.00"}]}),
        ),
        ("debug/abort", json!({})),
    ] {
        exchanges.push(harness.exchange(method, params).await);
    }
    insta::assert_json_snapshot!("session_round_trip", exchanges);
}

#[tokio::test(flavor = "multi_thread")]
async fn error_answers() {
    let mut harness = Harness::new().await;
    let mut answers = Vec::new();
    for (method, params) in [
        ("debug/proceed", json!({})),
        ("debug/start", json!({"problem": ["a list"]})),
        ("debug/start", json!({"problem": "   "})),
        ("debug/status", json!({"sessionId": "../../etc"})),
        ("debug/nothing", json!({})),
    ] {
        answers.push(harness.exchange(method, params).await);
    }
    insta::assert_json_snapshot!("error_answers", answers);
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_and_subagent_notifications() {
    let mut harness = Harness::new().await;
    harness
        .notify("turn/event", json!({"kind": "turnStart", "source": "user"}))
        .await;
    harness
        .notify(
            "progress/todos",
            json!({"todos": [
                {"content": "Find the bug", "status": "completed"},
                {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing it"}
            ]}),
        )
        .await;
    harness
        .notify(
            "agents/event",
            json!({"id": "a1", "kind": "running", "type": "explore"}),
        )
        .await;
    harness
        .notify(
            "agents/event",
            json!({"id": "a1", "kind": "completed", "result": "found"}),
        )
        .await;
    harness
        .notify("turn/event", json!({"kind": "turnEnd"}))
        .await;
    let notifications = harness.notifications().await;
    insta::assert_json_snapshot!("progress_and_subagents", notifications);
}

#[tokio::test(flavor = "multi_thread")]
#[should_panic(expected = "server messages nobody read")]
async fn the_harness_fails_a_test_that_leaves_messages_unread() {
    let mut harness = Harness::new().await;
    harness.call("debug/start", json!({"problem": "p"})).await;
    // The `debug/stateChanged` it caused is never read.
}
