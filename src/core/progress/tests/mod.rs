//! The progress rules, one test each, and properties of the fold.

use super::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn todo(content: &str, status: TodoStatus) -> Todo {
    Todo {
        content: content.to_string(),
        status,
        active_form: None,
    }
}

fn goal(status: GoalStatus) -> Goal {
    Goal {
        objective: "Ship the parser".to_string(),
        status,
        blocked_reason: None,
        rounds_used: None,
        round_budget: None,
    }
}

/// The model's words as an activity line.
fn line(text: &str) -> ActivityLine {
    ActivityLine {
        source: ActivitySource::Output,
        text: text.to_string(),
    }
}

fn said(text: &str) -> Option<ActivityLine> {
    Some(line(text))
}

fn todos_view(todos: Vec<Todo>) -> ProgressView {
    ProgressView {
        todos: Some(todos),
        ..ProgressView::default()
    }
}

fn raw_list() -> Value {
    json!([
        {"content": "Write tests", "status": "completed"},
        {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
        {"content": "Release", "status": "pending"}
    ])
}

mod activity;
mod properties;
mod reading;
mod tracker;

// ---- priority ----

#[test]
fn blocked_goal_outranks_todos_and_activity() {
    let mut blocked = goal(GoalStatus::Blocked);
    blocked.blocked_reason = Some("needs an API key".to_string());
    let view = ProgressView {
        todos: Some(vec![todo("a", TodoStatus::Completed)]),
        goal: Some(blocked),
        activity: said("reading files"),
    };
    let bubble = bubble_for(&view);
    assert_eq!(
        bubble,
        Some(Bubble {
            kind: BubbleKind::Blocked,
            title: "Ship the parser".to_string(),
            percent: None,
            completed: None,
            total: None,
            line: Some("needs an API key".to_string()),
            source: None,
        })
    );
}

#[test]
fn blocked_goal_without_reason_still_says_blocked() {
    let view = ProgressView {
        goal: Some(goal(GoalStatus::Blocked)),
        ..ProgressView::default()
    };
    let bubble = bubble_for(&view);
    assert_eq!(bubble.and_then(|b| b.line), Some("blocked".to_string()));
}

#[test]
fn todo_list_gives_floor_percent_and_counts() {
    let view = todos_view(vec![
        todo("a", TodoStatus::Completed),
        todo("b", TodoStatus::Pending),
        todo("c", TodoStatus::Pending),
    ]);
    let bubble = bubble_for(&view);
    assert_eq!(bubble.as_ref().map(|b| b.kind), Some(BubbleKind::Todos));
    assert_eq!(bubble.as_ref().and_then(|b| b.percent), Some(33));
    assert_eq!(bubble.as_ref().and_then(|b| b.completed), Some(1));
    assert_eq!(bubble.as_ref().and_then(|b| b.total), Some(3));
}

#[test]
fn todo_list_outranks_an_active_goal() {
    let view = ProgressView {
        todos: Some(vec![todo("a", TodoStatus::Pending)]),
        goal: Some(goal(GoalStatus::Active)),
        activity: None,
    };
    assert_eq!(bubble_for(&view).map(|b| b.kind), Some(BubbleKind::Todos));
}

#[test]
fn all_completed_is_one_hundred_percent() {
    let view = todos_view(vec![
        todo("a", TodoStatus::Completed),
        todo("b", TodoStatus::Completed),
    ]);
    assert_eq!(bubble_for(&view).and_then(|b| b.percent), Some(100));
}

#[test]
fn single_in_progress_task_names_the_bubble() {
    let mut active = todo("Fix bug", TodoStatus::InProgress);
    active.active_form = Some("Fixing bug".to_string());
    let view = todos_view(vec![todo("a", TodoStatus::Pending), active]);
    assert_eq!(
        bubble_for(&view).map(|b| b.title),
        Some("Fixing bug".to_string())
    );
    let view = todos_view(vec![todo("Fix bug", TodoStatus::InProgress)]);
    assert_eq!(
        bubble_for(&view).map(|b| b.title),
        Some("Fix bug".to_string())
    );
}

#[test]
fn several_in_progress_tasks_are_counted_not_named() {
    let view = todos_view(vec![
        todo("alpha", TodoStatus::InProgress),
        todo("beta", TodoStatus::InProgress),
        todo("gamma", TodoStatus::InProgress),
        todo("delta", TodoStatus::Pending),
    ]);
    let title = bubble_for(&view).map(|b| b.title).unwrap_or_default();
    assert_eq!(title, "3 tasks in progress");
    for name in ["alpha", "beta", "gamma", "delta"] {
        assert!(!title.contains(name));
    }
}

#[test]
fn no_task_in_progress_gives_a_neutral_title() {
    let view = todos_view(vec![todo("a", TodoStatus::Pending)]);
    assert_eq!(
        bubble_for(&view).map(|b| b.title),
        Some("Todo list".to_string())
    );
}

#[test]
fn goal_without_todos_gives_its_round_budget() {
    let mut with_budget = goal(GoalStatus::Active);
    with_budget.rounds_used = Some(2);
    with_budget.round_budget = Some(8);
    let view = ProgressView {
        goal: Some(with_budget),
        ..ProgressView::default()
    };
    assert_eq!(
        bubble_for(&view),
        Some(Bubble {
            kind: BubbleKind::Goal,
            title: "Ship the parser".to_string(),
            percent: Some(25),
            completed: None,
            total: None,
            line: Some("round 2/8".to_string()),
            source: None,
        })
    );
}

#[test]
fn goal_budget_partial_or_missing_gives_no_percent() {
    let mut only_used = goal(GoalStatus::Active);
    only_used.rounds_used = Some(3);
    let mut only_budget = goal(GoalStatus::Active);
    only_budget.round_budget = Some(5);
    let mut zero_budget = goal(GoalStatus::Active);
    zero_budget.rounds_used = Some(0);
    zero_budget.round_budget = Some(0);
    for (g, line) in [
        (only_used, Some("round 3")),
        (only_budget, Some("budget 5 rounds")),
        (zero_budget, Some("round 0/0")),
        (goal(GoalStatus::Active), None),
    ] {
        let bubble = bubble_for(&ProgressView {
            goal: Some(g),
            ..ProgressView::default()
        });
        assert_eq!(bubble.as_ref().and_then(|b| b.percent), None);
        assert_eq!(bubble.and_then(|b| b.line), line.map(str::to_string));
    }
}

#[test]
fn overspent_budget_is_capped_and_complete_goal_is_full() {
    let mut overspent = goal(GoalStatus::Active);
    overspent.rounds_used = Some(12);
    overspent.round_budget = Some(8);
    let view = ProgressView {
        goal: Some(overspent),
        ..ProgressView::default()
    };
    assert_eq!(bubble_for(&view).and_then(|b| b.percent), Some(100));
    let view = ProgressView {
        goal: Some(goal(GoalStatus::Complete)),
        ..ProgressView::default()
    };
    let bubble = bubble_for(&view);
    assert_eq!(bubble.as_ref().and_then(|b| b.percent), Some(100));
    assert_eq!(bubble.and_then(|b| b.line), Some("complete".to_string()));
}

#[test]
fn activity_line_only_when_nothing_to_measure_and_never_with_percent() {
    let view = fold_activity(
        ProgressView::default(),
        read_activity(None, Some("  reading   src/main.rs \n")).unwrap_or_else(|| line("?")),
    );
    let bubble = bubble_for(&view);
    assert_eq!(
        bubble,
        Some(Bubble {
            kind: BubbleKind::Activity,
            title: "Latest output".to_string(),
            percent: None,
            completed: None,
            total: None,
            line: Some("reading src/main.rs".to_string()),
            source: Some(ActivitySource::Output),
        })
    );
    let measured = todos_view(vec![todo("a", TodoStatus::Pending)]);
    assert_eq!(fold_activity(measured.clone(), line("reading")), measured);
    let with_goal = ProgressView {
        goal: Some(goal(GoalStatus::Active)),
        ..ProgressView::default()
    };
    assert_eq!(fold_activity(with_goal.clone(), line("reading")), with_goal);
}

#[test]
fn blank_activity_says_nothing_and_long_lines_are_cut() {
    assert_eq!(read_activity(None, Some("  \n\t ")), None);
    assert_eq!(read_activity(Some(" "), None), None);
    assert_eq!(read_activity(None, None), None);
    let long = "x".repeat(1000);
    let cut = read_activity(None, Some(&long)).map(|l| l.text);
    assert_eq!(
        cut.as_ref().map(|l| l.chars().count()),
        Some(MAX_ACTIVITY_CHARS)
    );
    assert!(cut.is_some_and(|l| l.ends_with('\u{2026}')));
}

#[test]
fn empty_view_has_no_bubble() {
    assert_eq!(bubble_for(&ProgressView::default()), None);
    // A hand-built empty list is not a measurement either.
    assert_eq!(bubble_for(&todos_view(Vec::new())), None);
}
