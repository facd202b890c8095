//! The folded view of one session's progress and the folds that build it.

use super::snapshot::{Goal, Todo};
use super::MAX_ACTIVITY_CHARS;
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
    pub activity: Option<String>,
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

/// Collapses whitespace to one line and caps its length; `None` when blank.
pub(super) fn normalize_activity(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let single_line = words.join(" ");
    if single_line.chars().count() <= MAX_ACTIVITY_CHARS {
        return Some(single_line);
    }
    let mut cut: String = single_line.chars().take(MAX_ACTIVITY_CHARS - 1).collect();
    cut.push('\u{2026}');
    Some(cut)
}

/// Folds an activity line.
///
/// Ignored while a todo list or goal exists (a measured session pays nothing
/// for the fallback) and when the line is blank (silence beats boilerplate).
pub fn fold_activity(mut view: ProgressView, line: &str) -> ProgressView {
    if view.has_measure() {
        return view;
    }
    if let Some(line) = normalize_activity(line) {
        view.activity = Some(line);
    }
    view
}
