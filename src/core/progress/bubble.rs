//! The bubble a view deserves, by the seed's priority.

use super::activity::ActivitySource;
use super::snapshot::{Goal, GoalStatus, Todo, TodoStatus};
use super::view::ProgressView;
use serde::{Deserialize, Serialize};

/// Which rule produced a bubble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BubbleKind {
    Blocked,
    Todos,
    Goal,
    Activity,
}

/// What an editor shows for a session: a title, an optional measured
/// percentage and an optional second line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bubble {
    pub kind: BubbleKind,
    pub title: String,
    /// Present only when something was measured; never for activity lines.
    pub percent: Option<u8>,
    /// Completed todo count (todo bubbles only).
    pub completed: Option<u32>,
    /// Total todo count (todo bubbles only).
    pub total: Option<u32>,
    pub line: Option<String>,
    /// For activity bubbles: whether `line` is a phase line (`phase`, titled
    /// "Current step") or the model's own words (`output`, "Latest
    /// output"); null for the other kinds.
    pub source: Option<ActivitySource>,
}
/// Floor of `part * 100 / whole`, so a percentage never rounds up past the data.
fn floor_percent(part: u32, whole: u32) -> Option<u8> {
    if whole == 0 {
        return None;
    }
    let percent = (u64::from(part.min(whole)) * 100) / u64::from(whole);
    u8::try_from(percent).ok()
}

fn count_u32(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}

fn todos_bubble(todos: &[Todo]) -> Option<Bubble> {
    let total = count_u32(todos.len());
    let completed = count_u32(
        todos
            .iter()
            .filter(|todo| todo.status == TodoStatus::Completed)
            .count(),
    );
    let percent = floor_percent(completed, total)?;
    let in_progress: Vec<&Todo> = todos
        .iter()
        .filter(|todo| todo.status == TodoStatus::InProgress)
        .collect();
    // Name a task only when the naming is unambiguous.
    let title = match in_progress.as_slice() {
        [] => "Todo list".to_string(),
        [single] => single
            .active_form
            .clone()
            .unwrap_or_else(|| single.content.clone()),
        several => format!("{} tasks in progress", several.len()),
    };
    Some(Bubble {
        kind: BubbleKind::Todos,
        title,
        percent: Some(percent),
        completed: Some(completed),
        total: Some(total),
        line: None,
        source: None,
    })
}

fn blocked_bubble(goal: &Goal) -> Bubble {
    Bubble {
        kind: BubbleKind::Blocked,
        title: goal.objective.clone(),
        percent: None,
        completed: None,
        total: None,
        line: Some(
            goal.blocked_reason
                .clone()
                .unwrap_or_else(|| "blocked".to_string()),
        ),
        source: None,
    }
}

fn goal_bubble(goal: &Goal) -> Bubble {
    let budget_line = match (goal.rounds_used, goal.round_budget) {
        (Some(used), Some(budget)) => Some(format!("round {used}/{budget}")),
        (Some(used), None) => Some(format!("round {used}")),
        (None, Some(budget)) => Some(format!("budget {budget} rounds")),
        (None, None) => None,
    };
    let (percent, line) = if goal.status == GoalStatus::Complete {
        // The harness itself declared the goal done; that is a measurement.
        (
            Some(100),
            budget_line.or_else(|| Some("complete".to_string())),
        )
    } else {
        let percent = match (goal.rounds_used, goal.round_budget) {
            (Some(used), Some(budget)) => floor_percent(used, budget),
            _ => None,
        };
        (percent, budget_line)
    };
    Bubble {
        kind: BubbleKind::Goal,
        title: goal.objective.clone(),
        percent,
        completed: None,
        total: None,
        line,
        source: None,
    }
}

/// The bubble a view deserves, by priority: blocked goal, todo list, goal
/// budget, then an activity line without a percentage; `None` when there is
/// nothing to say.
pub fn bubble_for(view: &ProgressView) -> Option<Bubble> {
    if let Some(goal) = view.goal.as_ref() {
        if goal.status == GoalStatus::Blocked {
            return Some(blocked_bubble(goal));
        }
    }
    if let Some(bubble) = view.todos.as_deref().and_then(todos_bubble) {
        return Some(bubble);
    }
    if let Some(goal) = view.goal.as_ref() {
        return Some(goal_bubble(goal));
    }
    view.activity.as_ref().map(|activity| Bubble {
        kind: BubbleKind::Activity,
        title: activity.source.title().to_string(),
        percent: None,
        completed: None,
        total: None,
        line: Some(activity.text.clone()),
        source: Some(activity.source),
    })
}
