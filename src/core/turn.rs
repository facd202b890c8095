//! Turn state: what the agent's current turn is doing right now.
//!
//! A closed set of states driven only by observable events, never by timers,
//! so the label always tells the truth. The reducer is total: every
//! `(state, event)` pair has a defined result.

use serde::{Deserialize, Serialize};

/// What the current turn is doing. `Idle` means no turn is running.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TurnState {
    /// No turn is running; the user can type.
    #[default]
    Idle,
    /// The turn started but no delta has arrived yet (request sent, nothing back).
    Connecting,
    /// The newest delta was reasoning.
    Thinking,
    /// The newest delta was a tool call.
    Working,
    /// The newest delta was visible output.
    Streaming,
}

impl TurnState {
    /// Status-line text. Idle has no ellipsis because nothing is pending.
    pub fn label(self) -> &'static str {
        match self {
            TurnState::Idle => "idle",
            TurnState::Connecting => "connecting\u{2026}",
            TurnState::Thinking => "thinking\u{2026}",
            TurnState::Working => "working\u{2026}",
            TurnState::Streaming => "streaming\u{2026}",
        }
    }

    /// True while a turn is running, so editors can show a spinner.
    pub fn is_busy(self) -> bool {
        self != TurnState::Idle
    }
}

/// An observable event from the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnEvent {
    /// A new user turn began.
    TurnStart,
    /// A reasoning delta arrived.
    Reasoning,
    /// A tool-call delta arrived.
    ToolCall,
    /// A visible-output delta arrived.
    Content,
    /// The turn finished normally.
    TurnEnd,
    /// The user cancelled the turn.
    Cancel,
    /// The turn failed.
    Error,
}

/// The transition function.
///
/// Deltas always win, even when they move the state "backward", so the label
/// names the newest activity rather than the furthest point reached.
/// `TurnStart` always begins a fresh turn at `Connecting` (no state bleeds
/// across turns); only a delta leaves `Connecting`. End, cancel and error are
/// terminal and always land on `Idle`, so no path strands the session busy.
/// The state is turn-scoped: nothing but `TurnStart` returns to `Connecting`.
pub fn next_turn_state(current: TurnState, event: TurnEvent) -> TurnState {
    // `current` matters to no row: every event names its target outright.
    let _ = current;
    match event {
        TurnEvent::TurnStart => TurnState::Connecting,
        TurnEvent::Reasoning => TurnState::Thinking,
        TurnEvent::ToolCall => TurnState::Working,
        TurnEvent::Content => TurnState::Streaming,
        TurnEvent::TurnEnd | TurnEvent::Cancel | TurnEvent::Error => TurnState::Idle,
    }
}

/// Provider status text is cut to this many characters: it is a suffix to
/// the label, not a sentence.
pub const MAX_DETAIL_CHARS: usize = 60;

/// The provider's own status text (Fido's `onStatus`) as a detail: one
/// line, control characters dropped, at most `MAX_DETAIL_CHARS`; `None`
/// when blank.
pub fn read_detail(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|word| word.chars().filter(|c| !c.is_control()).collect())
        .filter(|word: &String| !word.is_empty())
        .collect();
    if words.is_empty() {
        return None;
    }
    let line = words.join(" ");
    if line.chars().count() <= MAX_DETAIL_CHARS {
        return Some(line);
    }
    let mut cut: String = line.chars().take(MAX_DETAIL_CHARS - 1).collect();
    cut.push('\u{2026}');
    Some(cut)
}

/// Holds one session's turn state and reports only real changes, so a burst
/// of identical deltas costs one notification.
///
/// Beside the state it keeps the provider's optional detail, which is
/// never authoritative: it never moves the state, it belongs to the state
/// it arrived with (a change of state without a detail of its own drops
/// it), and a turn's end, cancel or error clears it with the state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnTracker {
    state: TurnState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

impl TurnTracker {
    /// A tracker for a session with no running turn.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies an event; returns the new state only when it differs from the old one.
    pub fn apply(&mut self, event: TurnEvent) -> Option<TurnState> {
        let before = self.state;
        self.apply_with_detail(event, None);
        (self.state != before).then_some(self.state)
    }

    /// Applies an event carrying the provider's status text, if any (read
    /// by `read_detail`). Returns whether the state or the detail changed.
    pub fn apply_with_detail(&mut self, event: TurnEvent, detail: Option<&str>) -> bool {
        let next = next_turn_state(self.state, event);
        let detail = if next == TurnState::Idle {
            None
        } else {
            match detail.and_then(read_detail) {
                Some(detail) => Some(detail),
                None if next == self.state => self.detail.clone(),
                None => None,
            }
        };
        let changed = next != self.state || detail != self.detail;
        self.state = next;
        self.detail = detail;
        changed
    }

