//! Context sync: leave a harness's outgoing message list holding exactly one,
//! current copy of the debug context message. A harness may inject a fresh copy
//! every prompt (so stale ones pile up) or resume without injecting at all (so
//! the model would read an old one); syncing where the request is assembled is
//! the one point no path into the model skips.

use serde_json::{json, Value};

pub const CONTEXT_TYPE: &str = "debug-mode-context";

#[derive(Debug, Clone, PartialEq)]
pub enum Synced {
    /// The list already says the right thing; send it as it is.
    Unchanged,
    Changed(Vec<Value>),
}

fn is_copy(message: &Value) -> bool {
    message.get("role").and_then(Value::as_str) == Some("custom")
        && message.get("customType").and_then(Value::as_str) == Some(CONTEXT_TYPE)
}

/// `content` is the current blackboard, or None when no session is active (so
/// every copy goes). The survivor is the last copy, rewritten in place; a
/// missing copy is appended at the end.
pub fn sync_context(messages: &[Value], content: Option<&str>) -> Synced {
    let copies: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| is_copy(m))
        .map(|(i, _)| i)
        .collect();
    let Some(content) = content else {
        if copies.is_empty() {
            return Synced::Unchanged;
        }
        return Synced::Changed(messages.iter().filter(|m| !is_copy(m)).cloned().collect());
    };
    let Some(&last) = copies.last() else {
        let mut out = messages.to_vec();
        out.push(json!({
            "role": "custom",
            "customType": CONTEXT_TYPE,
            "content": content,
            "display": false,
        }));
        return Synced::Changed(out);
    };
    let current = messages[last].get("content").and_then(Value::as_str) == Some(content);
    if copies.len() == 1 && current {
        return Synced::Unchanged;
    }
    let out = messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i == last || !is_copy(m))
        .map(|(i, m)| {
            let mut m = m.clone();
            if i == last {
                if let Some(obj) = m.as_object_mut() {
                    obj.insert("content".into(), Value::String(content.to_string()));
                }
            }
            m
        })
        .collect();
    Synced::Changed(out)
}
