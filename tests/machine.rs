//! Every transition row, illegal command and nudge path of the debug session.

mod common;

use common::*;
use debug_sidecar::core::error::{CommandName, DomainError};
use debug_sidecar::core::machine::*;
use debug_sidecar::core::model::*;

fn refused(state: &DebugState, command: Command) -> DomainError {
    let before = state.clone();
    let err = apply(state, command, T0 + 5).expect_err("must be refused");
    assert_eq!(
        *state, before,
        "a refused command must not change the state"
    );
    err
}

fn stop(state: &DebugState) -> (DebugState, StopDecision) {
    let (next, effects) = step(state, Command::Stop);
    let decision = effects
        .into_iter()
        .find_map(|e| match e {
            Effect::Stop(d) => Some(d),
            _ => None,
        })
        .expect("stop always decides");
    (next, decision)
}

#[test]
fn start_opens_round_one_with_its_run() {
    let t = apply(
        &DebugState::Inactive,
        Command::Start {
            problem: "  it breaks  ".into(),
        },
        T0,
    )
    .unwrap();
    let s = session(&t.state);
    assert_eq!(s.stage, Stage::Investigating);
    assert_eq!(s.problem, "it breaks");
    assert_eq!(s.round().index, 1);
    assert_eq!(s.run_id(), "r1-midc1z40");
    assert_eq!(s.runs.len(), 1);
    assert_eq!(
        t.effects,
        vec![
            Effect::RunStarted {
                run_id: "r1-midc1z40".into()
            },
            Effect::Kickoff(Kickoff::Start)
        ]
    );
}

#[test]
fn start_needs_a_problem() {
    let err = refused(
        &DebugState::Inactive,
        Command::Start {
            problem: " \n".into(),
        },
    );
    assert_eq!(err.to_string(), "invalid problem: must not be empty");
}

#[test]
fn hand_off_gives_the_user_the_turn() {
    let (state, effects) = step(
        &instrumented(2),
        hand_off(HandoffMode::Reproduce, Some(probe_plan())),
    );
    let s = session(&state);
    assert_eq!(s.stage, Stage::UserTurn);
    assert_eq!(s.round().handoff, Some(HandoffMode::Reproduce));
    assert_eq!(s.round().steps.len(), 2);
    assert_eq!(
        effects,
        vec![Effect::HandOff(HandOffResult::Accepted {
            mode: HandoffMode::Reproduce
        })]
    );
}

#[test]
fn hand_off_in_user_turn_recloses_the_same_round() {
    let state = handed_off(1, HandoffMode::Question);
    let state = run(
        state,
        vec![
            Command::TurnStarted(TurnSource::User),
            hand_off(HandoffMode::Reproduce, None),
        ],
    );
    let s = session(&state);
    assert_eq!(s.stage, Stage::UserTurn);
    assert_eq!(s.round().index, 1);
    assert_eq!(s.round().handoff, Some(HandoffMode::Reproduce));
    assert_eq!(
        s.round().plan,
        Some(probe_plan()),
        "an absent plan keeps the old one"
    );
}

#[test]
fn hand_off_validates_its_fields() {
    let state = instrumented(1);
    let mut no_steps = HandOff {
        mode: Some(HandoffMode::Reproduce),
        ..HandOff::default()
    };
    assert!(matches!(
        refused(&state, Command::HandOff(no_steps.clone())),
        DomainError::Invalid { field, .. } if field == "steps"
    ));
    no_steps.mode = Some(HandoffMode::Question);
    assert!(matches!(
        refused(&state, Command::HandOff(no_steps.clone())),
        DomainError::Invalid { field, .. } if field == "message"
    ));
    no_steps.mode = Some(HandoffMode::Incomplete);
    assert!(matches!(
        refused(&state, Command::HandOff(no_steps)),
        DomainError::Invalid { field, .. } if field == "mode"
    ));
    let mut plan = probe_plan();
    plan.push(plan[0].clone());
    assert!(matches!(
        refused(&state, hand_off(HandoffMode::Reproduce, Some(plan))),
        DomainError::Invalid { field, .. } if field == "plan[1].id"
    ));
    let mut user = user_plan();
    user[1].instructions.clear();
    assert!(matches!(
        refused(&state, hand_off(HandoffMode::Capture, Some(user))),
        DomainError::Invalid { field, .. } if field == "plan[1].instructions"
    ));
}