    /// The provider's detail for the current state, if it gave one.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The current state.
    pub fn state(&self) -> TurnState {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL_STATES: [TurnState; 5] = [
        TurnState::Idle,
        TurnState::Connecting,
        TurnState::Thinking,
        TurnState::Working,
        TurnState::Streaming,
    ];

    const ALL_EVENTS: [TurnEvent; 7] = [
        TurnEvent::TurnStart,
        TurnEvent::Reasoning,
        TurnEvent::ToolCall,
        TurnEvent::Content,
        TurnEvent::TurnEnd,
        TurnEvent::Cancel,
        TurnEvent::Error,
    ];

    /// The transition table written out row by row, independent of the reducer.
    fn expected(event: TurnEvent) -> TurnState {
        match event {
            TurnEvent::TurnStart => TurnState::Connecting,
            TurnEvent::Reasoning => TurnState::Thinking,
            TurnEvent::ToolCall => TurnState::Working,
            TurnEvent::Content => TurnState::Streaming,
            TurnEvent::TurnEnd => TurnState::Idle,
            TurnEvent::Cancel => TurnState::Idle,
            TurnEvent::Error => TurnState::Idle,
        }
    }

    fn labels_of(events: &[TurnEvent]) -> Vec<&'static str> {
        let mut tracker = TurnTracker::new();
        events
            .iter()
            .filter_map(|event| tracker.apply(*event))
            .map(TurnState::label)
            .collect()
    }

    #[test]
    fn every_row_of_the_table_from_every_state() {
        for state in ALL_STATES {
            for event in ALL_EVENTS {
                assert_eq!(
                    next_turn_state(state, event),
                    expected(event),
                    "{state:?} + {event:?}"
                );
            }
        }
    }

    #[test]
    fn turn_start_from_idle_connects() {
        assert_eq!(
            next_turn_state(TurnState::Idle, TurnEvent::TurnStart),
            TurnState::Connecting
        );
    }

    #[test]
    fn backward_moves_are_allowed() {
        assert_eq!(
            next_turn_state(TurnState::Streaming, TurnEvent::Reasoning),
            TurnState::Thinking
        );
        assert_eq!(
            next_turn_state(TurnState::Streaming, TurnEvent::ToolCall),
            TurnState::Working
        );
        assert_eq!(
            next_turn_state(TurnState::Working, TurnEvent::Reasoning),
            TurnState::Thinking
        );
    }

    #[test]
    fn deltas_never_return_to_connecting_mid_turn() {
        for state in ALL_STATES {
            for event in [
                TurnEvent::Reasoning,
                TurnEvent::ToolCall,
                TurnEvent::Content,
            ] {
                assert_ne!(next_turn_state(state, event), TurnState::Connecting);
            }
        }
    }

    #[test]
    fn a_turn_with_no_delta_stays_connecting_until_it_ends() {
        let mut tracker = TurnTracker::new();
        assert_eq!(
            tracker.apply(TurnEvent::TurnStart),
            Some(TurnState::Connecting)
        );
        // A repeated turn start is not a delta and does not leave connecting.
        assert_eq!(tracker.apply(TurnEvent::TurnStart), None);
        assert_eq!(tracker.state(), TurnState::Connecting);
        for end in [TurnEvent::TurnEnd, TurnEvent::Cancel, TurnEvent::Error] {
            let mut tracker = TurnTracker::new();
            tracker.apply(TurnEvent::TurnStart);
            assert_eq!(tracker.apply(end), Some(TurnState::Idle));
        }
    }

    #[test]
    fn a_burst_of_identical_deltas_is_one_change() {
        let mut tracker = TurnTracker::new();
        tracker.apply(TurnEvent::TurnStart);
        let changes = (0..10_000)
            .filter_map(|_| tracker.apply(TurnEvent::Content))
            .count();
        assert_eq!(changes, 1);
        assert_eq!(tracker.state(), TurnState::Streaming);
    }

    #[test]
    fn label_sequence_plain_answer() {
        let events = [
            TurnEvent::TurnStart,
            TurnEvent::Content,
            TurnEvent::Content,
            TurnEvent::TurnEnd,
        ];
        assert_eq!(
            labels_of(&events),
            ["connecting\u{2026}", "streaming\u{2026}", "idle"]
        );
    }

