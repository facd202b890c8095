//! What the agent is doing in one session, as editors show it: its turn
//! state, its progress bubble and its subagents (DESIGN section 5). It is
//! kept beside the debug session so every process serving the workspace sees
//! the same activity, and what observers must hear is the difference between
//! two activities, whoever made the change.

use super::agents::{AgentRecord, AgentRegistry};
use super::harness_memory::HarnessMemory;
use super::progress::{Bubble, ProgressTracker};
use super::turn::{TurnState, TurnTracker};
use super::wake::Wake;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Activity {
    /// Grows by one on every saved change.
    pub revision: u64,
    pub turn: TurnTracker,
    /// Holds this one session's progress.
    pub progress: ProgressTracker,
    pub agents: AgentRegistry,
    /// What the hooks remember between their processes.
    pub harness: HarnessMemory,
    /// The person's last command that asked to wake the agent.
    pub wake: Wake,
}

/// One thing an observer should hear about an activity change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityChange {
    /// The turn state or the provider's detail beside it.
    Turn(TurnState, Option<String>),
    /// The visible bubble; None when it is gone.
    Progress(Option<Bubble>),
    Agent(AgentRecord),
}

impl Activity {
    /// Everything the same apart from the revision.
    pub fn same_as(&self, other: &Activity) -> bool {
        self.turn == other.turn
            && self.progress == other.progress
            && self.agents == other.agents
            && self.harness == other.harness
            && self.wake == other.wake
    }

    /// Whether this (saved) activity is news to one who heard `heard`: its
    /// revision differs, or, saturated, its content does.
    pub fn news_to(&self, heard: &Activity) -> bool {
        self.revision != heard.revision
            || (self.revision == super::revision::MAX_REVISION && !self.same_as(heard))
    }
}

/// What changed from `before` to `after`, as observers see it at `now`: a
/// different turn state, a different visible bubble, each subagent record
/// that is new or different (in the registry's order).
pub fn activity_changes(
    session_id: &str,
    before: &Activity,
    after: &Activity,
    now: u64,
) -> Vec<ActivityChange> {
    let mut changes = Vec::new();
    if before.turn != after.turn {
        changes.push(ActivityChange::Turn(
            after.turn.state(),
            after.turn.detail().map(str::to_string),
        ));
    }
    let bubble = after.progress.visible(session_id, now);
    if before.progress.visible(session_id, now) != bubble {
        changes.push(ActivityChange::Progress(bubble));
    }
    for record in after.agents.list() {
        if before.agents.get(&record.id) != Some(&record) {
            changes.push(ActivityChange::Agent(record));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::agents::{AgentEvent, AgentEventKind};
    use crate::core::turn::TurnEvent;
    use serde_json::json;

    fn agent(id: &str, kind: AgentEventKind) -> AgentEvent {
        AgentEvent {
            id: id.into(),
            kind,
            agent_type: None,
            description: None,
            result: None,
            error: None,
            stats: Default::default(),
        }
    }

    #[test]
    fn only_real_differences_are_reported() {
        let before = Activity::default();
        assert!(activity_changes("s", &before, &before.clone(), 10).is_empty());
        let mut after = before.clone();
        after.turn.apply(TurnEvent::TurnStart);
        after.progress.turn_start("s", 10);
        after
            .progress
            .todos("s", &json!([{"content": "a", "status": "in_progress"}]), 10);
        after.agents.apply(agent("a1", AgentEventKind::Running), 10);
        let changes = activity_changes("s", &before, &after, 11);
        assert_eq!(changes.len(), 3, "{changes:?}");
        assert_eq!(
            changes[0],
            ActivityChange::Turn(TurnState::Connecting, None)
        );
        assert!(matches!(changes[1], ActivityChange::Progress(Some(_))));
        assert!(matches!(changes[2], ActivityChange::Agent(ref r) if r.id == "a1"));
        // A repeated announcement that changes no record says nothing.
        let mut again = after.clone();
        again.agents.apply(agent("a1", AgentEventKind::Queued), 12);
        assert!(activity_changes("s", &after, &again, 12).is_empty());
    }

    #[test]
    fn it_round_trips_through_json() {
        let mut activity = Activity::default();
        activity.turn.apply(TurnEvent::Reasoning);
        activity
            .agents
            .apply(agent("a1", AgentEventKind::Running), 3);
        let line = crate::core::progress::read_activity(None, Some("Reading cart.py"));
        activity.progress.activity("s", line.unwrap(), 3);
        let text = serde_json::to_string(&activity).unwrap();
        let back: Activity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, activity);
        assert_eq!(
            serde_json::from_str::<Activity>("{}").unwrap(),
            Activity::default()
        );
    }
}
