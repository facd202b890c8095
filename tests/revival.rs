//! Revival of persisted state: every legacy shape, damage, and arbitrary JSON.

mod common;

use common::*;
use debug_sidecar::core::machine::*;
use debug_sidecar::core::model::*;
use debug_sidecar::core::revival::{load_live, persist, revive};
use proptest::prelude::*;
use serde_json::{json, Value};

fn revived(data: Value) -> Value {
    persist(&revive(&data))
}

#[test]
fn current_shape_round_trips_except_transient_latches() {
    let state = run(
        handed_off(2, HandoffMode::Capture),
        vec![Command::Observe(ObservationInput {
            text: "seen".into(),
            request_ids: vec![],
        })],
    );
    assert_eq!(revive(&persist(&state)), state);

    // An agent turn never survives a restart: investigating comes back as the user's.
    let mut investigating = run(
        instrumented(1),
        vec![Command::Stop, Command::AssistantMessage],
    );
    assert!(session(&investigating).round().awaiting_progress);
    let back = revive(&persist(&investigating));
    let s = session(&back);
    assert_eq!(s.stage, Stage::UserTurn);
    assert_eq!(s.round().handoff, Some(HandoffMode::Incomplete));
    assert!(!s.round().awaiting_progress);
    assert!(!s.turn_produced);
    if let DebugState::Active(session) = &mut investigating {
        session.stage = Stage::CleaningUp;
    }
    assert_eq!(
        session(&revive(&persist(&investigating))).stage,
        Stage::CleaningUp
    );
}

#[test]
fn live_loads_keep_the_running_agent_turn() {
    let state = run(
        instrumented(1),
        vec![Command::Stop, Command::AssistantMessage],
    );
    assert_eq!(load_live(&persist(&state)), state);
    // Anything not in the current shape is revived instead.
    let mut old = persist(&state);
    old["version"] = json!(2);
    assert_eq!(load_live(&old), revive(&old));
    let mut broken = persist(&state);
    broken["rounds"] = json!([]);
    assert_eq!(session(&load_live(&broken)).stage, Stage::UserTurn);
}

