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

// ---- reading raw JSON, never over-reporting ----

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

// ---- tracker ----

fn shown_kind(changes: &[BubbleChange]) -> Vec<(String, Option<BubbleKind>)> {
    changes
        .iter()
        .map(|c| (c.session_id.clone(), c.bubble.as_ref().map(|b| b.kind)))
        .collect()
}

#[test]
fn a_write_publishes_and_reports_only_real_changes() {
    let mut tracker = ProgressTracker::new();
    let changes = tracker.todos("s", &raw_list(), 0);
    assert_eq!(
        shown_kind(&changes),
        [("s".to_string(), Some(BubbleKind::Todos))]
    );
    assert_eq!(
        changes
            .first()
            .and_then(|c| c.bubble.as_ref())
            .map(|b| b.title.as_str()),
        Some("Fixing bug")
    );
    // The same snapshot again is a refresh, not a change.
    assert!(tracker.todos("s", &raw_list(), 1_000).is_empty());
}

#[test]
fn no_information_writes_change_nothing() {
    let mut tracker = ProgressTracker::new();
    assert!(tracker
        .todos("s", &json!([{"status": "completed"}]), 0)
        .is_empty());
    assert!(tracker.todos("s", &json!([]), 0).is_empty());
    assert!(tracker.todos("s", &json!({"not": "a list"}), 0).is_empty());
    assert!(tracker
        .goal("s", &json!({"status": "blocked"}), 0)
        .is_empty());
    assert!(tracker.goal("s", &Value::Null, 0).is_empty());
    assert!(tracker.turn_end("s", 0).is_empty());
    assert!(tracker.is_empty());
}

#[test]
fn empty_or_malformed_write_does_not_blank_a_visible_bubble() {
    let mut tracker = ProgressTracker::new();
    tracker.todos("s", &raw_list(), 0);
    let before = tracker.visible("s", 10);
    assert!(tracker.todos("s", &json!([]), 10).is_empty());
    assert!(tracker.todos("s", &json!([{"content": ""}]), 10).is_empty());
    assert_eq!(tracker.visible("s", 10), before);
    assert!(before.is_some());
}

#[test]
fn activity_is_tracked_only_while_nothing_is_measured() {
    let mut tracker = ProgressTracker::new();
    let changes = tracker.activity("s", line("calling grep"), 0);
    assert_eq!(
        shown_kind(&changes),
        [("s".to_string(), Some(BubbleKind::Activity))]
    );
    let changes = tracker.todos("s", &raw_list(), 1);
    assert_eq!(
        shown_kind(&changes),
        [("s".to_string(), Some(BubbleKind::Todos))]
    );
    assert!(tracker.activity("s", line("calling sed"), 2).is_empty());
    assert_eq!(tracker.view("s").and_then(|v| v.activity.clone()), None);
}

#[test]
fn goal_change_and_clear_are_reported() {
    let mut tracker = ProgressTracker::new();
    let changes = tracker.goal(
        "s",
        &json!({"objective": "Ship", "status": "blocked", "blockedReason": "no key"}),
        0,
    );
    assert_eq!(
        shown_kind(&changes),
        [("s".to_string(), Some(BubbleKind::Blocked))]
    );
    let changes = tracker.goal("s", &Value::Null, 1);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
    // With the goal gone, the activity fallback is available again.
    assert_eq!(tracker.activity("s", line("reading"), 2).len(), 1);
}

#[test]
fn bubble_expires_after_its_ttl() {
    let mut tracker = ProgressTracker::new();
    tracker.todos("s", &raw_list(), 0);
    assert!(tracker.visible("s", BUBBLE_TTL_MS - 1).is_some());
    assert!(tracker.visible("s", BUBBLE_TTL_MS).is_none());
    assert!(tracker.tick(BUBBLE_TTL_MS - 1).is_empty());
    let changes = tracker.tick(BUBBLE_TTL_MS);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
    // Reported once only.
    assert!(tracker.tick(BUBBLE_TTL_MS + 1).is_empty());
    // The view survives expiry, so the next turn can replay it.
    assert!(tracker.view("s").is_some_and(ProgressView::has_measure));
}

