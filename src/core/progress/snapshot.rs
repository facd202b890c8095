//! What harnesses write: todo lists and goals, read tolerantly from raw JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One todo item's state. Only `Completed` counts towards the percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One entry of a harness's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
    /// Present-tense phrasing ("Running tests") preferred for the bubble title.
    pub active_form: Option<String>,
}

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    Active,
    Blocked,
    Complete,
}

/// A harness's current goal with its optional round budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    pub objective: String,
    pub status: GoalStatus,
    pub blocked_reason: Option<String>,
    pub rounds_used: Option<u32>,
    pub round_budget: Option<u32>,
}
/// A trimmed, non-empty string field, or `None`.
fn non_blank_str(value: Option<&Value>) -> Option<String> {
    let text = value?.as_str()?.trim();
    if text.is_empty() {
        None
    } else {
        Some(text.to_string())
    }
}

/// The first of `keys` holding a non-blank string (accepts camelCase and snake_case).
fn non_blank_field(object: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| non_blank_str(object.get(*key)))
}

/// The first of `keys` holding a whole number that fits in `u32`.
fn u32_field(object: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<u32> {
    keys.iter().find_map(|key| {
        let number = object.get(*key)?.as_u64()?;
        u32::try_from(number).ok()
    })
}

/// Reads one todo entry; `None` when it has no usable `content` (Gemini
/// CLI's `write_todos` calls it `description`) or was cancelled.
fn read_todo(raw: &Value) -> Option<Todo> {
    let object = raw.as_object()?;
    let content = non_blank_field(object, &["content", "description"])?;
    if object.get("status").and_then(Value::as_str) == Some("cancelled") {
        return None;
    }
    // Anything but an exact known status counts as pending: never over-report.
    let status = match object.get("status").and_then(Value::as_str) {
        Some("completed") => TodoStatus::Completed,
        Some("in_progress") => TodoStatus::InProgress,
        _ => TodoStatus::Pending,
    };
    Some(Todo {
        content,
        status,
        active_form: non_blank_field(object, &["activeForm", "active_form"]),
    })
}

/// Reads a harness todo list.
///
/// Malformed entries are skipped. A non-empty list whose entries are all
/// malformed is `None` (no information), not an empty list ("nothing to do").
pub fn read_todos(raw: &[Value]) -> Option<Vec<Todo>> {
    let todos: Vec<Todo> = raw.iter().filter_map(read_todo).collect();
    if todos.is_empty() && !raw.is_empty() {
        None
    } else {
        Some(todos)
    }
}

/// Reads a harness goal.
///
/// `None` when the value is not an object or has no non-blank `objective`
/// (nothing to name). Every other field is optional; an unknown status is
/// `Active`, so a goal is never reported as blocked or complete by accident.
pub fn read_goal(raw: &Value) -> Option<Goal> {
    let object = raw.as_object()?;
    let objective = non_blank_field(object, &["objective"])?;
    let status = match object.get("status").and_then(Value::as_str) {
        Some("blocked") => GoalStatus::Blocked,
        Some("complete") => GoalStatus::Complete,
        _ => GoalStatus::Active,
    };
    Some(Goal {
        objective,
        status,
        blocked_reason: non_blank_field(object, &["blockedReason", "blocked_reason"]),
        rounds_used: u32_field(object, &["roundsUsed", "rounds_used"]),
        round_budget: u32_field(object, &["roundBudget", "round_budget"]),
    })
}
