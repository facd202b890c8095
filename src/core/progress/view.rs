//! The folded view of one session's progress and the folds that build it.

use super::activity::{lenient_activity, ActivityLine};
use super::snapshot::{Goal, Todo};
use serde::{Deserialize, Serialize};

/// Everything known about one session's progress.
///
/// Invariant kept by the folds: `todos` is never `Some` of an empty list, and
/// `activity` is only set while there is neither a todo list nor a goal.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressView {
    pub todos: Option<Vec<Todo>>,
    pub goal: Option<Goal>,
    /// The activity line of an unmeasured session (a line saved before it
    /// had a source reads as the model's words).
    #[serde(default, deserialize_with = "lenient_activity")]
    pub activity: Option<ActivityLine>,
}

impl ProgressView {
    /// True when the view holds something a percentage or budget can be read from.
    pub fn has_measure(&self) -> bool {
        self.todos.as_ref().is_some_and(|todos| !todos.is_empty()) || self.goal.is_some()
    }
}
/// Folds a todo snapshot.
///
/// `None` (no information) and an empty list leave the view unchanged, so an
/// empty write never blanks an existing bubble. A real list replaces the old
/// one and drops the activity line, which only serves unmeasured sessions.
pub fn fold_todos(mut view: ProgressView, todos: Option<Vec<Todo>>) -> ProgressView {
    if let Some(todos) = todos.filter(|todos| !todos.is_empty()) {
        view.todos = Some(todos);
        view.activity = None;
    }
    view
}

/// Folds a goal snapshot: `Some` replaces the goal, `None` (a null write) clears it.
pub fn fold_goal(mut view: ProgressView, goal: Option<Goal>) -> ProgressView {
    if goal.is_some() {
        view.activity = None;
    }
    view.goal = goal;
    view
}

/// Folds an activity line (read by `read_activity` or `tool_activity`).
///
/// Ignored while a todo list or goal exists: a measured session pays
/// nothing for the fallback.
pub fn fold_activity(mut view: ProgressView, line: ActivityLine) -> ProgressView {
    if !view.has_measure() {
        view.activity = Some(line);
    }
    view
}