#[test]
fn a_running_turn_refreshes_its_bubble() {
    let mut tracker = ProgressTracker::new();
    tracker.turn_start("s", 0);
    tracker.todos("s", &raw_list(), 0);
    assert!(tracker.tick(20_000).is_empty());
    assert!(tracker.visible("s", 45_000).is_some());
    assert!(tracker.tick(45_000).is_empty());
    assert!(tracker.visible("s", 70_000).is_some());
    // A heartbeat missing for a whole TTL lets the bubble go.
    let changes = tracker.tick(45_000 + BUBBLE_TTL_MS);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
}

#[test]
fn a_bubble_outside_a_turn_is_not_refreshed() {
    let mut tracker = ProgressTracker::new();
    tracker.todos("s", &raw_list(), 0);
    assert!(!tracker.is_turn_running("s"));
    assert!(tracker.tick(20_000).is_empty());
    assert!(tracker.visible("s", BUBBLE_TTL_MS).is_none());
}

#[test]
fn turn_end_retires_and_next_turn_start_replays() {
    let mut tracker = ProgressTracker::new();
    tracker.turn_start("s", 0);
    let published = tracker.todos("s", &raw_list(), 10);
    let bubble = published.first().and_then(|c| c.bubble.clone());
    assert!(bubble.is_some());

    let retired = tracker.turn_end("s", 20);
    assert_eq!(shown_kind(&retired), [("s".to_string(), None)]);
    assert_eq!(tracker.visible("s", 21), None);
    assert!(!tracker.is_turn_running("s"));
    // Retired means not refreshed either.
    assert!(tracker.tick(25).is_empty());

    let replayed = tracker.turn_start("s", 100_000);
    assert_eq!(
        replayed,
        [BubbleChange {
            session_id: "s".to_string(),
            bubble: bubble.clone()
        }]
    );
    assert!(tracker.is_turn_running("s"));
    assert_eq!(tracker.visible("s", 100_000 + BUBBLE_TTL_MS - 1), bubble);
}

#[test]
fn turn_start_refreshes_a_visible_bubble_without_reporting() {
    let mut tracker = ProgressTracker::new();
    tracker.todos("s", &raw_list(), 0);
    assert!(tracker.turn_start("s", 20_000).is_empty());
    assert!(tracker.visible("s", 45_000).is_some());
}

#[test]
fn activity_only_session_is_deleted_at_turn_end() {
    let mut tracker = ProgressTracker::new();
    tracker.turn_start("s", 0);
    tracker.activity("s", line("calling grep"), 1);
    let changes = tracker.turn_end("s", 2);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
    assert!(tracker.view("s").is_none());
    assert!(tracker.turn_start("s", 3).is_empty());
    assert_eq!(tracker.visible("s", 3), None);
}

#[test]
fn a_new_turn_does_not_replay_an_old_activity_line() {
    let mut tracker = ProgressTracker::new();
    tracker.activity("s", line("calling grep"), 0);
    // The previous turn's end was missed; the new turn starts clean anyway.
    let changes = tracker.turn_start("s", 1);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
}

#[test]
fn the_twenty_fifth_session_evicts_the_least_recently_touched() {
    let mut tracker = ProgressTracker::new();
    for n in 0..MAX_TRACKED_SESSIONS {
        tracker.todos(&format!("s{n}"), &raw_list(), 0);
    }
    assert_eq!(tracker.len(), MAX_TRACKED_SESSIONS);
    // s0 is the oldest created, but touching it makes s1 the least recently touched.
    tracker.turn_start("s0", 1);
    let changes = tracker.todos("s24", &raw_list(), 2);
    assert_eq!(tracker.len(), MAX_TRACKED_SESSIONS);
    assert!(tracker.view("s0").is_some());
    assert!(tracker.view("s1").is_none());
    assert!(tracker.view("s24").is_some());
    assert_eq!(
        shown_kind(&changes),
        [
            ("s1".to_string(), None),
            ("s24".to_string(), Some(BubbleKind::Todos))
        ]
    );
}

#[test]
fn tracker_round_trips_through_json() {
    let mut tracker = ProgressTracker::new();
    tracker.turn_start("s", 0);
    tracker.todos("s", &raw_list(), 1);
    let text = serde_json::to_string(&tracker).unwrap_or_default();
    let back: Option<ProgressTracker> = serde_json::from_str(&text).ok();
    assert_eq!(back, Some(tracker));
}

