//! Subagent records: one entry per subagent a coding agent spawned.
//!
//! Status only changes through the transition methods, so the race rules live
//! in one place: a user's stop is final against late completions, yet the
//! late result and error text are still kept for anyone who asks.

use serde::{Deserialize, Serialize};

/// At most this many records are kept; finished records are dropped first.
pub const MAX_AGENT_RECORDS: usize = 256;

/// Lifecycle of a subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentStatus {
    Queued,
    Running,
    Completed,
    Steered,
    Aborted,
    Stopped,
    Error,
}

impl AgentStatus {
    /// True once the subagent no longer runs (the record may be dropped first).
    pub fn is_finished(self) -> bool {
        !matches!(self, AgentStatus::Queued | AgentStatus::Running)
    }
}

/// What is known about one subagent.
///
/// Fields are public for reading; change `status`, times, `result` and
/// `error` only through the `mark_*` methods so the stop guard holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    pub id: String,
    #[serde(rename = "type")]
    pub agent_type: Option<String>,
    pub description: Option<String>,
    pub status: AgentStatus,
    /// When the record was made (its first event). The seed sets its
    /// `startedAt` then; here `startedAt` waits for the run to start, so a
    /// queued agent's elapsed time is not counted as running time.
    #[serde(default)]
    pub queued_at: Option<u64>,
    pub started_at: Option<u64>,
    pub completed_at: Option<u64>,
    pub result: Option<String>,
    pub error: Option<String>,
    /// Tool calls the subagent made (a running total; never goes back).
    #[serde(default)]
    pub tool_uses: u32,
    /// Turns of its current run.
    #[serde(default)]
    pub turns: u32,
    /// The current run's turn ceiling; null when unlimited or unknown.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Tokens over the record's life (running totals; never go back).
    #[serde(default)]
    pub usage: AgentUsage,
    /// Times its session compacted.
    #[serde(default)]
    pub compactions: u32,
    /// The question the subagent ended its turn with, waiting for an
    /// answer; cleared when it runs again.
    #[serde(default)]
    pub pending_question: Option<String>,
}

/// A subagent's lifetime token usage, as the harness counts it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl AgentUsage {
    /// Each count as the larger of the two: totals only grow, so a late or
    /// repeated report never takes a count back.
    fn grown(self, reported: AgentUsage) -> AgentUsage {
        AgentUsage {
            input: self.input.max(reported.input),
            output: self.output.max(reported.output),
            cache_read: self.cache_read.max(reported.cache_read),
            cache_write: self.cache_write.max(reported.cache_write),
        }
    }
}

/// What a harness reports about a subagent's work beside its status, each
/// field optional: running totals (`toolUses`, `usage`, `compactions`), the
/// current run's turns, and a pending question.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentStats {
    pub tool_uses: Option<u32>,
    pub turns: Option<u32>,
    pub max_turns: Option<u32>,
    pub usage: Option<AgentUsage>,
    pub compactions: Option<u32>,
    /// The question it asks; a blank one clears the pending question.
    pub question: Option<String>,
}

