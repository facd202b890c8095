//! A store kept in this process only (tests, and a fallback nobody else
//! can see).

use super::{changed_activity, decide, Decided, Refused, Store, StoreError, Stored, Update};
use crate::core::activity::Activity;
use crate::core::model::DebugState;
use std::collections::HashMap;

/// State kept in this process only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: HashMap<String, Stored>,
    activities: HashMap<String, Activity>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
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

    fn update_then(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
        then: &mut dyn FnMut(&Stored),
    ) -> Result<Update, StoreError> {
        let current = self.load(session_id)?;
        let mut keep = |stored: Stored| {
            self.sessions.insert(session_id.to_string(), stored.clone());
            stored
        };
        let (update, durable) = match decide(&current, now, apply) {
            Decided::Unchanged => (Update::Unchanged(current.clone()), current),
            Decided::Write(stored) => (Update::Written(stored.clone()), keep(stored)),
            Decided::Keep(stored) => (Update::Refused, keep(stored)),
            Decided::Refused => (Update::Refused, current),
        };
        then(&durable);
        Ok(update)
    }

    fn session_ids(&mut self) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = self.sessions.keys().cloned().collect();
        ids.extend(
            self.activities
                .keys()
                .filter(|id| !self.sessions.contains_key(*id))
                .cloned(),
        );
        Ok(ids)
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

    fn load_activity(&mut self, session_id: &str) -> Result<Activity, StoreError> {
        Ok(self.activities.get(session_id).cloned().unwrap_or_default())
    }

    fn update_activity(
        &mut self,
        session_id: &str,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<Activity, StoreError> {
        let current = self.load_activity(session_id)?;
        let Some(next) = changed_activity(&current, apply) else {
            return Ok(current);
        };
        self.activities.insert(session_id.to_string(), next.clone());
        Ok(next)
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
