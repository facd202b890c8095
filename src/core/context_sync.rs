//! Context sync: leave a harness's outgoing message list holding exactly one,
//! current copy of the debug context message. A harness may inject a fresh copy
//! every prompt (so stale ones pile up) or resume without injecting at all (so
//! the model would read an old one); syncing where the request is assembled is
//! the one point no path into the model skips.
//!
//! The decision is a [`ContextPlan`] over the copies alone, so a client can
//! send only the copies it holds (`debug/context {held}`) instead of its
//! whole transcript, and apply the plan itself; `sync_context` applies the
//! same plan to a whole list.

use serde::Serialize;
use serde_json::{json, Value};

pub const CONTEXT_TYPE: &str = "debug-mode-context";

#[derive(Debug, Clone, PartialEq)]
pub enum Synced {
    /// The list already says the right thing; send it as it is.
    Unchanged,
    Changed(Vec<Value>),
}

/// What to do with the copies a list holds, each named by its index among
/// the copies (0 is the first copy in the list, whatever its position).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextPlan {
    /// The copies to remove.
    pub drop: Vec<usize>,
    /// The copy that stays, its content set to the current board (the last
    /// one); null when none stays.
    pub rewrite: Option<usize>,
    /// Append one copy with the current board at the end (the list held none).
    pub append: bool,
}

/// The plan for a list holding copies with these contents (in order), when
/// the board is `content` (None: no session is active, so every copy goes).
/// None when the list already holds exactly one current copy, or none and
/// no board.
pub fn plan(held: &[&str], content: Option<&str>) -> Option<ContextPlan> {
    let Some(content) = content else {
        return (!held.is_empty()).then(|| ContextPlan {
            drop: (0..held.len()).collect(),
            rewrite: None,
            append: false,
        });
    };
    let Some(last) = held.len().checked_sub(1) else {
        return Some(ContextPlan {
            drop: Vec::new(),
            rewrite: None,
            append: true,
        });
    };
    if last == 0 && held[0] == content {
        return None;
    }
    Some(ContextPlan {
        drop: (0..last).collect(),
        rewrite: Some(last),
        append: false,
    })
}

fn is_copy(message: &Value) -> bool {
    message.get("role").and_then(Value::as_str) == Some("custom")
        && message.get("customType").and_then(Value::as_str) == Some(CONTEXT_TYPE)
}

/// `content` is the current blackboard, or None when no session is active (so
/// every copy goes). The survivor is the last copy, rewritten in place; a
/// missing copy is appended at the end.
pub fn sync_context(messages: &[Value], content: Option<&str>) -> Synced {
    let held: Vec<&str> = messages
        .iter()
        .filter(|m| is_copy(m))
        .map(|m| m.get("content").and_then(Value::as_str).unwrap_or(""))
        .collect();
    // A copy whose content is not a string is never current.
    let current_is_string = messages
        .iter()
        .filter(|m| is_copy(m))
        .all(|m| m.get("content").is_some_and(Value::is_string));
    let plan = match plan(&held, content) {
        None if current_is_string => return Synced::Unchanged,
        None => ContextPlan {
            drop: Vec::new(),
            rewrite: Some(0),
            append: false,
        },
        Some(plan) => plan,
    };
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut copy_index = 0;
    for message in messages {
        if !is_copy(message) {
            out.push(message.clone());
            continue;
        }
        let index = copy_index;
        copy_index += 1;
        if plan.drop.contains(&index) {
            continue;
        }
        let mut message = message.clone();
        if plan.rewrite == Some(index) {
            if let (Some(obj), Some(content)) = (message.as_object_mut(), content) {
                obj.insert("content".into(), Value::String(content.to_string()));
            }
        }
        out.push(message);
    }
    if plan.append {
        if let Some(content) = content {
            out.push(json!({
                "role": "custom",
                "customType": CONTEXT_TYPE,
                "content": content,
                "display": false,
            }));
        }
    }
    Synced::Changed(out)
}
