//! Waking the agent: a person's Proceed or Mark fixed given away from the
//! agent's chat is kept as a wake request in the session's activity; a
//! waker (a process that can start a turn in its host) hears of it once it
//! is due, claims it under the session's lock and starts the turn with the
//! kickoff this engine renders for its own host.

use super::*;
use crate::core::harness_memory::PersonCommandKind;
use crate::core::machine::Kickoff;
use crate::core::model::Stage;
use crate::core::text::WakeLine;
use crate::core::wake::{self, WakeRequest, WakeStatus};
use crate::workspace::store::wakers;

/// What became of a person's wake request, for the face that gave the
/// command: who will wake the agent, or that nobody here can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeOutlook {
    pub request: WakeRequest,
    /// The hosts of the live wakers of this workspace.
    pub wakers: Vec<Host>,
    /// Whether the agent's turn runs now (a hand-off form may be open).
    pub busy: bool,
}

impl WakeOutlook {
    /// The outlook of a request no waker acts on any more (delivered,
    /// superseded, expired), as editors hear of it.
    pub fn settled(request: WakeRequest) -> Self {
        WakeOutlook {
            request,
            wakers: Vec::new(),
            busy: false,
        }
    }

    /// `waiting`, `nobody`, `delivered` or `superseded`.
    pub fn state(&self) -> &'static str {
        match &self.request.status {
            WakeStatus::Pending if self.busy => "busy",
            WakeStatus::Pending if self.wakers.is_empty() => "nobody",
            WakeStatus::Pending => "waiting",
            WakeStatus::Delivered { .. } => "delivered",
            WakeStatus::Superseded { .. } => "superseded",
        }
    }

    /// The person's line for it.
    pub fn said(&self) -> String {
        let line = match &self.request.status {
            WakeStatus::Pending if self.busy => WakeLine::Busy,
            WakeStatus::Pending if self.wakers.is_empty() => WakeLine::Nobody,
            WakeStatus::Pending => WakeLine::Waiting(&self.wakers),
            WakeStatus::Delivered { by, .. } => WakeLine::Delivered {
                by: Host::of_slug(by).unwrap_or_default(),
            },
            WakeStatus::Superseded { .. } => WakeLine::Superseded,
        };
        text::wake_line(&line, self.request.kind, &self.request.run)
    }
}

impl Engine {
    /// Commands through this engine are given away from the agent's chat
    /// (a terminal, an editor): they ask for the agent to be woken.
    pub fn set_asks_wake(&mut self, asks: bool) {
        self.asks_wake = asks;
    }

