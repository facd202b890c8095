//! Waking the agent (DESIGN section 9): a person's Proceed or Mark fixed
//! given outside the agent's chat (a terminal, an editor's button) asks for
//! the agent's next turn to start by itself. The request is kept in the
//! session's activity, so every process serving the workspace sees it; a
//! process that can start a turn in its host (a waker) claims it, once, and
//! only while no turn of the agent runs. Pure: the engine keeps it.

use super::harness_memory::PersonCommandKind;
use super::host::Host;
use super::turn::TurnState;
use serde::{Deserialize, Serialize};

/// A request nobody took within this long is not delivered any more: an
/// agent started an hour later is not woken by an old Proceed.
pub const WAKE_TTL_MS: u64 = 30 * 60 * 1000;

/// How long a person's command waits for a waker to take its request
/// before it says how to go on by hand.
pub const WAKE_WAIT_MS: u64 = 5_000;

/// One person's command waiting to wake the agent, or what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WakeRequest {
    /// The session state's revision the command wrote: one request per
    /// revision, however many processes hear of it.
    pub revision: u64,
    pub kind: PersonCommandKind,
    /// The round the agent works in now, and the run whose evidence its
    /// kickoff reads (the round just closed; empty for Mark fixed).
    pub round: u32,
    pub run: String,
    /// The host the person pressed it in (`None`: a terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub at: u64,
    pub status: WakeStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum WakeStatus {
    /// Waiting for a waker and for the agent's turn to be over.
    Pending,
    /// A waker took it and started the agent's turn.
    Delivered {
        /// The host it was delivered in (a slug) and by which process.
        by: String,
        pid: u32,
        at: u64,
    },
    /// A turn started before anyone woke the agent (the person typed in
    /// the chat): nothing is sent.
    Superseded { at: u64 },
}

/// The session's latest wake request, kept in its activity.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Wake {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<WakeRequest>,
}

/// Whether a person's command from `from` asks for a wake: one given in a
/// terminal or an editor, away from the agent's chat. In the chat (a typed
/// command, the form, a host's own command) the host starts the turn.
pub fn asked_from(from: Option<Host>) -> bool {
    match from {
        None => true,
        Some(host) => matches!(host, Host::VsCode | Host::Neovim | Host::Emacs),
    }
}

/// Whether `kind` is a command whose kickoff the agent is woken with.
pub fn wakes(kind: PersonCommandKind) -> bool {
    matches!(kind, PersonCommandKind::Proceed | PersonCommandKind::Done)
}

impl WakeRequest {
    pub fn new(
        revision: u64,
        kind: PersonCommandKind,
        round: u32,
        run: String,
        from: Option<Host>,
        at: u64,
    ) -> Self {
        WakeRequest {
            revision,
            kind,
            round,
            run,
            from: from.map(|h| h.slug().to_string()),
            at,
            status: WakeStatus::Pending,
        }
    }

    pub fn pending(&self) -> bool {
        self.status == WakeStatus::Pending
    }

    pub fn expired(&self, now: u64) -> bool {
        now.saturating_sub(self.at) > WAKE_TTL_MS
    }

    /// The waker that delivered it, once one has.
    pub fn delivered_by(&self) -> Option<String> {
        match &self.status {
            WakeStatus::Delivered { by, .. } => Some(by.clone()),
            _ => None,
        }
    }
}

impl Wake {
    /// A new request replaces whatever came before it.
    pub fn ask(&mut self, request: WakeRequest) {
        self.request = Some(request);
    }

    /// The request a waker may deliver now: pending, not expired, made for
    /// the state as it still is (`revision`), and no turn is running.
    pub fn due(&self, revision: u64, turn: TurnState, now: u64) -> Option<&WakeRequest> {
        self.request
            .as_ref()
            .filter(|r| r.pending() && !r.expired(now) && r.revision == revision)
            .filter(|_| !turn.is_busy())
    }

    /// Takes the due request for `by` (process `pid`); whether it was this
    /// call that took it. Called under the session's lock, so of two wakers
    /// exactly one wins.
    pub fn claim(&mut self, revision: u64, turn: TurnState, by: Host, pid: u32, now: u64) -> bool {
        if self.due(revision, turn, now).is_none() {
            return false;
        }
        if let Some(request) = self.request.as_mut() {
            request.status = WakeStatus::Delivered {
                by: by.slug().to_string(),
                pid,
                at: now,
            };
        }
        true
    }

    /// A turn started (`before` idle, `after` busy) while the request was
    /// still pending: the person went on in the chat, so it is not sent.
    pub fn turn_changed(&mut self, before: TurnState, after: TurnState, now: u64) {
        if before.is_busy() || !after.is_busy() {
            return;
        }
        if let Some(request) = self.request.as_mut().filter(|r| r.pending()) {
            request.status = WakeStatus::Superseded { at: now };
        }
    }

