//! The tracker: what it publishes, keeps and forgets.

use super::*;

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
