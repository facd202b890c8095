//! The activity line's four rules.

use super::*;

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