// ---- properties ----

fn any_status() -> impl Strategy<Value = TodoStatus> {
    prop_oneof![
        Just(TodoStatus::Pending),
        Just(TodoStatus::InProgress),
        Just(TodoStatus::Completed)
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![
            Just("completed".to_string()),
            Just("in_progress".to_string()),
            Just("blocked".to_string()),
            Just("complete".to_string()),
            ".{0,12}"
        ]
        .prop_map(Value::from),
    ];
    let key = prop_oneof![
        Just("content".to_string()),
        Just("status".to_string()),
        Just("activeForm".to_string()),
        Just("objective".to_string()),
        Just("roundsUsed".to_string()),
        Just("round_budget".to_string()),
        Just("blockedReason".to_string()),
        "[a-z]{1,6}"
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Op {
    Todos(u8, Value),
    Goal(u8, Value),
    Activity(u8, Option<String>, String),
    TurnStart(u8),
    TurnEnd(u8),
    Tick,
}

fn any_op() -> impl Strategy<Value = Op> {
    let session = 0u8..30;
    prop_oneof![
        (session.clone(), any_json()).prop_map(|(s, v)| Op::Todos(s, v)),
        (session.clone(), any_json()).prop_map(|(s, v)| Op::Goal(s, v)),
        (
            session.clone(),
            proptest::option::of(prop_oneof![
                Just("thinking".to_string()),
                Just("tool".to_string()),
                ".{0,8}"
            ]),
            ".{0,20}"
        )
            .prop_map(|(s, p, l)| Op::Activity(s, p, l)),
        session.clone().prop_map(Op::TurnStart),
        session.prop_map(Op::TurnEnd),
        Just(Op::Tick),
    ]
}

fn check_bubble(bubble: &Bubble) -> Result<(), TestCaseError> {
    if let Some(percent) = bubble.percent {
        prop_assert!(percent <= 100);
    }
    if let (Some(completed), Some(total)) = (bubble.completed, bubble.total) {
        prop_assert!(completed <= total);
        let percent = u64::from(bubble.percent.unwrap_or(0));
        prop_assert!(percent * u64::from(total) <= u64::from(completed) * 100);
    }
    if bubble.kind == BubbleKind::Activity {
        prop_assert_eq!(bubble.percent, None);
    }
    Ok(())
}

proptest! {
    #[test]
    fn percent_never_exceeds_the_completed_ratio(
        statuses in proptest::collection::vec(any_status(), 0..40)
    ) {
        let todos: Vec<Todo> = statuses.iter().map(|s| todo("t", *s)).collect();
        let bubble = bubble_for(&todos_view(todos));
        if statuses.is_empty() {
            prop_assert_eq!(bubble, None);
        } else if let Some(bubble) = bubble {
            check_bubble(&bubble)?;
            prop_assert!(bubble.completed.is_some() && bubble.total.is_some());
            let completed = statuses.iter().filter(|s| **s == TodoStatus::Completed).count();
            prop_assert_eq!(bubble.completed, u32::try_from(completed).ok());
            prop_assert_eq!(bubble.percent.is_some_and(|p| p == 100), completed == statuses.len());
        } else {
            prop_assert!(false, "a non-empty list must give a bubble");
        }
    }

    #[test]
    fn arbitrary_json_never_panics_and_keeps_invariants(
        ops in proptest::collection::vec(any_op(), 0..40)
    ) {
        let mut tracker = ProgressTracker::new();
        let mut now = 0u64;
        for op in ops {
            now += 7_000;
            let _ = match op {
                Op::Todos(s, v) => {
                    if let Some(list) = v.as_array() {
                        let _ = read_todos(list);
                    }
                    tracker.todos(&s.to_string(), &v, now)
                }
                Op::Goal(s, v) => {
                    let _ = read_goal(&v);
                    tracker.goal(&s.to_string(), &v, now)
                }
                Op::Activity(s, phase, l) => match read_activity(phase.as_deref(), Some(&l)) {
                    Some(activity) => tracker.activity(&s.to_string(), activity, now),
                    None => Vec::new(),
                },
                Op::TurnStart(s) => tracker.turn_start(&s.to_string(), now),
                Op::TurnEnd(s) => tracker.turn_end(&s.to_string(), now),
                Op::Tick => tracker.tick(now),
            };
            prop_assert!(tracker.len() <= MAX_TRACKED_SESSIONS);
            for s in 0u8..30 {
                let id = s.to_string();
                if let Some(bubble) = tracker.visible(&id, now) {
                    check_bubble(&bubble)?;
                }
                if let Some(view) = tracker.view(&id) {
                    prop_assert!(view.todos.as_ref().is_none_or(|todos| !todos.is_empty()));
                    prop_assert!(view.activity.is_none() || !view.has_measure());
                }
            }
        }
    }
}

#[test]
fn sessions_over_the_limit_are_the_least_recently_touched() {
    let mut tracked: Vec<(String, u64)> = (0..MAX_TRACKED_SESSIONS)
        .map(|n| (format!("s{n:02}"), 100 + n as u64))
        .collect();
    assert!(over_the_limit(&tracked, "s00").is_empty());
    tracked.push(("new".to_string(), 1_000));
    // s00 is the oldest touched, so it goes.
    assert_eq!(over_the_limit(&tracked, "new"), ["s00"]);
    // The session just touched is never dropped, even with an old stamp.
    tracked.push(("kept".to_string(), 0));
    assert_eq!(over_the_limit(&tracked, "kept"), ["s00", "s01"]);
}

#[test]
fn forget_reports_a_visible_bubble_gone() {
    let mut tracker = ProgressTracker::new();
    tracker.todos("s", &raw_list(), 0);
    assert_eq!(tracker.touched_at("s"), Some(0));
    let changes = tracker.forget("s", 1);
    assert_eq!(shown_kind(&changes), [("s".to_string(), None)]);
    assert!(tracker.is_empty());
    assert!(tracker.forget("s", 2).is_empty());
    assert_eq!(tracker.touched_at("s"), None);
}

// ---- the activity line's four rules ----

#[test]
fn silence_beats_boilerplate_quiet_phases_say_nothing() {
    for quiet in QUIET_PHASES {
        assert_eq!(read_activity(Some(quiet), None), None);
    }
    assert_eq!(read_activity(Some("Thinking"), None), None);
    // Unless the model itself said something.
    assert_eq!(
        read_activity(Some("thinking"), Some("I found the bug")),
        said("I found the bug")
    );
    let mut tracker = ProgressTracker::new();
    tracker.activity("s", line("I found the bug"), 0);
    assert!(read_activity(Some("review"), None).is_none());
    assert_eq!(
        tracker.visible("s", 1).map(|b| (b.title, b.line)),
        Some((
            "Latest output".to_string(),
            Some("I found the bug".to_string())
        ))
    );
}

#[test]
fn a_concrete_phase_always_publishes_a_phase_line() {
    let waiting = read_activity(Some("waiting"), None);
    assert_eq!(
        waiting,
        Some(ActivityLine {
            source: ActivitySource::Phase,
            text: "waiting for the model".to_string(),
        })
    );
    assert_eq!(
        read_activity(Some("tool"), None).map(|l| l.text),
        Some("calling a tool".to_string())
    );
    let bubble = bubble_for(&fold_activity(
        ProgressView::default(),
        waiting.unwrap_or_else(|| line("?")),
    ));
    assert_eq!(
        bubble.map(|b| (b.title, b.source)),
        Some(("Current step".to_string(), Some(ActivitySource::Phase)))
    );
}

#[test]
fn a_named_tool_call_says_calling_its_name_and_a_nameless_one_nothing() {
    assert_eq!(
        tool_activity(Some("Read")),
        Some(ActivityLine {
            source: ActivitySource::Phase,
            text: "calling Read".to_string(),
        })
    );
    assert_eq!(tool_activity(Some("  ")), None);
    assert_eq!(tool_activity(None), None);
}

#[test]
fn a_line_saved_before_sources_reads_as_the_models_words() {
    let view: ProgressView =
        serde_json::from_value(json!({"todos": null, "goal": null, "activity": "Reading cart.py"}))
            .unwrap_or_default();
    assert_eq!(view.activity, said("Reading cart.py"));
    let view: ProgressView =
        serde_json::from_value(json!({"activity": 5})).unwrap_or_else(|_| ProgressView {
            activity: said("failed"),
            ..ProgressView::default()
        });
    assert_eq!(view.activity, None);
}