#[test]
fn inactive_and_garbage_revive_inactive() {
    for data in [
        json!(null),
        json!(42),
        json!("x"),
        json!([]),
        json!({}),
        json!({"active": false}),
        json!({"active": "yes"}),
    ] {
        assert_eq!(revive(&data), DebugState::Inactive, "{data}");
    }
    insta::assert_json_snapshot!(persist(&DebugState::Inactive), @r#"
    {
      "active": false,
      "version": 3
    }
    "#);
}

#[test]
fn legacy_phase_layout_without_rounds() {
    // The first shape: a flat round, `phase`, gateNudges, evidence* names.
    for phase in ["waiting", "cleanup", "round", "idle"] {
        let data = json!({
            "active": true,
            "phase": phase,
            "problem": "Cart total wrong",
            "round": 2,
            "runId": "r2-lflr",
            "runHistory": ["r1-abc", "r2-lflr"],
            "logCounts": {"r1-abc": 7, "r2-lflr": 3},
            "probes": [
                {"id": "p1", "file": "cart.py", "round": 1},
                {"id": "p2", "file": "cart.py", "round": 2},
                {"id": "p2", "file": "dup.py", "round": 2}
            ],
            "debugDir": "/tmp/x",
            "hasRoundContent": true,
            "cleanupReady": false,
            "reproductionSteps": ["Open the cart", "Add 3 items"],
            "evidenceRequests": [
                {"id": "e1", "method": "runtime_probe", "instructions": ["log total"], "round": 2},
                {"id": "old", "method": "user_report", "instructions": ["x"], "round": 1},
                {"id": "e2", "method": "telepathy", "instructions": [], "round": 2}
            ],
            "evidenceObservations": [{"text": "It says 60", "requestIds": ["old"], "round": 1, "addedAt": 5}],
            "evidenceArtifacts": [{"path": "shot.png", "requestId": "e9", "round": 1, "addedAt": 6}],
            "gateNudges": 2
        });
        insta::assert_json_snapshot!(format!("legacy_phase_{phase}"), revived(data));
    }
}

#[test]
fn legacy_stage_names_and_handoff_reasons() {
    let cases = [
        ("open", Some("awaiting_reply")),
        ("open", None),
        ("awaiting_evidence", None),
        ("user_turn", Some("probes_missing")),
        ("user_turn", Some("unclosed")),
        ("investigating", None),
        ("paused_by_alien", None),
    ];
    let mut out = Vec::new();
    for (stage, reason) in cases {
        let data = json!({
            "active": true,
            "stage": stage,
            "problem": "p",
            "rounds": [{
                "index": 1,
                "runId": "r1-a",
                "plan": null,
                "reproductionSteps": ["x"],
                "probeIds": [],
                "nudges": {"tags": 1},
                "awaitingProgress": true,
                "openReason": reason
            }],
            "probes": [],
            "runHistory": ["r1-a"],
            "logCounts": {"r1-a": 4},
            "turnProduced": true
        });
        let state = revive(&data);
        let s = session(&state);
        out.push(json!({
            "from": {"stage": stage, "reason": reason},
            "stage": s.stage,
            "handoff": s.round().handoff,
            "nudges": s.round().nudges,
            "awaitingProgress": s.round().awaiting_progress,
            "turnProduced": s.turn_produced,
            "runs": s.runs,
        }));
    }
    insta::assert_json_snapshot!(Value::Array(out));
}

#[test]
fn damaged_fields_get_defaults() {
    let data = json!({
        "active": true,
        "version": 99,
        "stage": 7,
        "problem": ["not", "text"],
        "rounds": [],
        "probes": [{"file": "no-id.py"}, "junk", {"id": "p4", "line": -3, "state": "live", "round": "one"}],
        "hypotheses": [{"id": "H1", "statement": "s", "status": "maybe"}, {"id": "H2"}],
        "runs": [{"id": "r1-a", "lines": "many"}, {"nope": 1}],
        "cleanupNudges": 1.5,
        "startedAt": -1
    });
    insta::assert_json_snapshot!(revived(data));
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        prop_oneof![
            Just("investigating"),
            Just("user_turn"),
            Just("cleaning_up"),
            Just("open"),
            Just("awaiting_evidence"),
            Just("waiting"),
            Just("cleanup"),
            Just("reproduce"),
            Just("unclosed"),
            Just("runtime_probe"),
            Just("p1"),
            Just("r1-a"),
            Just("")
        ]
        .prop_map(|s| json!(s)),
        ".{0,8}".prop_map(Value::String),
    ];
    let keys = prop_oneof![
        Just("active"),
        Just("stage"),
        Just("phase"),
        Just("rounds"),
        Just("probes"),
        Just("runs"),
        Just("runHistory"),
        Just("logCounts"),
        Just("handoff"),
        Just("openReason"),
        Just("nudges"),
        Just("plan"),
        Just("id"),
        Just("method"),
        Just("index"),
        Just("runId"),
        Just("hypotheses"),
        Just("observations"),
        Just("evidenceRequests"),
        Just("round"),
        Just("state"),
        Just("line"),
        Just("file"),
        Just("tags"),
        Just("gateNudges"),
        Just("text"),
        Just("requestIds"),
        Just("path"),
        Just("statement"),
        Just("status")
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone().prop_map(str::to_string), inner, 0..8)
                .prop_map(|m| {
                    let mut m: serde_json::Map<String, Value> = m.into_iter().collect();
                    m.insert("active".into(), Value::Bool(true));
                    Value::Object(m)
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn live_loading_never_panics(data in json_value()) {
        let _ = load_live(&data);
    }

    #[test]
    fn revival_never_panics_and_never_resumes_an_agent_turn(data in json_value()) {
        let state = revive(&data);
        if let Some(s) = state.session() {
            prop_assert_ne!(s.stage, Stage::Investigating);
            prop_assert!(!s.rounds.is_empty());
            prop_assert!(s.rounds.iter().all(|r| !r.awaiting_progress));
            if s.stage == Stage::UserTurn {
                prop_assert!(s.round().handoff.is_some());
            }
            let mut ids: Vec<_> = s.probes.iter().map(|p| &p.id).collect();
            ids.sort();
            ids.dedup();
            prop_assert_eq!(ids.len(), s.probes.len());
            prop_assert!(s.runs.iter().any(|r| r.id == s.round().run_id));
            // What revival produced revives to itself and loads live unchanged.
            prop_assert_eq!(revive(&persist(&state)), state.clone());
            prop_assert_eq!(load_live(&persist(&state)), state.clone());
        }
    }
}
