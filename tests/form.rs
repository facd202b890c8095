//! The in-chat hand-off form, below the MCP face: the person's answer is
//! applied as their command, an answer for a round they no longer hold
//! changes nothing, and whatever they answer (or fail to), the session ends
//! where they have a legal command.

mod support;

use debug_sidecar::core::error::CommandName;
use debug_sidecar::core::harness_memory::PersonCommandKind;
use debug_sidecar::core::machine::HandOff;
use debug_sidecar::core::model::{HandoffMode, Stage};
use debug_sidecar::core::text::FormDismissal;
use debug_sidecar::engine::{Engine, EngineConfig, FormAnswer};
use debug_sidecar::workspace::store::MemoryStore;
use proptest::prelude::*;
use support::Workspace;

const SESSION: &str = "form";

fn engine(workspace: &Workspace) -> Engine {
    let config = EngineConfig::for_workspace(workspace.root.clone(), None).unwrap();
    Engine::new(config, Box::new(MemoryStore::new()))
}

fn hand_off(engine: &mut Engine, steps: Vec<String>, now: u64) -> bool {
    let hand_off = HandOff {
        mode: Some(HandoffMode::Reproduce),
        steps,
        plan: None,
        hypotheses: None,
        message: None,
    };
    engine.hand_off(SESSION, hand_off, now).is_ok()
}

fn round(engine: &mut Engine, now: u64) -> u32 {
    engine
        .status(SESSION, now)
        .unwrap()
        .round
        .unwrap_or_default()
}

#[test]
fn the_form_shows_the_steps_and_its_answer_is_the_persons_command() {
    let workspace = Workspace::new("form-unit");
    let mut engine = engine(&workspace);
    engine
        .person_command(SESSION, PersonCommandKind::Start, Some("total".into()), 1)
        .unwrap();
    assert_eq!(engine.hand_off_form(SESSION).unwrap(), None);
    assert!(hand_off(&mut engine, vec!["Run it".into()], 2));
    let (round, form) = engine.hand_off_form(SESSION).unwrap().unwrap();
    assert_eq!(round, 1);
    assert!(form.message.contains("1. Run it"), "{}", form.message);
    assert_eq!(form.help, "Closing the form leaves the round with you.");
    let said = engine
        .answer_hand_off(SESSION, 1, FormAnswer::Proceed(Some("it said 0".into())), 3)
        .unwrap();
    assert!(
        said.contains("pressed Proceed") && said.contains("it said 0"),
        "{said}"
    );
    // The same answer again belongs to a round the person no longer holds.
    let late = engine
        .answer_hand_off(SESSION, 1, FormAnswer::Fixed(None), 4)
        .unwrap();
    assert!(late.contains("not applied"), "{late}");
    let status = engine.status(SESSION, 5).unwrap();
    assert_eq!(status.stage, Some(Stage::Investigating));
    assert_eq!(status.round, Some(2));
}

#[test]
fn an_open_form_overtaken_by_a_proceed_elsewhere_goes_on_from_its_kickoff_once() {
    let workspace = Workspace::new("form-overtaken");
    let mut engine = engine(&workspace);
    engine
        .person_command(SESSION, PersonCommandKind::Start, Some("total".into()), 1)
        .unwrap();
    assert!(hand_off(&mut engine, vec!["Run it".into()], 2));
    assert_eq!(engine.hand_off_overtaken(SESSION, 1, 3).unwrap(), None);
    // The person presses Proceed in a terminal while the form is open.
    engine.set_asks_wake(true);
    engine
        .person_command(
            SESSION,
            PersonCommandKind::Proceed,
            Some("it said 0".into()),
            4,
        )
        .unwrap();
    engine.set_asks_wake(false);
    // A host that withdraws forms: the open call returns the kickoff.
    let went_on = engine.hand_off_overtaken(SESSION, 1, 5).unwrap().unwrap();
    assert!(
        went_on.contains("pressed Proceed") && went_on.contains("it said 0"),
        "{went_on}"
    );
    // A host that keeps the form: its late answer gets nothing more, once taken.
    let late = engine
        .answer_hand_off(
            SESSION,
            1,
            FormAnswer::Dismissed(FormDismissal::Cancelled),
            6,
        )
        .unwrap();
    assert!(late.contains("not applied"), "{late}");
    assert_eq!(round(&mut engine, 7), 2, "one Proceed, one new round");
}

