//! Per-session views, their visible bubbles and time to live.

use super::activity::ActivityLine;
use super::bubble::{bubble_for, Bubble};
use super::snapshot::{read_goal, read_todos};
use super::view::{fold_activity, fold_goal, fold_todos, ProgressView};
use super::{BUBBLE_TTL_MS, MAX_TRACKED_SESSIONS};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The visible bubble of one session changed; `bubble: None` means it is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BubbleChange {
    pub session_id: String,
    pub bubble: Option<Bubble>,
}
/// A published bubble and the moment it stops being visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ShownBubble {
    bubble: Bubble,
    expires_at_ms: u64,
}

impl ShownBubble {
    fn visible_at(&self, now_ms: u64) -> Option<&Bubble> {
        (now_ms < self.expires_at_ms).then_some(&self.bubble)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SessionProgress {
    session_id: String,
    view: ProgressView,
    turn_running: bool,
    shown: Option<ShownBubble>,
    /// When a progress event last touched the session (the limit of
    /// `MAX_TRACKED_SESSIONS` drops the least recently touched).
    #[serde(default)]
    touched_at_ms: u64,
}

impl SessionProgress {
    fn new(session_id: &str) -> Self {
        Self {
            session_id: session_id.to_string(),
            view: ProgressView::default(),
            turn_running: false,
            shown: None,
            touched_at_ms: 0,
        }
    }

    fn visible(&self, now_ms: u64) -> Option<Bubble> {
        self.shown
            .as_ref()
            .and_then(|shown| shown.visible_at(now_ms))
            .cloned()
    }

    /// (Re)publishes the view's bubble with a fresh time to live.
    fn publish(&mut self, now_ms: u64) {
        self.shown = bubble_for(&self.view).map(|bubble| ShownBubble {
            bubble,
            expires_at_ms: now_ms.saturating_add(BUBBLE_TTL_MS),
        });
    }
}

/// Per-session progress views and their visible bubbles.
///
/// Rules:
/// - A snapshot write (todos, goal, activity) that carries information
///   publishes the view's bubble for `BUBBLE_TTL_MS`.
/// - `turn_start` replays the kept view's bubble; while the turn runs, `tick`
///   keeps refreshing it (a tick late by a whole TTL lets it expire).
/// - `turn_end` retires the bubble at once but keeps a todo/goal view for the
///   next `turn_start`; an activity-only session is deleted outright.
/// - Every mutating call returns the visible-bubble changes a server must announce.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressTracker {
    /// Least recently touched first.
    sessions: Vec<SessionProgress>,
}

impl ProgressTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of tracked sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// The folded view of a session, if tracked.
    pub fn view(&self, session_id: &str) -> Option<&ProgressView> {
        self.find(session_id).map(|session| &session.view)
    }

    /// Whether the session's turn is running (between `turn_start` and `turn_end`).
    pub fn is_turn_running(&self, session_id: &str) -> bool {
        self.find(session_id)
            .is_some_and(|session| session.turn_running)
    }

    /// The session's bubble as an editor should show it at `now_ms`.
    pub fn visible(&self, session_id: &str, now_ms: u64) -> Option<Bubble> {
        self.find(session_id)?.visible(now_ms)
    }

    /// When a progress event last touched the session, if it is tracked.
    pub fn touched_at(&self, session_id: &str) -> Option<u64> {
        self.find(session_id).map(|session| session.touched_at_ms)
    }

    /// Drops the session's progress (the tracking limit evicted it); its
    /// visible bubble, if any, is reported gone.
    pub fn forget(&mut self, session_id: &str, now_ms: u64) -> Vec<BubbleChange> {
        let Some(index) = self
            .sessions
            .iter()
            .position(|session| session.session_id == session_id)
        else {
            return Vec::new();
        };
        let forgotten = self.sessions.remove(index);
        match forgotten.visible(now_ms) {
            Some(_) => vec![BubbleChange {
                session_id: forgotten.session_id,
                bubble: None,
            }],
            None => Vec::new(),
        }
    }

    /// A todo-list snapshot (the raw JSON array). Non-arrays, all-malformed and
    /// empty lists carry no information and change nothing.
    pub fn todos(&mut self, session_id: &str, raw_todos: &Value, now_ms: u64) -> Vec<BubbleChange> {
        let Some(todos) = raw_todos
            .as_array()
            .and_then(|raw| read_todos(raw))
            .filter(|todos| !todos.is_empty())
        else {
            return Vec::new();
        };
        self.write(session_id, now_ms, |view| fold_todos(view, Some(todos)))
    }

    /// A goal snapshot: `null` clears the goal; an unreadable goal changes nothing.
    pub fn goal(&mut self, session_id: &str, raw_goal: &Value, now_ms: u64) -> Vec<BubbleChange> {
        let goal = if raw_goal.is_null() {
            None
        } else {
            match read_goal(raw_goal) {
                Some(goal) => Some(goal),
                None => return Vec::new(),
            }
        };
        if goal.is_none() && self.find(session_id).is_none() {
            // Clearing an untracked session's goal is not worth an entry.
            return Vec::new();
        }
        self.write(session_id, now_ms, |view| fold_goal(view, goal))
    }

    /// An activity line (`read_activity`, `tool_activity`); ignored while
    /// the session has a todo list or goal.
    pub fn activity(
        &mut self,
        session_id: &str,
        line: ActivityLine,
        now_ms: u64,
    ) -> Vec<BubbleChange> {
        if self.find(session_id).is_some_and(|s| s.view.has_measure()) {
            return Vec::new();
        }
        self.write(session_id, now_ms, |view| fold_activity(view, line))
    }