impl AgentRecord {
    /// A freshly queued record.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            agent_type: None,
            description: None,
            status: AgentStatus::Queued,
            queued_at: None,
            started_at: None,
            completed_at: None,
            result: None,
            error: None,
            tool_uses: 0,
            turns: 0,
            max_turns: None,
            usage: AgentUsage::default(),
            compactions: 0,
            pending_question: None,
        }
    }

    /// Folds a report of the subagent's work: running totals only grow,
    /// the current run's turns and ceiling are taken as reported, and a
    /// question is pending until a blank one or a new run clears it.
    pub fn record_stats(&mut self, stats: &AgentStats) {
        if let Some(tool_uses) = stats.tool_uses {
            self.tool_uses = self.tool_uses.max(tool_uses);
        }
        if let Some(compactions) = stats.compactions {
            self.compactions = self.compactions.max(compactions);
        }
        if let Some(usage) = stats.usage {
            self.usage = self.usage.grown(usage);
        }
        if let Some(turns) = stats.turns {
            self.turns = turns;
        }
        if stats.max_turns.is_some() {
            self.max_turns = stats.max_turns;
        }
        if let Some(question) = &stats.question {
            let question = question.trim();
            self.pending_question = (!question.is_empty()).then(|| question.to_string());
        }
    }

    /// The subagent started running.
    pub fn mark_running(&mut self, now_ms: u64) {
        self.status = AgentStatus::Running;
        self.started_at = Some(now_ms);
    }

    /// The subagent finished normally.
    pub fn mark_completed(&mut self, result: Option<String>, now_ms: u64) {
        self.finish(AgentStatus::Completed, result, now_ms);
    }

    /// The subagent's run was aborted by its runner.
    pub fn mark_aborted(&mut self, result: Option<String>, now_ms: u64) {
        self.finish(AgentStatus::Aborted, result, now_ms);
    }

    /// The subagent was steered to a new instruction and returned.
    pub fn mark_steered(&mut self, result: Option<String>, now_ms: u64) {
        self.finish(AgentStatus::Steered, result, now_ms);
    }

    /// The subagent failed. Same stop guard as completion; `error` is kept.
    pub fn mark_error(&mut self, error: Option<String>, now_ms: u64) {
        if self.status != AgentStatus::Stopped {
            self.status = AgentStatus::Error;
        }
        if error.is_some() {
            self.error = error;
        }
        self.completed_at.get_or_insert(now_ms);
    }

    /// The user stopped the subagent. Always valid and always stamps the time.
    pub fn mark_stopped(&mut self, now_ms: u64) {
        self.status = AgentStatus::Stopped;
        self.completed_at = Some(now_ms);
    }

    /// The subagent runs again: a clean running record with a new start
    /// time; its question is answered by the new run. Running totals stay.
    pub fn reset_for_resume(&mut self, now_ms: u64) {
        self.status = AgentStatus::Running;
        self.started_at = Some(now_ms);
        self.completed_at = None;
        self.result = None;
        self.error = None;
        self.pending_question = None;
    }

    /// Shared ending rule: a stopped record keeps its status (the stop came
    /// first and wins), but the late result is still recorded, and the
    /// completion time is set only if none exists yet, so the stop time survives.
    /// A `None` result keeps any result already recorded.
    fn finish(&mut self, status: AgentStatus, result: Option<String>, now_ms: u64) {
        if self.status != AgentStatus::Stopped {
            self.status = status;
        }
        if result.is_some() {
            self.result = result;
        }
        self.completed_at.get_or_insert(now_ms);
    }
}

/// The kind of lifecycle event a harness reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentEventKind {
    Queued,
    Running,
    Completed,
    Steered,
    Aborted,
    Error,
    Stopped,
    Resumed,
    /// Only the work figures changed (`toolUses`, `usage`, ...): no status moves.
    Update,
}

/// One lifecycle event for a subagent, as sent by a harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentEvent {
    pub id: String,
    pub kind: AgentEventKind,
    #[serde(rename = "type", default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(flatten, default)]
    pub stats: AgentStats,
}

impl AgentEvent {
    /// `stopped` for `id`, with nothing else.
    pub fn stopped(id: impl Into<String>) -> Self {
        AgentEvent {
            id: id.into(),
            kind: AgentEventKind::Stopped,
            agent_type: None,
            description: None,
            result: None,
            error: None,
            stats: AgentStats::default(),
        }
    }
}

/// All subagent records of a session, in order of first appearance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentRegistry {
    records: Vec<AgentRecord>,
}

