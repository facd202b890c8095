//! Progress bubble: one line per session saying how far the agent's work has come.
//!
//! Harnesses write complete snapshots (the whole todo list, the whole goal),
//! so the view is a pure fold of `(previous view, snapshot)`. The bubble is
//! derived from the view by a fixed priority and is never allowed to claim
//! more progress than the data proves.

mod activity;
mod bubble;
mod snapshot;
mod tracker;
mod view;

pub use activity::{read_activity, tool_activity, ActivityLine, ActivitySource, QUIET_PHASES};
pub use bubble::{bubble_for, Bubble, BubbleKind};
pub use snapshot::{read_goal, read_todos, Goal, GoalStatus, Todo, TodoStatus};
pub use tracker::{over_the_limit, BubbleChange, ProgressTracker};
pub use view::{fold_activity, fold_goal, fold_todos, ProgressView};

/// At most this many sessions keep progress state; the least recently touched is dropped.
pub const MAX_TRACKED_SESSIONS: usize = 24;

/// A shown bubble disappears this long after it was last published or refreshed,
/// so a finished or silent session does not keep a stale percentage on screen.
pub const BUBBLE_TTL_MS: u64 = 30_000;

/// Activity lines are cut to this many characters: the bubble is one line.
const MAX_ACTIVITY_CHARS: usize = 160;

#[cfg(test)]
mod tests;