    /// A turn began: mark it running and replay the kept view's bubble.
    /// A leftover activity line is dropped first; it belonged to the last turn.
    pub fn turn_start(&mut self, session_id: &str, now_ms: u64) -> Vec<BubbleChange> {
        let mut changes = Vec::new();
        let index = self.touch_or_insert(session_id, now_ms, &mut changes);
        if let Some(session) = self.sessions.get_mut(index) {
            let before = session.visible(now_ms);
            session.turn_running = true;
            session.view.activity = None;
            session.publish(now_ms);
            push_if_changed(&mut changes, session, before, now_ms);
        }
        changes
    }

    /// A turn ended: retire the bubble now. A todo/goal view is kept so the
    /// next `turn_start` can replay it (todo writes only come on change); an
    /// activity-only session is deleted.
    pub fn turn_end(&mut self, session_id: &str, now_ms: u64) -> Vec<BubbleChange> {
        let Some(index) = self.touch(session_id, now_ms) else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        if let Some(session) = self.sessions.get_mut(index) {
            let before = session.visible(now_ms);
            session.turn_running = false;
            session.shown = None;
            push_if_changed(&mut changes, session, before, now_ms);
            if !session.view.has_measure() {
                self.sessions.remove(index);
            }
        }
        changes
    }

    /// Heartbeat: a running turn's visible bubble gets a fresh TTL; an expired
    /// bubble is dropped and reported as gone.
    pub fn tick(&mut self, now_ms: u64) -> Vec<BubbleChange> {
        let mut changes = Vec::new();
        for session in &mut self.sessions {
            let Some(shown) = session.shown.as_mut() else {
                continue;
            };
            if shown.visible_at(now_ms).is_none() {
                session.shown = None;
                changes.push(BubbleChange {
                    session_id: session.session_id.clone(),
                    bubble: None,
                });
            } else if session.turn_running {
                shown.expires_at_ms = now_ms.saturating_add(BUBBLE_TTL_MS);
            }
        }
        changes
    }

    fn find(&self, session_id: &str) -> Option<&SessionProgress> {
        self.sessions
            .iter()
            .find(|session| session.session_id == session_id)
    }

    /// Moves an existing session to the most-recently-touched end; returns its index.
    fn touch(&mut self, session_id: &str, now_ms: u64) -> Option<usize> {
        let index = self
            .sessions
            .iter()
            .position(|session| session.session_id == session_id)?;
        let mut session = self.sessions.remove(index);
        session.touched_at_ms = session.touched_at_ms.max(now_ms);
        self.sessions.push(session);
        Some(self.sessions.len() - 1)
    }

    /// Touches the session, creating it (and evicting the least recently
    /// touched one when full) if needed; an evicted visible bubble is reported gone.
    fn touch_or_insert(
        &mut self,
        session_id: &str,
        now_ms: u64,
        changes: &mut Vec<BubbleChange>,
    ) -> usize {
        if let Some(index) = self.touch(session_id, now_ms) {
            return index;
        }
        while self.sessions.len() >= MAX_TRACKED_SESSIONS {
            let evicted = self.sessions.remove(0);
            if evicted.visible(now_ms).is_some() {
                changes.push(BubbleChange {
                    session_id: evicted.session_id,
                    bubble: None,
                });
            }
        }
        let mut session = SessionProgress::new(session_id);
        session.touched_at_ms = now_ms;
        self.sessions.push(session);
        self.sessions.len() - 1
    }

    /// Applies an informative snapshot fold and republishes the bubble.
    fn write(
        &mut self,
        session_id: &str,
        now_ms: u64,
        fold: impl FnOnce(ProgressView) -> ProgressView,
    ) -> Vec<BubbleChange> {
        let mut changes = Vec::new();
        let index = self.touch_or_insert(session_id, now_ms, &mut changes);
        if let Some(session) = self.sessions.get_mut(index) {
            let before = session.visible(now_ms);
            session.view = fold(std::mem::take(&mut session.view));
            session.publish(now_ms);
            push_if_changed(&mut changes, session, before, now_ms);
        }
        changes
    }
}

fn push_if_changed(
    changes: &mut Vec<BubbleChange>,
    session: &SessionProgress,
    before: Option<Bubble>,
    now_ms: u64,
) {
    let after = session.visible(now_ms);
    if after != before {
        changes.push(BubbleChange {
            session_id: session.session_id.clone(),
            bubble: after,
        });
    }
}

/// The limit of `MAX_TRACKED_SESSIONS` over sessions tracked apart (each
/// session's activity is its own file): given every tracked session with
/// the time it was last touched, the ones to forget, least recently touched
/// first (ties by id). `keep` (the session just touched) is never one.
pub fn over_the_limit(tracked: &[(String, u64)], keep: &str) -> Vec<String> {
    if tracked.len() <= MAX_TRACKED_SESSIONS {
        return Vec::new();
    }
    let mut candidates: Vec<&(String, u64)> = tracked.iter().filter(|(id, _)| id != keep).collect();
    candidates.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let excess = tracked.len() - MAX_TRACKED_SESSIONS;
    candidates
        .into_iter()
        .take(excess)
        .map(|(id, _)| id.clone())
        .collect()
}
