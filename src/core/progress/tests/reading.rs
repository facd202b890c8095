//! Reading raw JSON, never over-reporting.

use super::*;

#[test]
fn unknown_or_missing_status_counts_as_pending() {
    let raw = json!([
        {"content": "a", "status": "done"},
        {"content": "b"},
        {"content": "c", "status": 1},
        {"content": "d", "status": "COMPLETED"}
    ]);
    let todos = raw
        .as_array()
        .and_then(|r| read_todos(r))
        .unwrap_or_default();
    assert_eq!(todos.len(), 4);
    assert!(todos.iter().all(|t| t.status == TodoStatus::Pending));
    assert_eq!(
        bubble_for(&todos_view(todos)).and_then(|b| b.percent),
        Some(0)
    );
}

#[test]
fn malformed_entries_are_skipped_and_all_malformed_is_no_information() {
    let raw = json!([
        {"content": "", "status": "completed"},
        {"content": "   ", "status": "completed"},
        {"status": "completed"},
        {"content": 5, "status": "completed"},
        "completed",
        null,
        {"content": "real", "status": "pending", "active_form": "Doing real"}
    ]);
    let todos = raw.as_array().and_then(|r| read_todos(r));
    assert_eq!(
        todos,
        Some(vec![Todo {
            content: "real".to_string(),
            status: TodoStatus::Pending,
            active_form: Some("Doing real".to_string()),
        }])
    );
    let all_bad = json!([{"status": "completed"}, 3, {"content": ""}]);
    assert_eq!(all_bad.as_array().and_then(|r| read_todos(r)), None);
    assert_eq!(read_todos(&[]), Some(Vec::new()));
}

#[test]
fn active_form_accepts_both_spellings() {
    let raw = json!([
        {"content": "a", "status": "in_progress", "activeForm": "Doing a"},
        {"content": "b", "status": "in_progress", "active_form": "Doing b"},
        {"content": "c", "status": "in_progress", "activeForm": "  "}
    ]);
    let todos = raw
        .as_array()
        .and_then(|r| read_todos(r))
        .unwrap_or_default();
    let forms: Vec<Option<&str>> = todos.iter().map(|t| t.active_form.as_deref()).collect();
    assert_eq!(forms, [Some("Doing a"), Some("Doing b"), None]);
}

#[test]
fn empty_write_keeps_the_previous_list() {
    let view = todos_view(vec![todo("a", TodoStatus::Completed)]);
    assert_eq!(fold_todos(view.clone(), Some(Vec::new())), view);
    assert_eq!(fold_todos(view.clone(), None), view);
    let replaced = fold_todos(view, Some(vec![todo("b", TodoStatus::Pending)]));
    assert_eq!(replaced, todos_view(vec![todo("b", TodoStatus::Pending)]));
    assert_eq!(
        fold_todos(ProgressView::default(), Some(Vec::new())),
        ProgressView::default()
    );
}

#[test]
fn a_measured_write_drops_the_activity_line() {
    let view = fold_activity(ProgressView::default(), line("reading"));
    let view = fold_todos(view, Some(vec![todo("a", TodoStatus::Pending)]));
    assert_eq!(view.activity, None);
    let view = fold_activity(ProgressView::default(), line("reading"));
    let view = fold_goal(view, Some(goal(GoalStatus::Active)));
    assert_eq!(view.activity, None);
}

#[test]
fn read_goal_is_tolerant_of_missing_fields() {
    assert_eq!(
        read_goal(&json!({"objective": "Ship the parser"})),
        Some(goal(GoalStatus::Active))
    );
    assert_eq!(
        read_goal(&json!({"objective": "Ship the parser", "status": "weird"})),
        Some(goal(GoalStatus::Active))
    );
    let full = read_goal(&json!({
        "objective": " Ship the parser ",
        "status": "blocked",
        "blocked_reason": "waiting on review",
        "roundsUsed": 2,
        "round_budget": 8
    }));
    assert_eq!(
        full,
        Some(Goal {
            objective: "Ship the parser".to_string(),
            status: GoalStatus::Blocked,
            blocked_reason: Some("waiting on review".to_string()),
            rounds_used: Some(2),
            round_budget: Some(8),
        })
    );
    let odd_numbers = read_goal(&json!({
        "objective": "x", "status": "complete", "roundsUsed": -1, "roundBudget": 2.5
    }));
    assert_eq!(
        odd_numbers.as_ref().map(|g| g.status),
        Some(GoalStatus::Complete)
    );
    assert_eq!(odd_numbers.as_ref().and_then(|g| g.rounds_used), None);
    assert_eq!(odd_numbers.and_then(|g| g.round_budget), None);
}

#[test]
fn read_goal_rejects_what_cannot_be_named() {
    assert_eq!(read_goal(&Value::Null), None);
    assert_eq!(read_goal(&json!({"status": "blocked"})), None);
    assert_eq!(read_goal(&json!({"objective": "  "})), None);
    assert_eq!(read_goal(&json!("objective")), None);
}

#[test]
fn goal_null_write_clears_the_goal() {
    let view = fold_goal(ProgressView::default(), Some(goal(GoalStatus::Active)));
    assert!(view.goal.is_some());
    assert_eq!(fold_goal(view, None), ProgressView::default());
}

#[test]
fn wire_names() {
    let value = serde_json::to_value(Todo {
        content: "a".to_string(),
        status: TodoStatus::InProgress,
        active_form: Some("A".to_string()),
    })
    .ok();
    assert_eq!(
        value,
        Some(json!({"content": "a", "status": "in_progress", "activeForm": "A"}))
    );
    let bubble = bubble_for(&ProgressView {
        goal: Some(goal(GoalStatus::Blocked)),
        ..ProgressView::default()
    });
    let value = serde_json::to_value(bubble).unwrap_or_default();
    assert_eq!(value.get("kind"), Some(&json!("blocked")));
    assert_eq!(
        serde_json::to_value(GoalStatus::Complete).ok(),
        Some(json!("complete"))
    );
}
