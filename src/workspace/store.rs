//! Where session state is kept between commands. The engine only talks to
//! this interface: every mutation is one `update` (lock, read, apply, write,
//! unlock in the durable store), so a store shared by several processes never
//! loses an update. `MemoryStore` keeps state for the life of the process.

use crate::core::model::DebugState;
use std::collections::HashMap;

/// One session's state as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub state: DebugState,
    /// Increases by one on every write.
    pub revision: u64,
    /// When the session was last written (ms since the epoch); 0 if never.
    pub updated_at: u64,
}

impl Stored {
    fn empty() -> Self {
        Stored {
            state: DebugState::Inactive,
            revision: 0,
            updated_at: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("session state could not be read or written: {0}")]
    Io(#[from] std::io::Error),
}

/// The apply step refused the command. `keep` is a state to write anyway:
/// facts learned from the disk before the refusal stay learned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Refused {
    pub keep: Option<DebugState>,
}

/// How an update ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The new state was written with the next revision.
    Written(Stored),
    /// The step left the state as it was; nothing was written.
    Unchanged(Stored),
    Refused,
}

pub trait Store: Send {
    /// The session's current state (inactive at revision 0 when unknown).
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError>;

    /// Read the session, let `apply` compute the next state, and write it
    /// with the next revision when it differs.
    fn update(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
    ) -> Result<Update, StoreError>;

    /// Known sessions, most recently written first.
    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError>;
}

/// State kept in this process only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: HashMap<String, Stored>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn write(&mut self, session_id: &str, state: DebugState, now: u64) -> Stored {
        let entry = self
            .sessions
            .entry(session_id.to_string())
            .or_insert_with(Stored::empty);
        entry.state = state;
        entry.revision += 1;
        entry.updated_at = now;
        entry.clone()
    }
}

impl Store for MemoryStore {
    fn load(&mut self, session_id: &str) -> Result<Stored, StoreError> {
        Ok(self
            .sessions
            .get(session_id)
            .cloned()
            .unwrap_or_else(Stored::empty))
    }

    fn update(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
    ) -> Result<Update, StoreError> {
        let current = self.load(session_id)?;
        Ok(match apply(&current.state) {
            Ok(next) if next == current.state => Update::Unchanged(current),
            Ok(next) => Update::Written(self.write(session_id, next, now)),
            Err(Refused { keep }) => {
                if let Some(kept) = keep.filter(|kept| *kept != current.state) {
                    self.write(session_id, kept, now);
                }
                Update::Refused
            }
        })
    }

    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError> {
        let mut all: Vec<(String, Stored)> = self
            .sessions
            .iter()
            .map(|(id, stored)| (id.clone(), stored.clone()))
            .collect();
        all.sort_by(|a, b| b.1.updated_at.cmp(&a.1.updated_at).then(a.0.cmp(&b.0)));
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::DebugSession;

    fn active() -> DebugState {
        DebugState::Active(Box::new(DebugSession::new("p".into(), "r1-a".into(), 1)))
    }

    #[test]
    fn an_unchanged_state_is_not_written() {
        let mut store = MemoryStore::new();
        let update = store
            .update("s", 5, &mut |state| Ok(state.clone()))
            .unwrap();
        assert!(matches!(
            update,
            Update::Unchanged(Stored { revision: 0, .. })
        ));
        let update = store.update("s", 6, &mut |_| Ok(active())).unwrap();
        let Update::Written(stored) = update else {
            panic!("expected a write: {update:?}");
        };
        assert_eq!((stored.revision, stored.updated_at), (1, 6));
    }

    #[test]
    fn a_refused_step_keeps_only_what_it_asks_to_keep() {
        let mut store = MemoryStore::new();
        let update = store
            .update("s", 1, &mut |_| Err(Refused::default()))
            .unwrap();
        assert_eq!(update, Update::Refused);
        assert_eq!(store.load("s").unwrap().revision, 0);
        let keep = Some(active());
        store
            .update("s", 2, &mut |_| Err(Refused { keep: keep.clone() }))
            .unwrap();
        assert_eq!(store.load("s").unwrap().revision, 1);
    }

    #[test]
    fn sessions_list_the_most_recent_first() {
        let mut store = MemoryStore::new();
        store.update("old", 1, &mut |_| Ok(active())).unwrap();
        store.update("new", 9, &mut |_| Ok(active())).unwrap();
        let ids: Vec<String> = store.sessions().unwrap().into_iter().map(|s| s.0).collect();
        assert_eq!(ids, ["new", "old"]);
    }
}
