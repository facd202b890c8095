//! Properties over any sequence of writes and turns.

use super::*;

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