#[test]
fn proceed_opens_the_next_round_and_run() {
    let state = handed_off(2, HandoffMode::Reproduce);
    let t = apply(
        &state,
        Command::Proceed(ProceedInput {
            note: Some("It printed 6000.".into()),
            ..ProceedInput::default()
        }),
        T0 + 60_000,
    )
    .unwrap();
    let s = session(&t.state);
    assert_eq!(s.stage, Stage::Investigating);
    assert_eq!(s.round().index, 2);
    assert_eq!(s.round().handoff, None);
    assert_eq!(s.runs.len(), 2);
    assert!(s.run_id().starts_with("r2-"));
    assert_eq!(s.observations[0].text, "It printed 6000.");
    assert_eq!(s.observations[0].round, 1);
    assert_eq!(s.live_probe_count(), 2, "probes outlive their round");
    assert_eq!(
        t.effects,
        vec![
            Effect::RunStarted {
                run_id: s.run_id().into()
            },
            Effect::Kickoff(Kickoff::Proceed { closed_round: 1 })
        ]
    );
}

#[test]
fn done_moves_to_cleanup_from_either_stage() {
    for state in [instrumented(1), handed_off(1, HandoffMode::Reproduce)] {
        let (next, effects) = step(&state, Command::Done { note: None });
        assert_eq!(session(&next).stage, Stage::CleaningUp);
        assert_eq!(
            effects,
            vec![Effect::Rescan, Effect::Kickoff(Kickoff::Done)]
        );
    }
}

#[test]
fn abort_ends_the_session_and_lists_probes_on_disk() {
    for state in [
        instrumented(2),
        handed_off(2, HandoffMode::Reproduce),
        run(instrumented(2), vec![Command::Done { note: None }]),
    ] {
        let (next, effects) = step(&state, Command::Abort);
        assert_eq!(next, DebugState::Inactive);
        let Effect::Aborted { leftover } = &effects[0] else {
            panic!("abort reports leftovers")
        };
        let ids: Vec<_> = leftover.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, vec!["p1", "p2"]);
    }
}

#[test]
fn the_persons_proceed_closes_a_round_the_agent_still_holds_as_incomplete() {
    let (next, effects) = step(&instrumented(1), Command::Proceed(ProceedInput::default()));
    let s = session(&next);
    assert_eq!((s.stage, s.round().index), (Stage::Investigating, 2));
    assert_eq!(s.rounds[0].handoff, Some(HandoffMode::Incomplete));
    assert_eq!(s.round().handoff, None);
    assert!(effects.contains(&Effect::Kickoff(Kickoff::Proceed { closed_round: 1 })));
    assert!(user_commands(&instrumented(1)).contains(&CommandName::Proceed));
}

#[test]
fn illegal_commands_name_the_stage_and_what_is_legal() {
    let cleaning = run(instrumented(0), vec![Command::Done { note: None }]);
    let err = refused(&cleaning, Command::Proceed(ProceedInput::default()));
    assert_eq!(
        err,
        DomainError::Illegal {
            command: CommandName::Proceed,
            stage: Some(Stage::CleaningUp),
            legal: legal_commands(&cleaning),
        }
    );
    insta::assert_snapshot!("illegal_proceed_while_cleaning_up", err.to_string());
    let cases: Vec<(DebugState, Command)> = vec![
        (
            DebugState::Inactive,
            Command::Proceed(ProceedInput::default()),
        ),
        (DebugState::Inactive, Command::Done { note: None }),
        (DebugState::Inactive, Command::Abort),
        (DebugState::Inactive, hand_off(HandoffMode::Reproduce, None)),
        (
            started(),
            Command::Start {
                problem: "again".into(),
            },
        ),
        (
            run(started(), vec![Command::Done { note: None }]),
            Command::Done { note: None },
        ),
        (
            run(started(), vec![Command::Done { note: None }]),
            Command::Proceed(ProceedInput::default()),
        ),
        (
            run(started(), vec![Command::Done { note: None }]),
            hand_off(HandoffMode::Reproduce, None),
        ),
        (
            run(started(), vec![Command::Done { note: None }]),
            register("a.sh", "H1"),
        ),
    ];
    let messages: Vec<String> = cases
        .into_iter()
        .map(|(state, command)| refused(&state, command).to_string())
        .collect();
    insta::assert_snapshot!("illegal_commands", messages.join("\n"));
}