#[test]
fn a_kept_form_closed_after_a_proceed_elsewhere_goes_on_from_its_kickoff() {
    let workspace = Workspace::new("form-kept");
    let mut engine = engine(&workspace);
    engine
        .person_command(SESSION, PersonCommandKind::Start, Some("total".into()), 1)
        .unwrap();
    assert!(hand_off(&mut engine, vec!["Run it".into()], 2));
    engine.set_asks_wake(true);
    engine
        .person_command(SESSION, PersonCommandKind::Done, None, 3)
        .unwrap();
    engine.set_asks_wake(false);
    let closed = engine
        .answer_hand_off(
            SESSION,
            1,
            FormAnswer::Dismissed(FormDismissal::Cancelled),
            4,
        )
        .unwrap();
    assert!(closed.contains("marked the bug fixed"), "{closed}");
    let status = engine.status(SESSION, 5).unwrap();
    assert_eq!(status.stage, Some(Stage::CleaningUp));
}

#[derive(Debug, Clone)]
enum Step {
    /// The agent hands the round off (legal or not in the stage).
    HandOff(Vec<String>),
    /// The person answers the form of the current round, or of an older one.
    Answer { stale: bool, answer: FormAnswer },
    /// The person presses a button in an editor or a terminal meanwhile.
    Button(PersonCommandKind),
}

fn note() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just(String::new()),
        Just("  ".to_string()),
        "[a-z\n\u{1b}]{1,20}"
    ])
}

fn answer() -> impl Strategy<Value = FormAnswer> {
    prop_oneof![
        note().prop_map(FormAnswer::Proceed),
        note().prop_map(FormAnswer::Fixed),
        note().prop_map(FormAnswer::Reply),
        prop::sample::select(vec![
            FormDismissal::Declined,
            FormDismissal::Cancelled,
            FormDismissal::Unanswered
        ])
        .prop_map(FormAnswer::Dismissed),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => prop::collection::vec("[a-z ]{0,8}", 0..3).prop_map(Step::HandOff),
        4 => (any::<bool>(), answer()).prop_map(|(stale, answer)| Step::Answer { stale, answer }),
        1 => prop::sample::select(vec![PersonCommandKind::Proceed, PersonCommandKind::Done])
            .prop_map(Step::Button),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn whatever_the_person_answers_they_keep_a_legal_command(
        steps in prop::collection::vec(step(), 1..10)
    ) {
        let workspace = Workspace::new("form-prop");
        let mut engine = engine(&workspace);
        let mut now = 1;
        engine
            .person_command(SESSION, PersonCommandKind::Start, Some("total".into()), now)
            .unwrap();
        for step in steps {
            now += 1000;
            match step {
                Step::HandOff(steps) => {
                    hand_off(&mut engine, steps, now);
                }
                Step::Answer { stale, answer } => {
                    let current = round(&mut engine, now);
                    let asked = if stale { current.saturating_sub(1) } else { current };
                    let before = engine.status(SESSION, now).unwrap();
                    let said = engine.answer_hand_off(SESSION, asked, answer.clone(), now);
                    // Never an error: an answer that cannot apply says so.
                    let said = said.unwrap();
                    prop_assert!(!said.is_empty());
                    let after = engine.status(SESSION, now).unwrap();
                    let applies = before.stage == Some(Stage::UserTurn) && asked == current;
                    if !applies || matches!(answer, FormAnswer::Reply(_) | FormAnswer::Dismissed(_)) {
                        prop_assert_eq!(before.stage, after.stage);
                        prop_assert_eq!(before.round, after.round);
                    }
                }
                Step::Button(kind) => {
                    let _ = engine.person_command(SESSION, kind, None, now);
                }
            }
            let status = engine.status(SESSION, now).unwrap();
            prop_assert!(status.active, "the session ended without the person ending it");
            prop_assert!(!status.user_commands.is_empty());
        }
        // The first command offered is accepted as offered.
        now += 1000;
        let status = engine.status(SESSION, now).unwrap();
        let kind = match status.user_commands[0] {
            CommandName::Proceed => PersonCommandKind::Proceed,
            CommandName::Done => PersonCommandKind::Done,
            CommandName::Abort => PersonCommandKind::Abort,
            other => panic!("{other:?} is not a person's command"),
        };
        prop_assert!(engine.person_command(SESSION, kind, None, now).is_ok());
    }
}
