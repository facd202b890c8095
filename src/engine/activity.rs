//! The agent's activity: turn state, progress, subagents and harness events.

use super::*;
use crate::core::budget;
use crate::core::progress::{over_the_limit, read_activity, ProgressView};

impl Engine {
    /// The turn state and the provider's detail beside it.
    pub fn turn_state(
        &mut self,
        session_id: &str,
    ) -> Result<(TurnState, Option<String>), EngineError> {
        let turn = self.store.load_activity(session_id)?.turn;
        Ok((turn.state(), turn.detail().map(str::to_string)))
    }

    pub fn progress_state(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<Option<Bubble>, EngineError> {
        Ok(self
            .store
            .load_activity(session_id)?
            .progress
            .visible(session_id, now))
    }

    /// The whole folded view (the full todo list, the goal, the activity
    /// line) beside the visible bubble: the view outlives the bubble, so a
    /// panel can print the list after the bubble expired or retired.
    pub fn progress_view(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<(ProgressView, Option<Bubble>), EngineError> {
        let progress = self.store.load_activity(session_id)?.progress;
        let view = progress.view(session_id).cloned().unwrap_or_default();
        Ok((view, progress.visible(session_id, now)))
    }

    pub fn agents(&mut self, session_id: &str) -> Result<Vec<AgentRecord>, EngineError> {
        Ok(self.store.load_activity(session_id)?.agents.list())
    }

    /// A harness report: turn state, the progress bubble's turn, and the
    /// debug session's own event. Scans it asks for are deferred.
    pub fn harness_event(
        &mut self,
        session_id: &str,
        event: HarnessEvent,
        now: u64,
    ) -> Result<(), EngineError> {
        self.harness_event_with_detail(session_id, event, None, now)
    }

    /// `harness_event` with the provider's status text (`turn/event`'s
    /// `text`), a detail beside the turn state that never moves it. A named
    /// tool call is also the activity line of an unmeasured session.
    pub fn harness_event_with_detail(
        &mut self,
        session_id: &str,
        event: HarnessEvent,
        detail: Option<&str>,
        now: u64,
    ) -> Result<(), EngineError> {
        let turn_event = event.turn_event();
        let edge = event.progress_edge();
        let line = event.activity_line();
        self.change_activity(session_id, now, &mut |activity| {
            if let Some(turn_event) = turn_event {
                activity.turn.apply_with_detail(turn_event, detail);
            }
            match edge {
                Some(true) => drop(activity.progress.turn_start(session_id, now)),
                Some(false) => drop(activity.progress.turn_end(session_id, now)),
                None => {}
            }
            if let Some(line) = &line {
                activity.progress.activity(session_id, line.clone(), now);
            }
        })?;
        if let Some(command) = event.session_command(&self.config.edit_tools) {
            // Only an active session has anything to learn from the harness.
            if self.store.load(session_id)?.state.session().is_some() {
                self.apply(session_id, command, now, ScanTiming::Deferred)?;
            }
        }
        Ok(())
    }

    /// A harness reports a finished tool call (`PostToolUse`): a todo list
    /// (TodoWrite, or Claude Code's TaskCreate/TaskUpdate) becomes progress, the call is the session's tool event, and an edit's
    /// rescan runs now, on the edited files when the input names them
    /// (relative ones resolved against `base_dir`, the harness's `cwd`).
    pub fn tool_used(
        &mut self,
        session_id: &str,
        tool: &str,
        tool_input: &Value,
        tool_response: &Value,
        base_dir: &Path,
        now: u64,
    ) -> Result<(), EngineError> {
        // Claude Code's TodoWrite, Gemini CLI's write_todos.
        if matches!(tool, "TodoWrite" | "write_todos") {
            if let Some(todos) = tool_input.get("todos").and_then(Value::as_array) {
                self.todos(session_id, todos, now)?;
            }
        }
        if matches!(tool, "TaskCreate" | "TaskUpdate") {
            self.task_tool(session_id, tool, tool_input, tool_response, now)?;
        }
        let call = HarnessEvent {
            kind: HarnessEventKind::ToolCall,
            tool: Some(tool.to_string()),
            source: None,
            edits: None,
        };
        self.harness_event(session_id, call, now)?;
        let asked = self.take_scan_requests();
        if asked.iter().any(|r| r.session_id == session_id) {
            match edited_files(tool_input) {
                Some(files) => {
                    let files: Vec<String> = files
                        .iter()
                        .map(|f| base_dir.join(f).to_string_lossy().into_owned())
                        .collect();
                    self.rescan_files(session_id, &files, now)?;
                }
                None => {
                    self.rescan(session_id, now)?;
                }
            }
        }
        Ok(())
    }

    /// The agent's turn ends (a `Stop` hook): the stop decision, and when it
    /// may stop, the end of its turn for the turn state.
    pub fn agent_stopped(
        &mut self,
        session_id: &str,
        last_message: Option<&str>,
        now: u64,
    ) -> Result<StopAnswer, EngineError> {
        let answer = self.stop(session_id, last_message, now)?;
        if matches!(answer.decision, StopDecision::Allow { .. }) {
            let ended = HarnessEvent {
                kind: HarnessEventKind::TurnEnd,
                tool: None,
                source: None,
                edits: None,
            };
            self.harness_event(session_id, ended, now)?;
        }
        Ok(answer)
    }

    pub fn todos(
        &mut self,
        session_id: &str,
        todos: &[Value],
        now: u64,
    ) -> Result<(), EngineError> {
        let todos = Value::Array(todos.to_vec());
        self.change_activity(session_id, now, &mut |activity| {
            activity.progress.todos(session_id, &todos, now);
        })
    }

    pub fn goal(&mut self, session_id: &str, goal: &Value, now: u64) -> Result<(), EngineError> {
        self.change_activity(session_id, now, &mut |activity| {
            activity.progress.goal(session_id, goal, now);
        })
    }

    /// A `progress/activity` report: the model's words or a phase, read by
    /// the seed's rules (`read_activity`); one that says nothing changes nothing.
    pub fn activity(
        &mut self,
        session_id: &str,
        phase: Option<&str>,
        line: Option<&str>,
        now: u64,
    ) -> Result<(), EngineError> {
        let Some(line) = read_activity(phase, line) else {
            return Ok(());
        };
        self.change_activity(session_id, now, &mut |activity| {
            activity.progress.activity(session_id, line.clone(), now);
        })
    }

    pub fn agent_event(
        &mut self,
        session_id: &str,
        event: AgentEvent,
        now: u64,
    ) -> Result<(), EngineError> {
        let event = self.screened(event);
        self.fed_agents
            .entry(session_id.to_string())
            .or_default()
            .insert(event.id.clone());
        self.change_activity(session_id, now, &mut |activity| {
            activity.agents.apply(event.clone(), now);
        })
    }

    /// A host's texts in a subagent record (its task, result, error and
    /// question: a subagent may quote what it read) are redacted as log
    /// lines are, and each is bounded: the record is kept in the workspace's
    /// state and shown by every editor.
    fn screened(&self, mut event: AgentEvent) -> AgentEvent {
        let redactor = self.redactor();
        for text in [
            &mut event.description,
            &mut event.result,
            &mut event.error,
            &mut event.stats.question,
        ] {
            if let Some(value) = text.as_mut() {
                *value = budget::cut(&redactor.text(value).0, budget::AGENT_TEXT);
            }
        }
        if let Some(kind) = event.agent_type.as_mut() {
            *kind = budget::cut(kind, budget::AGENT_TYPE);
        }
        event
    }

    /// The host that reported these subagents is gone (its connection
    /// ended, killed or not): every one still queued or running is stopped,
    /// so none stays `running` after the host that ran it.
    pub fn stop_fed_agents(&mut self, now: u64) {
        let fed = std::mem::take(&mut self.fed_agents);
        for (session_id, ids) in fed {
            let result = self.change_activity(&session_id, now, &mut |activity| {
                let unfinished: Vec<String> = activity
                    .agents
                    .list()
                    .into_iter()
                    .filter(|r| ids.contains(&r.id) && !r.status.is_finished())
                    .map(|r| r.id)
                    .collect();
                for id in unfinished {
                    activity.agents.apply(AgentEvent::stopped(id), now);
                }
            });
            if let Err(error) = result {
                tracing::warn!("could not stop the subagents of {session_id}: {error}");
            }
        }
    }

    /// Heartbeat: keeps running turns' bubbles alive and retires stale ones,
    /// in the sessions this process has seen: those with a bubble showing,
    /// a turn running, or a bubble observers heard of that has since expired
    /// (which must be announced gone).
    pub fn tick(&mut self, now: u64) {
        let shown: Vec<String> = self
            .activities
            .iter()
            .filter(|(id, activity)| {
                activity.progress.visible(id, now).is_some()
                    || activity.progress.is_turn_running(id)
                    || self.visible.get(*id).is_some_and(Option::is_some)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for session_id in shown {
            if let Err(error) = self.change_activity(&session_id, now, &mut |activity| {
                activity.progress.tick(now);
            }) {
                tracing::warn!("could not refresh the progress of {session_id}: {error}");
            }
            // An expired bubble changes nothing saved, only what is visible.
            self.announce_visible_bubble(&session_id, now);
        }
    }

    /// The activity as this process last saw it, read from the store once.
    pub(super) fn activity_of(&mut self, session_id: &str) -> Result<&Activity, EngineError> {
        if !self.activities.contains_key(session_id) {
            let activity = self.store.load_activity(session_id)?;
            self.activities.insert(session_id.to_string(), activity);
        }
        Ok(&self.activities[session_id])
    }

    /// Apply a change to the session's activity. A change that alters
    /// nothing (a burst of identical deltas) is decided on the copy this
    /// process holds, without touching the store; a real one is applied under
    /// the store's lock to the saved activity and announced.
    pub(super) fn change_activity(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<(), EngineError> {
        // What observers last heard, and what is saved now (another process
        // may have written since): "nothing changed" is decided on the saved one.
        let known = self.activity_of(session_id)?.clone();
        let saved = self.store.load_activity(session_id)?;
        // A turn that starts while a wake request waits supersedes it.
        let apply = &mut |activity: &mut Activity| {
            let before = activity.turn.state();
            apply(activity);
            activity
                .wake
                .turn_changed(before, activity.turn.state(), now);
        };
        let mut candidate = saved.clone();
        apply(&mut candidate);
        if candidate.same_as(&saved) {
            if saved.news_to(&known) {
                self.announce_activity(session_id, &known, saved, now);
            }
            return Ok(());
        }
        let was_tracked = saved.progress.touched_at(session_id).is_some();
        let saved = self.store.update_activity(session_id, apply)?;
        let now_tracked = saved.progress.touched_at(session_id).is_some();
        self.announce_activity(session_id, &known, saved, now);
        if now_tracked && !was_tracked {
            self.limit_tracked_progress(session_id, now)?;
        }
        Ok(())
    }

    /// At most `MAX_TRACKED_SESSIONS` sessions of the workspace keep their
    /// progress (DESIGN section 5): each session's activity is its own
    /// file, so when one starts being tracked the others are looked over
    /// and the least recently touched beyond the limit are forgotten (their
    /// bubbles announced gone). Only a newly tracked session can pass the
    /// limit, so this runs then and only then.
    fn limit_tracked_progress(&mut self, session_id: &str, now: u64) -> Result<(), EngineError> {
        let mut tracked = Vec::new();
        for id in self.store.session_ids()? {
            if let Some(touched) = self.store.load_activity(&id)?.progress.touched_at(&id) {
                tracked.push((id, touched));
            }
        }
        for id in over_the_limit(&tracked, session_id) {
            let forget_id = id.clone();
            self.change_activity(&id, now, &mut |activity| {
                activity.progress.forget(&forget_id, now);
            })?;
        }
        Ok(())
    }

    /// Announce what differs between what observers heard and `now_saved`.
    /// The bubble is compared with the one last announced, not with the
    /// bubble `heard` shows at `now`: a bubble that expired since it was
    /// announced is news (gone) even though both activities hide it now.
    pub(super) fn announce_activity(
        &mut self,
        session_id: &str,
        heard: &Activity,
        now_saved: Activity,
        now: u64,
    ) {
        let bubble = now_saved.progress.visible(session_id, now);
        let heard_bubble = match self.visible.get(session_id) {
            Some(announced) => announced.clone(),
            None => heard.progress.visible(session_id, now),
        };
        // In the order `activity_changes` gives: turn, bubble, subagents.
        let mut agents = Vec::new();
        for change in activity_changes(session_id, heard, &now_saved, now) {
            let session_id = session_id.to_string();
            match change {
                ActivityChange::Turn(state, detail) => self.changes.push(Change::Turn {
                    session_id,
                    state,
                    detail,
                }),
                // Decided here, against what was announced.
                ActivityChange::Progress(_) => {}
                ActivityChange::Agent(record) => agents.push(Change::Agent { session_id, record }),
            }
        }
        if bubble != heard_bubble {
            self.changes.push(Change::Progress(BubbleChange {
                session_id: session_id.to_string(),
                bubble: bubble.clone(),
            }));
        }
        self.changes.extend(agents);
        self.announce_wake(session_id, heard, &now_saved, now);
        self.visible.insert(session_id.to_string(), bubble);
        self.activities.insert(session_id.to_string(), now_saved);
    }

    /// A bubble that expired on its own is announced as gone.
    pub(super) fn announce_visible_bubble(&mut self, session_id: &str, now: u64) {
        let Some(activity) = self.activities.get(session_id) else {
            return;
        };
        let bubble = activity.progress.visible(session_id, now);
        let heard = self.visible.get(session_id).cloned().flatten();
        if bubble != heard {
            self.visible.insert(session_id.to_string(), bubble.clone());
            self.changes.push(Change::Progress(BubbleChange {
                session_id: session_id.to_string(),
                bubble,
            }));
        }
    }
}