    /// Whether `after` holds a request that became due since `before`: a
    /// waker hears of it once per request, when it was made or when the
    /// turn it waited for ended.
    pub fn newly_due(
        before: (&Wake, TurnState),
        after: (&Wake, TurnState),
        revision: u64,
        now: u64,
    ) -> Option<WakeRequest> {
        let due = after.0.due(revision, after.1, now)?;
        let was = before.0.due(revision, before.1, now);
        (was != Some(due)).then(|| due.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn request(revision: u64, at: u64) -> WakeRequest {
        WakeRequest::new(
            revision,
            PersonCommandKind::Proceed,
            2,
            "r1-a".into(),
            None,
            at,
        )
    }

    #[test]
    fn only_commands_away_from_the_chat_ask_for_a_wake() {
        assert!(asked_from(None));
        assert!(asked_from(Some(Host::VsCode)));
        assert!(asked_from(Some(Host::Neovim)));
        assert!(!asked_from(Some(Host::ClaudeCode)));
        assert!(!asked_from(Some(Host::Pi)));
        assert!(!asked_from(Some(Host::Acp)));
        assert!(wakes(PersonCommandKind::Done));
        assert!(!wakes(PersonCommandKind::Abort));
        assert!(!wakes(PersonCommandKind::Start));
    }

    #[test]
    fn a_request_is_due_while_idle_for_its_own_revision() {
        let mut wake = Wake::default();
        wake.ask(request(7, 1_000));
        assert!(wake.due(7, TurnState::Idle, 2_000).is_some());
        assert!(wake.due(7, TurnState::Working, 2_000).is_none());
        assert!(
            wake.due(8, TurnState::Idle, 2_000).is_none(),
            "state moved on"
        );
        assert!(wake
            .due(7, TurnState::Idle, 1_000 + WAKE_TTL_MS + 1)
            .is_none());
    }

    #[test]
    fn two_wakers_one_claim() {
        let mut wake = Wake::default();
        wake.ask(request(7, 1_000));
        assert!(!wake.claim(7, TurnState::Thinking, Host::Pi, 1, 1_100));
        assert!(wake.claim(7, TurnState::Idle, Host::Pi, 1, 1_100));
        assert!(!wake.claim(7, TurnState::Idle, Host::ClaudeCode, 2, 1_200));
        assert_eq!(
            wake.request.unwrap().status,
            WakeStatus::Delivered {
                by: "pi".into(),
                pid: 1,
                at: 1_100
            }
        );
    }

    #[test]
    fn a_turn_the_person_started_supersedes_the_request() {
        let mut wake = Wake::default();
        wake.ask(request(7, 1_000));
        wake.turn_changed(TurnState::Working, TurnState::Thinking, 1_100);
        assert!(wake.request.as_ref().unwrap().pending(), "no new turn");
        wake.turn_changed(TurnState::Idle, TurnState::Connecting, 1_200);
        assert_eq!(
            wake.request.as_ref().unwrap().status,
            WakeStatus::Superseded { at: 1_200 }
        );
        assert!(!wake.claim(7, TurnState::Idle, Host::Pi, 1, 1_300));
    }

    #[test]
    fn a_request_is_announced_when_it_becomes_due() {
        let none = Wake::default();
        let mut asked = Wake::default();
        asked.ask(request(7, 1_000));
        let idle = TurnState::Idle;
        let busy = TurnState::Working;
        assert!(Wake::newly_due((&none, idle), (&asked, idle), 7, 1_100).is_some());
        assert!(Wake::newly_due((&asked, idle), (&asked, idle), 7, 1_100).is_none());
        assert!(Wake::newly_due((&none, busy), (&asked, busy), 7, 1_100).is_none());
        // The turn it waited for ended.
        assert!(Wake::newly_due((&asked, busy), (&asked, idle), 7, 1_100).is_some());
    }

    fn turn() -> impl Strategy<Value = TurnState> {
        prop_oneof![
            Just(TurnState::Idle),
            Just(TurnState::Connecting),
            Just(TurnState::Thinking),
            Just(TurnState::Working),
            Just(TurnState::Streaming),
        ]
    }

    proptest! {
        /// However claims and turns interleave, one request is delivered at
        /// most once, and never while a turn runs.
        #[test]
        fn delivered_at_most_once(steps in proptest::collection::vec((turn(), any::<bool>()), 0..40)) {
            let mut wake = Wake::default();
            wake.ask(request(3, 0));
            let mut before = TurnState::Idle;
            let mut claims = 0;
            for (i, (now_turn, try_claim)) in steps.into_iter().enumerate() {
                wake.turn_changed(before, now_turn, i as u64);
                if try_claim && wake.claim(3, now_turn, Host::Pi, 1, i as u64) {
                    prop_assert!(!now_turn.is_busy());
                    claims += 1;
                }
                before = now_turn;
            }
            prop_assert!(claims <= 1);
        }
    }
}