#[test]
fn legal_commands_per_stage_always_leave_the_user_something() {
    for state in [
        DebugState::Inactive,
        started(),
        handed_off(0, HandoffMode::Question),
        run(started(), vec![Command::Done { note: None }]),
    ] {
        assert!(!user_commands(&state).is_empty(), "{state:?}");
    }
}

#[test]
fn stop_while_investigating_reminds_twice_then_closes_the_round() {
    let state = instrumented(1);
    let (state, first) = stop(&state);
    assert_eq!(
        first,
        StopDecision::Block {
            nudge: Nudge::Handoff { attempt: 1 }
        }
    );
    assert!(session(&state).round().awaiting_progress);

    let state = run(
        state,
        vec![Command::ToolCall {
            tool: "Read".into(),
            edits: false,
        }],
    );
    assert!(
        !session(&state).round().awaiting_progress,
        "a tool call re-arms"
    );
    let (state, second) = stop(&state);
    assert_eq!(
        second,
        StopDecision::Block {
            nudge: Nudge::Handoff { attempt: 2 }
        }
    );

    let state = run(
        state,
        vec![
            Command::ToolCall {
                tool: "Read".into(),
                edits: false,
            },
            Command::AssistantMessage,
        ],
    );
    let (state, third) = stop(&state);
    assert_eq!(
        third,
        StopDecision::Allow {
            notice: Some(Notice::ClosedIncomplete { agent_spoke: true })
        }
    );
    let s = session(&state);
    assert_eq!(s.stage, Stage::UserTurn);
    assert_eq!(s.round().handoff, Some(HandoffMode::Incomplete));
}

#[test]
fn stop_without_progress_after_a_reminder_closes_the_round_at_once() {
    let (state, _) = stop(&instrumented(0));
    let (state, decision) = stop(&state);
    assert_eq!(
        decision,
        StopDecision::Allow {
            notice: Some(Notice::ClosedIncomplete { agent_spoke: false })
        }
    );
    assert_eq!(
        session(&state).round().nudges.handoff,
        1,
        "only one reminder spent"
    );
}

#[test]
fn handoff_budget_is_per_round() {
    let (state, _) = stop(&instrumented(1));
    let state = run(
        state,
        vec![
            hand_off(HandoffMode::Reproduce, None),
            Command::Proceed(ProceedInput::default()),
        ],
    );
    let (_, decision) = stop(&state);
    assert_eq!(
        decision,
        StopDecision::Block {
            nudge: Nudge::Handoff { attempt: 1 }
        }
    );
}

#[test]
fn stop_in_user_turn_is_allowed() {
    let (state, decision) = stop(&handed_off(1, HandoffMode::Reproduce));
    assert_eq!(decision, StopDecision::Allow { notice: None });
    assert_eq!(session(&state).stage, Stage::UserTurn);
}

#[test]
fn stop_while_inactive_is_allowed() {
    let (state, decision) = stop(&DebugState::Inactive);
    assert_eq!(decision, StopDecision::Allow { notice: None });
    assert_eq!(state, DebugState::Inactive);
}

fn assert_accepted_for_the_person(effects: &[Effect]) {
    assert_eq!(
        effects,
        [Effect::HandOff(HandOffResult::Accepted {
            mode: HandoffMode::Reproduce
        })]
    );
}

fn assert_refused_for_probes(effects: &[Effect]) {
    assert_eq!(effects, [Effect::HandOff(HandOffResult::RefusedNoProbes)]);
}

