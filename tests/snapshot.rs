//! The protocol snapshot of a session, per stage.

mod common;

use common::*;
use debug_sidecar::core::machine::*;
use debug_sidecar::core::model::*;
use debug_sidecar::core::snapshot::snapshot;

#[test]
fn inactive_snapshot_has_every_key() {
    insta::assert_json_snapshot!(snapshot("default", &DebugState::Inactive, &env(), 0));
}

#[test]
fn user_turn_snapshot() {
    let state = run(
        instrumented(2),
        vec![hand_off(HandoffMode::Capture, Some(user_plan()))],
    );
    insta::assert_json_snapshot!(snapshot("agent-7", &state, &env(), 12));
}

#[test]
fn investigating_and_cleanup_offer_the_right_buttons() {
    let investigating = snapshot("s", &instrumented(1), &env(), 1);
    assert_eq!(investigating.handoff, None);
    let buttons: Vec<_> = investigating
        .user_commands
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(buttons, vec!["proceed", "done", "abort"]);
    let cleaning = run(instrumented(1), vec![Command::Done { note: None }]);
    let buttons: Vec<_> = snapshot("s", &cleaning, &env(), 2)
        .user_commands
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(buttons, vec!["abort"]);
}