    #[test]
    fn label_sequence_reason_then_answer() {
        let events = [
            TurnEvent::TurnStart,
            TurnEvent::Reasoning,
            TurnEvent::Reasoning,
            TurnEvent::Content,
            TurnEvent::TurnEnd,
        ];
        assert_eq!(
            labels_of(&events),
            [
                "connecting\u{2026}",
                "thinking\u{2026}",
                "streaming\u{2026}",
                "idle"
            ]
        );
    }

    #[test]
    fn label_sequence_reason_tool_answer() {
        let events = [
            TurnEvent::TurnStart,
            TurnEvent::Reasoning,
            TurnEvent::ToolCall,
            TurnEvent::ToolCall,
            TurnEvent::Content,
            TurnEvent::TurnEnd,
        ];
        assert_eq!(
            labels_of(&events),
            [
                "connecting\u{2026}",
                "thinking\u{2026}",
                "working\u{2026}",
                "streaming\u{2026}",
                "idle"
            ]
        );
    }

    #[test]
    fn labels_and_busy() {
        assert_eq!(TurnState::Idle.label(), "idle");
        assert!(!TurnState::Idle.is_busy());
        for state in &ALL_STATES[1..] {
            assert!(state.is_busy());
            assert!(state.label().ends_with('\u{2026}'));
        }
    }

    #[test]
    fn wire_names() {
        assert_eq!(
            serde_json::to_value(TurnState::Connecting).ok(),
            Some(serde_json::json!("connecting"))
        );
        assert_eq!(
            serde_json::to_value(TurnEvent::TurnStart).ok(),
            Some(serde_json::json!("turnStart"))
        );
        assert_eq!(
            serde_json::from_value::<TurnEvent>(serde_json::json!("toolCall")).ok(),
            Some(TurnEvent::ToolCall)
        );
        assert_eq!(
            serde_json::to_value(TurnTracker::new()).ok(),
            Some(serde_json::json!({"state": "idle"}))
        );
    }

    #[test]
    fn the_provider_detail_is_a_suffix_never_the_state() {
        let mut tracker = TurnTracker::new();
        assert!(tracker.apply_with_detail(TurnEvent::TurnStart, Some("  dialing\nthe API ")));
        assert_eq!(tracker.state(), TurnState::Connecting);
        assert_eq!(tracker.detail(), Some("dialing the API"));
        // A delta of the same state keeps it; the same detail again is no change.
        assert!(!tracker.apply_with_detail(TurnEvent::TurnStart, Some("dialing the API")));
        // A new state without a detail of its own drops it.
        assert!(tracker.apply_with_detail(TurnEvent::Reasoning, None));
        assert_eq!(tracker.detail(), None);
        assert!(tracker.apply_with_detail(TurnEvent::Reasoning, Some("searching")));
        assert!(!tracker.apply_with_detail(TurnEvent::Reasoning, None));
        assert_eq!(tracker.detail(), Some("searching"));
        // The turn's end clears it, whatever the provider says.
        assert!(tracker.apply_with_detail(TurnEvent::TurnEnd, Some("still going")));
        assert_eq!((tracker.state(), tracker.detail()), (TurnState::Idle, None));
    }

    #[test]
    fn a_detail_is_one_short_line() {
        assert_eq!(read_detail(" \t\n"), None);
        assert_eq!(read_detail("a\u{1b}[2Jb"), Some("a[2Jb".to_string()));
        let long = read_detail(&"x".repeat(500)).unwrap_or_default();
        assert_eq!(long.chars().count(), MAX_DETAIL_CHARS);
        assert!(long.ends_with('\u{2026}'));
    }

    fn any_event() -> impl Strategy<Value = TurnEvent> {
        proptest::sample::select(ALL_EVENTS.to_vec())
    }

    proptest! {
        #[test]
        fn terminal_events_always_land_on_idle_and_deltas_name_their_state(
            events in proptest::collection::vec(any_event(), 0..64)
        ) {
            let mut tracker = TurnTracker::new();
            for event in events {
                let before = tracker.state();
                let change = tracker.apply(event);
                let after = tracker.state();
                prop_assert_eq!(change.is_some(), before != after);
                match event {
                    TurnEvent::TurnEnd | TurnEvent::Cancel | TurnEvent::Error => {
                        prop_assert_eq!(after, TurnState::Idle)
                    }
                    TurnEvent::Reasoning => prop_assert_eq!(after, TurnState::Thinking),
                    TurnEvent::ToolCall => prop_assert_eq!(after, TurnState::Working),
                    TurnEvent::Content => prop_assert_eq!(after, TurnState::Streaming),
                    TurnEvent::TurnStart => prop_assert_eq!(after, TurnState::Connecting),
                }
            }
        }
    }
}
