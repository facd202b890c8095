//! What a body must be before the server sees it.

use super::{BadFrame, FRAME_ERROR_METHOD};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Request, Response};

/// A body the server can take: UTF-8, JSON, one JSON-RPC 2.0 message that
/// tower-lsp-server itself will parse. It is parsed here with the server's
/// own types, because a body the server fails to parse ends its input
/// stream (an id that is not an i64, a lone surrogate, deep nesting).
pub(super) fn check_body(body: Vec<u8>) -> Result<Vec<u8>, BadFrame> {
    let text = std::str::from_utf8(&body)
        .map_err(|e| BadFrame::parse(format!("message body is not UTF-8: {e}")))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| BadFrame::parse(format!("message body is not JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "batches are not supported"
        } else {
            "a message must be a JSON object"
        };
        return Err(BadFrame::invalid(Value::Null, what));
    };
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(BadFrame::invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    match object.get("method") {
        Some(Value::String(method)) if method == FRAME_ERROR_METHOD => {
            Err(BadFrame::invalid(id, "reserved method name"))
        }
        Some(Value::String(_)) => match serde_json::from_str::<Request>(text) {
            Ok(_) => Ok(body),
            Err(e) if !valid_id(&id) => Err(BadFrame::invalid(
                Value::Null,
                format!("`id` must be an integer, a string or null ({e})"),
            )),
            Err(e) => Err(BadFrame::invalid(
                id,
                format!("not a JSON-RPC 2.0 request: {e}"),
            )),
        },
        Some(_) => Err(BadFrame::invalid(id, "`method` must be a string")),
        // A response to a request of ours.
        None if object.contains_key("result") || object.contains_key("error") => {
            serde_json::from_str::<Response>(text)
                .map(|_| body)
                .map_err(|e| {
                    BadFrame::invalid(Value::Null, format!("not a JSON-RPC 2.0 response: {e}"))
                })
        }
        None => Err(BadFrame::invalid(id, "neither a request nor a response")),
    }
}

/// The ids the server's own types accept.
pub(super) fn valid_id(id: &Value) -> bool {
    id.is_null() || id.is_string() || id.as_i64().is_some()
}
