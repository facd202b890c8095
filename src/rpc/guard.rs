//! A tower layer around the LSP service that keeps the server serving:
//! a panicking handler is answered with `-32603` (its id released for reuse),
//! injected frame errors are answered, so is a request for an unknown `$/`
//! method (`-32601`), params-less calls of our methods get `{}` so every
//! field's own default applies, and `exit` is recorded for the exit code.

use super::errors;
use super::framing::FRAME_ERROR_METHOD;
use crate::engine::owner::panic_message;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, Id, Request, Response};

/// Method prefixes of protocol v1; their params default to `{}`.
const OUR_PREFIXES: &[&str] = &["debug/", "turn/", "progress/", "agents/", "tools/"];

pub struct Guard<S> {
    inner: S,
    exit_seen: Arc<AtomicBool>,
    /// Ids whose handler panicked: the service still counts them as pending
    /// (its cleanup was unwound), so they are cancelled before the next call.
    leaked: Arc<Mutex<Vec<Id>>>,
}

impl<S> Guard<S> {
    pub fn new(inner: S, exit_seen: Arc<AtomicBool>) -> Self {
        Guard {
            inner,
            exit_seen,
            leaked: Arc::default(),
        }
    }
}

impl<S> Service<Request> for Guard<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if request.method() == FRAME_ERROR_METHOD {
            return futures::future::ok(Some(frame_error_response(request))).boxed();
        }
        if request.method() == "exit" {
            self.exit_seen.store(true, Ordering::SeqCst);
        }
        self.release_leaked_ids();
        let request = with_default_params(request);
        let leaked = self.leaked.clone();
        let id = request.id().cloned();
        let method = request.method().to_string();
        let call = self.inner.call(request);
        async move {
            match AssertUnwindSafe(call).catch_unwind().await {
                // tower-lsp-server drops the "method not found" answer of
                // every `$/` method, even a request's: a request is always
                // answered.
                Ok(Ok(None)) if method.starts_with("$/") && id.is_some() => {
                    Ok(id.map(|id| Response::from_error(id, method_not_found(&method))))
                }
                Ok(response) => response,
                Err(panic) => {
                    let message = panic_message(&*panic);
                    tracing::error!("the handler of {method} panicked: {message}");
                    leaked.lock().map(|mut ids| ids.extend(id.clone())).ok();
                    Ok(id.map(|id| {
                        Response::from_error(
                            id,
                            errors::internal(format!("the handler of {method} failed: {message}")),
                        )
                    }))
                }
            }
        }
        .boxed()
    }
}

impl<S> Guard<S>
where
    S: Service<Request, Response = Option<Response>>,
{
    fn release_leaked_ids(&mut self) {
        let leaked = self
            .leaked
            .lock()
            .map(|mut ids| std::mem::take(&mut *ids))
            .unwrap_or_default();
        for id in leaked.into_iter().filter(|id| *id != Id::Null) {
            let cancel = Request::build("$/cancelRequest")
                .params(json!({ "id": id }))
                .finish();
            // The service answers a cancel at once.
            let _ = self.inner.call(cancel).now_or_never();
        }
    }
}

/// The answer tower-lsp-server gives any other unknown method.
fn method_not_found(method: &str) -> Error {
    let mut error = Error::method_not_found();
    error.data = Some(Value::String(method.to_string()));
    error
}

fn frame_error_response(request: Request) -> Response {
    let (_, id, params) = request.into_parts();
    let params = params.unwrap_or(Value::Null);
    let code = params["code"].as_i64().unwrap_or(errors::PARSE_ERROR);
    let message = params["message"].as_str().unwrap_or("Parse error");
    Response::from_error(id.unwrap_or(Id::Null), errors::frame_error(code, message))
}

/// `debug/status` with no params (or `null`) means `{}`.
fn with_default_params(request: Request) -> Request {
    let ours = OUR_PREFIXES.iter().any(|p| request.method().starts_with(p));
    if !ours || request.params().is_some_and(|p| !p.is_null()) {
        return request;
    }
    let (method, id, _) = request.into_parts();
    let builder = Request::build(method).params(json!({}));
    match id {
        Some(id) => builder.id(id).finish(),
        None => builder.finish(),
    }
}