    /// After a person's command was applied: ask for a wake when it came
    /// from away from the chat and gave the agent a kickoff.
    pub(super) fn ask_wake(
        &mut self,
        session_id: &str,
        kind: PersonCommandKind,
        applied: &Applied,
        now: u64,
    ) -> Result<(), EngineError> {
        if !self.asks_wake || !wake::wakes(kind) {
            return Ok(());
        }
        let Some(kickoff) = applied.effects.iter().find_map(|effect| match effect {
            Effect::Kickoff(kickoff) => Some(*kickoff),
            _ => None,
        }) else {
            return Ok(());
        };
        let Some(session) = applied.after.state.session() else {
            return Ok(());
        };
        let round = match kickoff {
            Kickoff::Proceed { closed_round } => closed_round,
            _ => session.round().index,
        };
        let run = match kickoff {
            Kickoff::Proceed { closed_round } => session
                .rounds
                .iter()
                .find(|r| r.index == closed_round)
                .map(|r| r.run_id.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let from = Some(self.host).filter(|h| wake::asked_from(Some(*h)));
        let request = WakeRequest::new(applied.after.revision, kind, round, run, from, now);
        self.change_activity(session_id, now, &mut |activity| {
            activity.wake.ask(request.clone())
        })
    }

    /// The session's wake request made at `revision`, as saved, with the
    /// live wakers; None when there is none (the command asked for none).
    pub fn wake_outlook(
        &mut self,
        session_id: &str,
        revision: u64,
    ) -> Result<Option<WakeOutlook>, EngineError> {
        let activity = self.store.load_activity(session_id)?;
        let busy = activity.turn.state().is_busy();
        let request = activity.wake.request.filter(|r| r.revision == revision);
        Ok(request.map(|request| WakeOutlook {
            request,
            wakers: wakers::live(&self.config.state_dir),
            busy,
        }))
    }

    /// A waker for this engine's host takes the due request made at
    /// `revision`; the kickoff to start the turn with, when it won it.
    pub fn claim_wake(
        &mut self,
        session_id: &str,
        revision: u64,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        self.claim_wake_in(session_id, revision, false, now)
    }

    /// `claim_wake`; `in_turn`: the claimer is the agent's running turn
    /// itself (its hand-off form was open when the person pressed Proceed
    /// elsewhere), which goes on with the kickoff instead of a new turn.
    fn claim_wake_in(
        &mut self,
        session_id: &str,
        revision: u64,
        in_turn: bool,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        let stored = self.load(session_id)?;
        if stored.revision != revision {
            return Ok(None);
        }
        let host = self.host;
        let pid = std::process::id();
        let mut won = false;
        self.change_activity(session_id, now, &mut |activity| {
            let turn = if in_turn {
                TurnState::Idle
            } else {
                activity.turn.state()
            };
            won = activity.wake.claim(revision, turn, host, pid, now);
        })?;
        let saved = self.store.load_activity(session_id)?;
        let ours = matches!(
            saved.wake.request.as_ref().map(|r| (&r.status, r.revision)),
            Some((wake::WakeStatus::Delivered { pid: by, .. }, rev)) if *by == pid && rev == revision
        );
        if !(won && ours) {
            return Ok(None);
        }
        let Some(request) = saved.wake.request else {
            return Ok(None);
        };
        let kickoff = match request.kind {
            PersonCommandKind::Done => Kickoff::Done,
            _ => Kickoff::Proceed {
                closed_round: request.round,
            },
        };
        let env = self.env(session_id, stored.state.session().is_some());
        Ok(stored
            .state
            .session()
            .map(|session| text::kickoff(session, kickoff, &env)))
    }

    /// The person spoke in the agent's chat while a wake request waits (a
    /// host nothing wakes, or before its waker did): that turn takes the
    /// request, and starts from its kickoff, as the woken one would have.
    pub fn wake_in_chat(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        let Some(revision) = self.waiter_view(session_id, now)?.due else {
            return Ok(None);
        };
        self.claim_wake(session_id, revision, now)
    }

    /// While a hand-off form for `round` is open: None as long as the round
    /// is still the person's; once it moved on elsewhere (Proceed or Mark
    /// fixed pressed in a terminal or an editor), the text the hand-off call
    /// returns instead of the form's answer: the waiting request's kickoff,
    /// taken by this turn, or what the session is now.
    pub fn hand_off_overtaken(
        &mut self,
        session_id: &str,
        round: u32,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        let stored = self.load(session_id)?;
        let now_is = match stored.state.session() {
            Some(s) if s.stage == Stage::UserTurn && s.round().index == round => return Ok(None),
            Some(s) => format!("stage {}, round {}", s.stage.as_str(), s.round().index),
            None => "no session is active".to_string(),
        };
        if let Some(kickoff) = self.wake_for_form(session_id, now)? {
            return Ok(Some(kickoff));
        }
        Ok(Some(text::form_too_late("closed", &now_is)))
    }

    /// The turn that holds a hand-off form whose round moved on elsewhere
    /// takes the waiting wake request: its kickoff, with the person's
    /// receipt left for the host to show.
    pub(super) fn wake_for_form(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<String>, EngineError> {
        let revision = self.store.load(session_id)?.revision;
        // The form's own turn is the one that takes it: due as if idle.
        let activity = self.store.load_activity(session_id)?;
        let Some(request) = activity.wake.due(revision, TurnState::Idle, now).cloned() else {
            return Ok(None);
        };
        let Some(kickoff) = self.claim_wake_in(session_id, request.revision, true, now)? else {
            return Ok(None);
        };
        let said = text::wake_started(request.kind, &request.run);
        self.change_activity(session_id, now, &mut |activity| {
            activity.harness.leave_receipt(&said, now)
        })?;
        Ok(Some(kickoff))
    }

    /// What observers hear of the wake when the activity changed from
    /// `heard` to `saved`: a request that became due, or one whose fate
    /// was decided.
    pub(super) fn announce_wake(
        &mut self,
        session_id: &str,
        heard: &Activity,
        saved: &Activity,
        now: u64,
    ) {
        let Some(request) = saved.wake.request.as_ref() else {
            return;
        };
        if heard.wake == saved.wake && heard.turn.state() == saved.turn.state() {
            return;
        }
        if request.pending() {
            let revision = match self.store.load(session_id) {
                Ok(stored) => stored.revision,
                Err(_) => return,
            };
            let due = wake::Wake::newly_due(
                (&heard.wake, heard.turn.state()),
                (&saved.wake, saved.turn.state()),
                revision,
                now,
            );
            if let Some(request) = due {
                self.changes.push(Change::Wake {
                    session_id: session_id.to_string(),
                    request,
                });
            }
        } else if heard.wake.request.as_ref().map(|r| &r.status) != Some(&request.status) {
            self.changes.push(Change::Wake {
                session_id: session_id.to_string(),
                request: request.clone(),
            });
        }
    }
}

/// What a waiting waker needs to know of the session, read cheaply (no
/// scan): whether a request is due, and whether it should go on waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaiterView {
    /// The revision of the request due now, if one is.
    pub due: Option<u64>,
    /// Whether the agent's turn runs.
    pub busy: bool,
    /// Whether a debug session is active (a command could still ask).
    pub active: bool,
}

impl Engine {
    pub fn waiter_view(&mut self, session_id: &str, now: u64) -> Result<WaiterView, EngineError> {
        let stored = self.store.load(session_id)?;
        let activity = self.store.load_activity(session_id)?;
        let turn = activity.turn.state();
        Ok(WaiterView {
            due: activity
                .wake
                .due(stored.revision, turn, now)
                .map(|r| r.revision),
            busy: turn.is_busy(),
            active: stored.state.session().is_some(),
        })
    }
}