#[test]
fn a_plan_promising_probes_with_none_on_disk_is_refused_once() {
    let state = run(started(), vec![register("a.sh", "H1")]);
    let (state, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_refused_for_probes(&effects);
    let s = session(&state);
    assert_eq!(s.stage, Stage::Investigating);
    assert_eq!(s.round().nudges.probes, 1);
    assert_eq!(s.round().nudges.handoff, 0, "separate budgets");

    let (state, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_eq!(
        effects,
        vec![Effect::HandOff(HandOffResult::Accepted {
            mode: HandoffMode::Reproduce
        })]
    );
    assert_eq!(session(&state).stage, Stage::UserTurn);
}

#[test]
fn a_plan_without_runtime_probes_needs_none() {
    let state = started();
    let plan = vec![EvidenceRequest {
        id: "e1".into(),
        method: EvidenceMethod::UserReport,
        instructions: vec!["What does the banner say?".into()],
        artifact_hint: None,
    }];
    let (state, _) = step(&state, hand_off(HandoffMode::Capture, Some(plan)));
    assert_eq!(session(&state).stage, Stage::UserTurn);
}

#[test]
fn a_verification_plan_over_an_earlier_rounds_probes_is_refused_once_then_accepted() {
    // DESIGN section 3: "no probe of this round is on disk". Round 1's
    // probes are still there; the gate asks once, inside the agent's turn.
    let state = run(
        handed_off(1, HandoffMode::Reproduce),
        vec![Command::Proceed(ProceedInput::default())],
    );
    assert_eq!(session(&state).live_probe_count(), 1);
    let (state, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_refused_for_probes(&effects);
    assert_eq!(session(&state).stage, Stage::Investigating);
    let (state, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_accepted_for_the_person(&effects);
    assert_eq!(session(&state).round().index, 2);
    // Once per round: round 3 asks again.
    let state = run(state, vec![Command::Proceed(ProceedInput::default())]);
    let (_, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_refused_for_probes(&effects);
}

#[test]
fn markers_around_no_code_do_not_satisfy_a_plan_that_promises_probes() {
    use debug_sidecar::core::findings::FindingKind;
    let state = run(started(), vec![register("a.sh", "H1")]);
    let scan = Command::ProbeScan(ScanReport {
        scope: ScanScope::Workspace,
        found: vec![FoundProbe {
            id: "p1".into(),
            file: "a.sh".into(),
            line: 3,
            language: Some("shell".into()),
            trace: Some(FindingKind::EmptyBlock),
        }],
        orphans: Vec::new(),
    });
    let state = step(&state, scan).0;
    assert_eq!(session(&state).live_probe_count(), 1, "still to be removed");
    let (_, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_refused_for_probes(&effects);
}

#[test]
fn a_probe_placed_in_this_round_satisfies_its_plan_at_once() {
    let state = run(
        handed_off(1, HandoffMode::Reproduce),
        vec![
            Command::Proceed(ProceedInput::default()),
            register("src/other.sh", "H1"),
        ],
    );
    let scan = scan_finding(&state, &["p1", "p2"]);
    let state = step(&state, scan).0;
    let (state, effects) = step(&state, hand_off(HandoffMode::Reproduce, Some(probe_plan())));
    assert_accepted_for_the_person(&effects);
    assert_eq!(session(&state).round().index, 2);
}

#[test]
fn cleanup_blocks_three_times_then_gives_up_keeping_the_session() {
    let mut state = run(instrumented(2), vec![Command::Done { note: None }]);
    for attempt in 1..=3 {
        let (next, decision) = stop(&state);
        let StopDecision::Block {
            nudge:
                Nudge::Cleanup {
                    attempt: a,
                    remaining,
                },
        } = decision
        else {
            panic!("cleanup with probes on disk blocks")
        };
        assert_eq!(a, attempt);
        assert_eq!(remaining.len(), 2);
        state = next;
    }
    let (state, decision) = stop(&state);
    let StopDecision::Allow {
        notice: Some(Notice::CleanupUnfinished { remaining }),
    } = decision
    else {
        panic!("the fourth stop is allowed")
    };
    assert_eq!(remaining.len(), 2);
    assert_eq!(
        session(&state).stage,
        Stage::CleaningUp,
        "abort stays available"
    );
}

#[test]
fn cleanup_ends_the_session_when_the_scan_finds_no_probe() {
    let state = run(instrumented(2), vec![Command::Done { note: None }]);
    let (state, _) = stop(&state);
    let scan = scan_finding(&state, &[]);
    let (state, effects) = step(&state, scan);
    assert_eq!(
        effects,
        vec![Effect::Reconciled(Reconciliation {
            live: vec![],
            missing: vec!["p1".into(), "p2".into()],
            adopted: vec![],
        })]
    );
    let (state, decision) = stop(&state);
    assert_eq!(state, DebugState::Inactive);
    let StopDecision::Allow {
        notice: Some(Notice::CleanupVerified(summary)),
    } = decision
    else {
        panic!("verified cleanup")
    };
    assert_eq!(summary.probes_removed, 2);
}

#[test]
fn scans_reconcile_both_ways() {
    let state = run(
        started(),
        vec![
            register("a.sh", "H1"),
            register("b.sh", "H2"),
            register("c.sh", "H1"),
        ],
    );
    // p1 on disk, p2 never inserted, p9 written by hand.
    let scan = Command::ProbeScan(ScanReport {
        scope: ScanScope::Workspace,
        found: vec![
            FoundProbe {
                id: "p1".into(),
                file: "moved/a.sh".into(),
                line: 7,
                language: None,
                trace: None,
            },
            FoundProbe {
                id: "p9".into(),
                file: "d.sh".into(),
                line: 3,
                language: Some("shell".into()),
                trace: None,
            },
            FoundProbe {
                id: "p1".into(),
                file: "copy.sh".into(),
                line: 1,
                language: None,
                trace: None,
            },
        ],
        orphans: Vec::new(),
    });
    let (state, effects) = step(&state, scan);
    assert_eq!(
        effects,
        vec![Effect::Reconciled(Reconciliation {
            live: vec!["p1".into(), "p9".into()],
            missing: vec![],
            adopted: vec!["p9".into()],
        })]
    );
    let s = session(&state);
    let p1 = &s.probes[0];
    assert_eq!(
        (p1.file.as_str(), p1.line, p1.state),
        ("moved/a.sh", Some(7), ProbeState::Live)
    );
    assert_eq!(s.probes[1].state, ProbeState::Issued);
    assert_eq!(s.next_probe, 10, "ids stay unique after adopting p9");

    // A scan of one file only touches probes in that file.
    let partial = Command::ProbeScan(ScanReport {
        scope: ScanScope::Files(vec!["d.sh".into()]),
        found: vec![],
        orphans: Vec::new(),
    });
    let (state, _) = step(&state, partial);
    let s = session(&state);
    assert_eq!(s.probes[0].state, ProbeState::Live);
    assert_eq!(
        s.probes.iter().find(|p| p.id == "p9").unwrap().state,
        ProbeState::Missing
    );

    let (state, _) = step(&state, register("e.sh", "H2"));
    assert_eq!(session(&state).probes.last().unwrap().id, "p10");
}

#[test]
fn edit_tools_ask_for_a_rescan() {
    let (_, effects) = step(
        &started(),
        Command::ToolCall {
            tool: "Edit".into(),
            edits: true,
        },
    );
    assert_eq!(effects, vec![Effect::Rescan]);
    let (_, effects) = step(
        &started(),
        Command::ToolCall {
            tool: "Read".into(),
            edits: false,
        },
    );
    assert!(effects.is_empty());
}

#[test]
fn fresh_scans_come_before_every_decision_that_reads_the_disk() {
    let cleaning = run(started(), vec![Command::Done { note: None }]);
    assert!(needs_fresh_scan(&cleaning, &Command::Stop));
    // A stop in any stage, a hand-off of any plan, Proceed and abort: the
    // disk may have changed through the shell since the last scan.
    assert!(needs_fresh_scan(&started(), &Command::Stop));
    for plan in [Some(probe_plan()), None] {
        assert!(needs_fresh_scan(
            &started(),
            &hand_off(HandoffMode::Reproduce, plan)
        ));
    }
    let handed = run(started(), vec![hand_off(HandoffMode::Reproduce, None)]);
    assert!(needs_fresh_scan(
        &handed,
        &Command::Proceed(ProceedInput::default())
    ));
    assert!(needs_fresh_scan(&started(), &Command::Abort));
    // Done rescans through its own effect.
    assert!(!needs_fresh_scan(&started(), &Command::Done { note: None }));
    assert!(!needs_fresh_scan(&DebugState::Inactive, &Command::Abort));
}

#[test]
fn evidence_requests_are_pending_until_the_user_supplies_them() {
    let state = run(
        instrumented(1),
        vec![hand_off(HandoffMode::Capture, Some(user_plan()))],
    );
    let pending = |s: &DebugState| -> Vec<String> {
        session(s)
            .pending_requests()
            .iter()
            .map(|r| r.id.clone())
            .collect()
    };
    assert_eq!(pending(&state), vec!["e2", "e3"]);
    let state = run(
        state,
        vec![
            Command::Observe(ObservationInput {
                text: "It shows 60.00".into(),
                request_ids: vec!["e2".into()],
            }),
            Command::Attach(ArtifactInput {
                path: "artifacts/cart.png".into(),
                request_id: Some("e3".into()),
                kind: Some("screenshot".into()),
            }),
        ],
    );
    assert!(pending(&state).is_empty());
    insta::assert_snapshot!(session(&state).evidence_summary(), @"round 1: 3 request(s) [e1:runtime_probe, e2:user_report, e3:user_artifact], 0 pending user action(s), 1 observation(s), 1 artifact(s)");
}

#[test]
fn log_line_counts_are_recorded_per_run() {
    let state = started();
    let run_id = session(&state).run_id().to_string();
    let (state, _) = step(
        &state,
        Command::LogLines {
            run_id: run_id.clone(),
            lines: 42,
        },
    );
    assert_eq!(session(&state).run(&run_id).unwrap().lines, 42);
    let (same, _) = step(
        &state,
        Command::LogLines {
            run_id: "r9-zz".into(),
            lines: 1,
        },
    );
    assert_eq!(session(&same).runs, session(&state).runs);
}

#[test]
fn hypotheses_are_upserted_by_id() {
    let mut updated = hypotheses();
    updated[0].status = HypothesisStatus::Confirmed;
    updated[0].evidence = vec!["p1".into()];
    updated.remove(1);
    let state = run(
        started(),
        vec![
            Command::RecordHypotheses(hypotheses()),
            Command::RecordHypotheses(updated),
        ],
    );
    let s = session(&state);
    assert_eq!(s.hypotheses.len(), 2);
    assert_eq!(s.hypotheses[0].status, HypothesisStatus::Confirmed);
    assert_eq!(s.hypotheses[1].status, HypothesisStatus::Open);
}

#[test]
fn a_user_turn_start_is_remembered_until_the_hand_off() {
    let state = run(
        handed_off(1, HandoffMode::Question),
        vec![Command::TurnStarted(TurnSource::User)],
    );
    assert!(session(&state).user_spoke);
    let state = run(state, vec![hand_off(HandoffMode::Reproduce, None)]);
    assert!(!session(&state).user_spoke);
    let state = run(state, vec![Command::TurnStarted(TurnSource::Continuation)]);
    assert!(!session(&state).user_spoke);
}

#[test]
fn an_event_that_changes_nothing_leaves_the_session_untouched() {
    let state = started();
    let read = Command::ToolCall {
        tool: "Read".into(),
        edits: false,
    };
    let once = apply(&state, read.clone(), T0 + 5_000).unwrap().state;
    let twice = apply(&once, read, T0 + 9_000).unwrap().state;
    assert_eq!(
        once, twice,
        "a repeated non-edit tool call changed the session"
    );
    let moved = apply(&once, register("app.py", "H1"), T0 + 9_000)
        .unwrap()
        .state;
    assert_eq!(session(&moved).updated_at, T0 + 9_000);
}
