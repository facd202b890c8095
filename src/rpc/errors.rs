//! JSON-RPC error codes of protocol v1 and the mapping from engine errors.
//! Every code is listed in `protocol/README.md`.

use crate::core::error::DomainError;
use crate::engine::owner::JobFailed;
use crate::engine::{EngineError, StateDirError, StateDirOrigin};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// The command is not legal in the session's stage; `data` has
/// `{command, stage, legal}`.
pub const ILLEGAL_COMMAND: i64 = -32050;
/// The workspace or state directory could not be read or written.
pub const WORKSPACE_ERROR: i64 = -32051;

fn error(code: i64, message: impl Into<String>, data: Option<Value>) -> Error {
    Error {
        code: ErrorCode::from(code),
        message: message.into().into(),
        data,
    }
}

/// Params as the method's type, or `-32602` naming the field that is wrong.
pub fn parse_params<P: DeserializeOwned>(params: Value) -> Result<P, Error> {
    // Every method takes named params; a positional array would bind by
    // field order, which nothing documents.
    if !params.is_object() {
        return Err(error(
            INVALID_PARAMS,
            "invalid params: `params` must be an object of named fields",
            Some(json!({ "field": Value::Null })),
        ));
    }
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let (message, field) = if path == "." {
            // serde names a missing or unknown field only in its message.
            let named = ["missing field `", "unknown field `"]
                .iter()
                .find_map(|prefix| inner.strip_prefix(prefix))
                .and_then(|rest| rest.split('`').next())
                .map_or(Value::Null, |name| Value::String(name.to_string()));
            (format!("invalid params: {inner}"), named)
        } else {
            (
                format!("invalid params: `{path}`: {inner}"),
                Value::String(path),
            )
        };
        error(INVALID_PARAMS, message, Some(json!({ "field": field })))
    })
}

pub fn engine_error(e: EngineError) -> Error {
    match e {
        EngineError::Domain(DomainError::Illegal {
            command,
            stage,
            ref legal,
        }) => error(
            ILLEGAL_COMMAND,
            e.to_string(),
            Some(json!({ "command": command, "stage": stage, "legal": legal })),
        ),
        EngineError::Domain(DomainError::Invalid {
            ref field,
            ref reason,
        }) => error(
            INVALID_PARAMS,
            format!("invalid params: `{field}`: {reason}"),
            Some(json!({ "field": field })),
        ),
        EngineError::Domain(DomainError::Refused { command, .. }) => error(
            ILLEGAL_COMMAND,
            e.to_string(),
            Some(json!({ "command": command, "refused": true })),
        ),
        EngineError::Io(_) | EngineError::Store(_) => error(WORKSPACE_ERROR, e.to_string(), None),
    }
}

/// A state directory that would be the workspace: `-32602` naming
/// `stateDir` when the client gave it, `-32051` when the environment did.
pub fn state_dir_error(e: StateDirError) -> Error {
    match e.origin {
        StateDirOrigin::Given => error(
            INVALID_PARAMS,
            format!(
                "invalid initializationOptions: `stateDir`: {:?} {}",
                e.given, e.reason
            ),
            Some(json!({ "field": "stateDir" })),
        ),
        StateDirOrigin::Env => error(WORKSPACE_ERROR, e.to_string(), None),
    }
}

pub fn job_failed(e: JobFailed) -> Error {
    error(INTERNAL_ERROR, e.to_string(), None)
}

pub fn internal(message: impl Into<String>) -> Error {
    error(INTERNAL_ERROR, message, None)
}

pub fn frame_error(code: i64, message: impl Into<String>) -> Error {
    error(code, message, None)
}