impl AgentRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies an event and returns the updated record.
    ///
    /// Rules beyond the record's own transitions:
    /// - An unknown id creates a queued record first (events may arrive
    ///   without a `queued` before them), evicting if the registry is full.
    /// - `type` and `description`, when present, replace the stored ones.
    /// - `queued` on an existing record changes nothing: a late or repeated
    ///   announcement must not rewind a running or finished subagent.
    /// - `running` starts a queued record, is a no-op on a running one (the
    ///   first start time stands), and on a finished record means it runs
    ///   again, so it resets like `resumed` rather than mixing old results
    ///   into a running record.
    pub fn apply(&mut self, event: AgentEvent, now_ms: u64) -> AgentRecord {
        let index = match self.records.iter().position(|r| r.id == event.id) {
            Some(index) => index,
            None => {
                self.make_room();
                let mut record = AgentRecord::new(event.id.clone());
                record.queued_at = Some(now_ms);
                self.records.push(record);
                self.records.len() - 1
            }
        };
        let Some(record) = self.records.get_mut(index) else {
            // Unreachable by construction; a record is still returned without panicking.
            return AgentRecord::new(event.id);
        };
        if event.agent_type.is_some() {
            record.agent_type = event.agent_type;
        }
        if event.description.is_some() {
            record.description = event.description;
        }
        match event.kind {
            AgentEventKind::Queued | AgentEventKind::Update => {}
            AgentEventKind::Running => match record.status {
                AgentStatus::Queued => record.mark_running(now_ms),
                AgentStatus::Running => {}
                _ => record.reset_for_resume(now_ms),
            },
            AgentEventKind::Completed => record.mark_completed(event.result, now_ms),
            AgentEventKind::Steered => record.mark_steered(event.result, now_ms),
            AgentEventKind::Aborted => record.mark_aborted(event.result, now_ms),
            AgentEventKind::Error => record.mark_error(event.error, now_ms),
            AgentEventKind::Stopped => record.mark_stopped(now_ms),
            AgentEventKind::Resumed => record.reset_for_resume(now_ms),
        }
        // After the transition: a run that starts again with a question
        // (asked as it resumes) keeps the new one.
        record.record_stats(&event.stats);
        record.clone()
    }

    /// All records in order of first appearance.
    pub fn list(&self) -> Vec<AgentRecord> {
        self.records.clone()
    }

    /// One record by id.
    pub fn get(&self, id: &str) -> Option<&AgentRecord> {
        self.records.iter().find(|record| record.id == id)
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Keeps the registry bounded: drops the oldest finished record, or the
    /// oldest record outright when every one is still queued or running.
    fn make_room(&mut self) {
        while self.records.len() >= MAX_AGENT_RECORDS {
            let victim = self
                .records
                .iter()
                .position(|record| record.status.is_finished())
                .unwrap_or(0);
            self.records.remove(victim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn text(value: &str) -> Option<String> {
        Some(value.to_string())
    }

    fn event(id: &str, kind: AgentEventKind) -> AgentEvent {
        AgentEvent {
            id: id.to_string(),
            kind,
            agent_type: None,
            description: None,
            result: None,
            error: None,
            stats: AgentStats::default(),
        }
    }

    fn running_record() -> AgentRecord {
        let mut record = AgentRecord::new("a1");
        record.mark_running(10);
        record
    }

    /// Applies one of the late ending transitions by name.
    fn end_with(record: &mut AgentRecord, kind: AgentEventKind, now_ms: u64) {
        match kind {
            AgentEventKind::Completed => record.mark_completed(text("done"), now_ms),
            AgentEventKind::Aborted => record.mark_aborted(text("done"), now_ms),
            AgentEventKind::Steered => record.mark_steered(text("done"), now_ms),
            AgentEventKind::Error => record.mark_error(text("boom"), now_ms),
            _ => {}
        }
    }

    const ENDINGS: [(AgentEventKind, AgentStatus); 4] = [
        (AgentEventKind::Completed, AgentStatus::Completed),
        (AgentEventKind::Aborted, AgentStatus::Aborted),
        (AgentEventKind::Steered, AgentStatus::Steered),
        (AgentEventKind::Error, AgentStatus::Error),
    ];

    #[test]
    fn work_figures_ride_any_event_and_totals_only_grow() {
        let mut registry = AgentRegistry::new();
        let stats = AgentStats {
            tool_uses: Some(3),
            turns: Some(2),
            max_turns: Some(10),
            usage: Some(AgentUsage {
                input: 1200,
                output: 300,
                cache_read: 5000,
                cache_write: 40,
            }),
            compactions: Some(1),
            question: Some(" Which total is right? ".into()),
        };
        let mut running = event("a1", AgentEventKind::Running);
        running.stats = stats.clone();
        let record = registry.apply(running, 5);
        assert_eq!(record.queued_at, Some(5));
        assert_eq!(
            (record.tool_uses, record.turns, record.max_turns),
            (3, 2, Some(10))
        );
        assert_eq!(record.usage.cache_read, 5000);
        assert_eq!(record.compactions, 1);
        assert_eq!(record.pending_question, text("Which total is right?"));
        // A late, smaller report takes no total back; turns are the run's own.
        let mut late = event("a1", AgentEventKind::Update);
        late.stats = AgentStats {
            tool_uses: Some(1),
            turns: Some(1),
            usage: Some(AgentUsage::default()),
            ..AgentStats::default()
        };
        let record = registry.apply(late, 6);
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!((record.tool_uses, record.turns), (3, 1));
        assert_eq!(record.usage.input, 1200);
        assert_eq!(record.pending_question, text("Which total is right?"));
        // A new run answers the question; the totals stay.
        let record = registry.apply(event("a1", AgentEventKind::Resumed), 7);
        assert_eq!(record.pending_question, None);
        assert_eq!(record.tool_uses, 3);
        // A blank question clears one.
        let mut asked = event("a1", AgentEventKind::Update);
        asked.stats.question = text("why?");
        registry.apply(asked, 8);
        let mut cleared = event("a1", AgentEventKind::Update);
        cleared.stats.question = text("  ");
        assert_eq!(registry.apply(cleared, 9).pending_question, None);
    }

    #[test]
    fn a_queued_record_has_its_creation_time_but_no_start() {
        let mut registry = AgentRegistry::new();
        let record = registry.apply(event("a1", AgentEventKind::Queued), 40);
        assert_eq!((record.queued_at, record.started_at), (Some(40), None));
        let record = registry.apply(event("a1", AgentEventKind::Running), 45);
        assert_eq!((record.queued_at, record.started_at), (Some(40), Some(45)));
    }

    #[test]
    fn a_new_record_is_queued_and_empty() {
        let record = AgentRecord::new("a1");
        assert_eq!(record.status, AgentStatus::Queued);
        assert_eq!((record.started_at, record.completed_at), (None, None));
        assert_eq!((record.result, record.error), (None, None));
    }

    #[test]
    fn mark_running_sets_status_and_start() {
        let record = running_record();
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!(record.started_at, Some(10));
    }

    #[test]
    fn each_ending_sets_status_data_and_time() {
        for (kind, status) in ENDINGS {
            let mut record = running_record();
            end_with(&mut record, kind, 50);
            assert_eq!(record.status, status, "{kind:?}");
            assert_eq!(record.completed_at, Some(50));
            if kind == AgentEventKind::Error {
                assert_eq!(record.error, text("boom"));
                assert_eq!(record.result, None);
            } else {
                assert_eq!(record.result, text("done"));
                assert_eq!(record.error, None);
            }
        }
    }

    #[test]
    fn stopped_guard_keeps_status_but_records_late_data() {
        for (kind, _) in ENDINGS {
            let mut record = running_record();
            record.mark_stopped(20);
            end_with(&mut record, kind, 30);
            assert_eq!(record.status, AgentStatus::Stopped, "{kind:?}");
            // `??=`: the stop time survives the late ending.
            assert_eq!(record.completed_at, Some(20), "{kind:?}");
            if kind == AgentEventKind::Error {
                assert_eq!(record.error, text("boom"));
            } else {
                assert_eq!(record.result, text("done"));
            }
        }
    }

    #[test]
    fn completion_time_is_set_only_once() {
        let mut record = running_record();
        record.mark_completed(text("first"), 40);
        record.mark_error(text("late"), 90);
        assert_eq!(record.completed_at, Some(40));
        assert_eq!(record.status, AgentStatus::Error);
        assert_eq!(record.error, text("late"));
    }

    #[test]
    fn missing_result_keeps_the_recorded_one() {
        let mut record = running_record();
        record.mark_stopped(20);
        record.mark_completed(text("partial"), 30);
        record.mark_aborted(None, 40);
        assert_eq!(record.result, text("partial"));
    }

    #[test]
    fn mark_stopped_always_wins_and_stamps_the_time() {
        let mut record = running_record();
        record.mark_completed(text("done"), 40);
        record.mark_stopped(60);
        assert_eq!(record.status, AgentStatus::Stopped);
        assert_eq!(record.completed_at, Some(60));
        assert_eq!(record.result, text("done"));
        let mut queued = AgentRecord::new("q");
        queued.mark_stopped(5);
        assert_eq!(queued.status, AgentStatus::Stopped);
        assert_eq!(queued.completed_at, Some(5));
    }

    #[test]
    fn reset_for_resume_clears_the_previous_run() {
        let mut record = running_record();
        record.mark_completed(text("done"), 40);
        record.mark_error(text("boom"), 41);
        record.reset_for_resume(100);
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!(record.started_at, Some(100));
        assert_eq!(record.completed_at, None);
        assert_eq!(record.result, None);
        assert_eq!(record.error, None);
        // A resumed run can be stopped and then finish again under the guard.
        record.mark_stopped(110);
        record.mark_completed(text("again"), 120);
        assert_eq!(record.status, AgentStatus::Stopped);
        assert_eq!(record.completed_at, Some(110));
    }

    #[test]
    fn registry_creates_records_in_order_of_first_appearance() {
        let mut registry = AgentRegistry::new();
        let mut first = event("b", AgentEventKind::Queued);
        first.agent_type = text("explore");
        first.description = text("look around");
        let created = registry.apply(first, 1);
        assert_eq!(created.status, AgentStatus::Queued);
        assert_eq!(created.agent_type, text("explore"));
        registry.apply(event("a", AgentEventKind::Running), 2);
        registry.apply(event("b", AgentEventKind::Running), 3);
        let ids: Vec<String> = registry.list().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["b", "a"]);
        // Metadata absent from a later event is kept.
        assert_eq!(
            registry.get("b").and_then(|r| r.description.clone()),
            text("look around")
        );
        assert_eq!(
            registry.get("a").map(|r| r.status),
            Some(AgentStatus::Running)
        );
    }

    #[test]
    fn registry_queued_never_rewinds_a_record() {
        let mut registry = AgentRegistry::new();
        registry.apply(event("a", AgentEventKind::Running), 5);
        let record = registry.apply(event("a", AgentEventKind::Queued), 6);
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!(record.started_at, Some(5));
        let mut done = event("a", AgentEventKind::Completed);
        done.result = text("ok");
        registry.apply(done, 7);
        let record = registry.apply(event("a", AgentEventKind::Queued), 8);
        assert_eq!(record.status, AgentStatus::Completed);
        assert_eq!(record.result, text("ok"));
    }

    #[test]
    fn registry_running_keeps_first_start_and_restarts_finished_records() {
        let mut registry = AgentRegistry::new();
        registry.apply(event("a", AgentEventKind::Queued), 1);
        registry.apply(event("a", AgentEventKind::Running), 2);
        let record = registry.apply(event("a", AgentEventKind::Running), 3);
        assert_eq!(record.started_at, Some(2));
        registry.apply(event("a", AgentEventKind::Stopped), 4);
        let record = registry.apply(event("a", AgentEventKind::Running), 5);
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!((record.started_at, record.completed_at), (Some(5), None));
    }

    #[test]
    fn registry_maps_each_event_kind() {
        let mut registry = AgentRegistry::new();
        for (kind, status) in [
            (AgentEventKind::Queued, AgentStatus::Queued),
            (AgentEventKind::Running, AgentStatus::Running),
            (AgentEventKind::Completed, AgentStatus::Completed),
            (AgentEventKind::Steered, AgentStatus::Steered),
            (AgentEventKind::Aborted, AgentStatus::Aborted),
            (AgentEventKind::Error, AgentStatus::Error),
            (AgentEventKind::Stopped, AgentStatus::Stopped),
            (AgentEventKind::Resumed, AgentStatus::Running),
        ] {
            let id = format!("{kind:?}");
            let mut incoming = event(&id, kind);
            incoming.result = text("r");
            incoming.error = text("e");
            let record = registry.apply(incoming, 9);
            assert_eq!(record.status, status, "{kind:?}");
        }
        assert_eq!(
            registry.get("Error").and_then(|r| r.error.clone()),
            text("e")
        );
        assert_eq!(registry.get("Error").and_then(|r| r.result.clone()), None);
        assert_eq!(
            registry.get("Completed").and_then(|r| r.result.clone()),
            text("r")
        );
    }

    #[test]
    fn registry_stop_guard_through_events() {
        let mut registry = AgentRegistry::new();
        registry.apply(event("a", AgentEventKind::Running), 1);
        registry.apply(event("a", AgentEventKind::Stopped), 2);
        let mut late = event("a", AgentEventKind::Completed);
        late.result = text("late");
        let record = registry.apply(late, 3);
        assert_eq!(record.status, AgentStatus::Stopped);
        assert_eq!(record.result, text("late"));
        assert_eq!(record.completed_at, Some(2));
        let record = registry.apply(event("a", AgentEventKind::Resumed), 4);
        assert_eq!(record.status, AgentStatus::Running);
        assert_eq!(record.result, None);
    }

    #[test]
    fn registry_drops_the_oldest_finished_record_first() {
        let mut registry = AgentRegistry::new();
        for n in 0..MAX_AGENT_RECORDS {
            registry.apply(event(&format!("a{n}"), AgentEventKind::Running), 1);
        }
        registry.apply(event("a7", AgentEventKind::Completed), 2);
        registry.apply(event("a3", AgentEventKind::Stopped), 3);
        registry.apply(event("new1", AgentEventKind::Queued), 4);
        assert_eq!(registry.len(), MAX_AGENT_RECORDS);
        // a3 appeared before a7, so it is the oldest finished record.
        assert!(registry.get("a3").is_none());
        assert!(registry.get("a7").is_some());
        registry.apply(event("new2", AgentEventKind::Queued), 5);
        assert!(registry.get("a7").is_none());
        assert!(registry.get("a0").is_some());
        // With nothing finished, the oldest record goes.
        registry.apply(event("new3", AgentEventKind::Queued), 6);
        assert!(registry.get("a0").is_none());
        assert_eq!(registry.len(), MAX_AGENT_RECORDS);
        assert_eq!(registry.list().last().map(|r| r.id.as_str()), Some("new3"));
    }

    #[test]
    fn wire_names() {
        let mut record = AgentRecord::new("a1");
        record.agent_type = text("explore");
        record.mark_running(7);
        assert_eq!(
            serde_json::to_value(&record).ok(),
            Some(json!({
                "id": "a1",
                "type": "explore",
                "description": null,
                "status": "running",
                "queuedAt": null,
                "startedAt": 7,
                "completedAt": null,
                "result": null,
                "error": null,
                "toolUses": 0,
                "turns": 0,
                "maxTurns": null,
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "compactions": 0,
                "pendingQuestion": null
            }))
        );
        let parsed: Option<AgentEvent> =
            serde_json::from_value(json!({"id": "a1", "kind": "resumed", "type": "plan"})).ok();
        assert_eq!(
            parsed,
            Some(AgentEvent {
                agent_type: text("plan"),
                ..event("a1", AgentEventKind::Resumed)
            })
        );
    }

    fn any_kind() -> impl Strategy<Value = AgentEventKind> {
        proptest::sample::select(vec![
            AgentEventKind::Queued,
            AgentEventKind::Running,
            AgentEventKind::Completed,
            AgentEventKind::Steered,
            AgentEventKind::Aborted,
            AgentEventKind::Error,
            AgentEventKind::Stopped,
            AgentEventKind::Resumed,
            AgentEventKind::Update,
        ])
    }

    fn any_stats() -> impl Strategy<Value = AgentStats> {
        (
            proptest::option::of(0u32..50),
            proptest::option::of(0u32..50),
            proptest::option::of(0u64..5000),
            proptest::option::of(prop_oneof![Just(String::new()), ".{0,6}"]),
        )
            .prop_map(|(tool_uses, turns, input, question)| AgentStats {
                tool_uses,
                turns,
                max_turns: turns.map(|t| t + 1),
                usage: input.map(|input| AgentUsage {
                    input,
                    ..AgentUsage::default()
                }),
                compactions: tool_uses.map(|t| t / 10),
                question,
            })
    }

    fn any_event() -> impl Strategy<Value = AgentEvent> {
        (
            0u16..300,
            any_kind(),
            proptest::option::of(".{0,6}"),
            proptest::option::of(".{0,6}"),
            proptest::option::of(".{0,6}"),
            any_stats(),
        )
            .prop_map(|(id, kind, agent_type, result, error, stats)| AgentEvent {
                id: format!("a{id}"),
                kind,
                agent_type,
                description: None,
                result,
                error,
                stats,
            })
    }

    proptest! {
        #[test]
        fn any_event_sequence_is_safe_and_stop_is_sticky(
            events in proptest::collection::vec(any_event(), 0..400),
            start in any::<u64>()
        ) {
            let mut registry = AgentRegistry::new();
            let mut now = start;
            for incoming in events {
                now = now.saturating_add(1);
                let before = registry.get(&incoming.id).map(|r| r.status);
                let totals_before = registry
                    .get(&incoming.id)
                    .map(|r| (r.tool_uses, r.compactions, r.usage.input));
                let kind = incoming.kind;
                let record = registry.apply(incoming, now);
                prop_assert!(registry.len() <= MAX_AGENT_RECORDS);
                prop_assert!(record.queued_at.is_some());
                if let Some((tool_uses, compactions, input)) = totals_before {
                    // Running totals never go back.
                    prop_assert!(record.tool_uses >= tool_uses);
                    prop_assert!(record.compactions >= compactions);
                    prop_assert!(record.usage.input >= input);
                }
                if kind == AgentEventKind::Update {
                    prop_assert_eq!(Some(record.status), before.or(Some(AgentStatus::Queued)));
                }
                if before == Some(AgentStatus::Stopped)
                    && !matches!(kind, AgentEventKind::Resumed | AgentEventKind::Running)
                {
                    prop_assert_eq!(record.status, AgentStatus::Stopped);
                }
                if record.status.is_finished() {
                    prop_assert!(record.completed_at.is_some());
                } else if record.status == AgentStatus::Running {
                    prop_assert!(record.completed_at.is_none());
                }
            }
        }
    }
}
