//! What each protocol method does, as one short impl per method: resolve the
//! session, call the engine, shape the result. No domain logic lives here.

use crate::core::agents::{AgentEvent, AgentStats};
use crate::core::harness::HarnessEvent;
use crate::core::machine::{ObservationInput, ProceedInput, StopDecision};
use crate::core::progress::Bubble;
use crate::core::snapshot::Snapshot;
use crate::core::text;
use crate::engine::{Engine, EngineError, LogRun, StopAnswer};
use crate::protocol::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A request: answered from the engine on the owner thread.
pub trait RequestHandler: Method
where
    Self::Params: DeserializeOwned + Send + 'static,
    Self::Result: Serialize + Send + 'static,
{
    fn handle(
        engine: &mut Engine,
        now: u64,
        params: Self::Params,
    ) -> Result<Self::Result, EngineError>;
}

/// A notification to the sidecar: applied on the owner thread, never answered.
pub trait NotificationHandler: Method
where
    Self::Params: DeserializeOwned + Send + 'static,
{
    fn handle(engine: &mut Engine, now: u64, params: Self::Params) -> Result<(), EngineError>;
}

impl RequestHandler for Start {
    fn handle(engine: &mut Engine, now: u64, p: StartParams) -> Result<KickoffResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let (snapshot, kickoff) = engine.start(&session, p.problem, now)?;
        Ok(KickoffResult {
            snapshot,
            kickoff,
            wake: None,
        })
    }
}

impl RequestHandler for HandOff {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: HandOffParams,
    ) -> Result<HandOffResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let hand_off = crate::core::machine::HandOff {
            mode: Some(p.mode.into()),
            steps: p.steps,
            plan: p.plan,
            hypotheses: p.hypotheses,
            message: p.message,
        };
        let (snapshot, tool_result) = engine.hand_off(&session, hand_off, now)?;
        Ok(HandOffResult {
            snapshot,
            tool_result,
        })
    }
}

impl RequestHandler for Proceed {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: ProceedParams,
    ) -> Result<KickoffResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let input = ProceedInput {
            note: p.note,
            observations: p.observations,
            artifacts: p.artifacts,
        };
        let (snapshot, kickoff) = engine.proceed(&session, input, now)?;
        let wake = wake_info(engine, &session, snapshot.revision)?;
        Ok(KickoffResult {
            snapshot,
            kickoff,
            wake,
        })
    }
}

impl RequestHandler for Done {
    fn handle(engine: &mut Engine, now: u64, p: DoneParams) -> Result<KickoffResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let (snapshot, kickoff) = engine.done(&session, p.note, p.anyway.unwrap_or(false), now)?;
        let wake = wake_info(engine, &session, snapshot.revision)?;
        Ok(KickoffResult {
            snapshot,
            kickoff,
            wake,
        })
    }
}

/// The wake the command just asked for, as the person is told.
fn wake_info(
    engine: &mut Engine,
    session: &str,
    revision: u64,
) -> Result<Option<WakeInfo>, EngineError> {
    Ok(engine
        .wake_outlook(session, revision)?
        .map(|outlook| WakeInfo {
            state: outlook.state().to_string(),
            wakers: outlook
                .wakers
                .iter()
                .map(|h| h.slug().to_string())
                .collect(),
            revision,
            message: outlook.said(),
        }))
}

impl RequestHandler for ClaimWake {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: ClaimWakeParams,
    ) -> Result<ClaimWakeResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let kickoff = engine.claim_wake(&session, p.revision, now)?;
        let said = match kickoff {
            Some(_) => engine
                .wake_outlook(&session, p.revision)?
                .map(|o| text::wake_started(o.request.kind, &o.request.run)),
            None => None,
        };
        Ok(ClaimWakeResult {
            granted: kickoff.is_some(),
            kickoff,
            said,
        })
    }
}

impl RequestHandler for RecordHypotheses {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: RecordHypothesesParams,
    ) -> Result<Snapshot, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.record_hypotheses(&session, p.hypotheses, now)
    }
}

impl RequestHandler for Abort {
    fn handle(engine: &mut Engine, now: u64, p: SessionParams) -> Result<AbortResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let (snapshot, leftover_probes) = engine.abort(&session, now)?;
        Ok(AbortResult {
            snapshot,
            leftover_probes,
        })
    }
}

impl RequestHandler for Status {
    fn handle(engine: &mut Engine, now: u64, p: SessionParams) -> Result<Snapshot, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.status(&session, now)
    }
}

impl RequestHandler for Context {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: ContextParams,
    ) -> Result<ContextResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let (content, messages) = engine.context(&session, p.messages, now)?;
        let plan = p.held.and_then(|held| {
            let held: Vec<&str> = held.iter().map(String::as_str).collect();
            crate::core::context_sync::plan(&held, content.as_deref())
        });
        Ok(ContextResult {
            custom_type: crate::core::context_sync::CONTEXT_TYPE.to_string(),
            content,
            messages,
            plan,
        })
    }
}

impl RequestHandler for Stop {
    fn handle(engine: &mut Engine, now: u64, p: StopParams) -> Result<StopResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        // `stopHookActive` is only the harness's hint: the budgets that
        // decide live in the session.
        let StopAnswer {
            decision,
            reason,
            notice,
        } = engine.stop(&session, p.last_assistant_message.as_deref(), now)?;
        Ok(StopResult {
            decision: match decision {
                StopDecision::Allow { .. } => Decision::Allow,
                StopDecision::Block { .. } => Decision::Block,
            },
            reason,
            notice,
        })
    }
}

impl RequestHandler for Observe {
    fn handle(engine: &mut Engine, now: u64, p: ObserveParams) -> Result<Snapshot, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let input = ObservationInput {
            text: p.text,
            request_ids: p.request_ids,
        };
        engine.observe(&session, input, now)
    }
}

impl RequestHandler for ProbeSnippet {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: ProbeSnippetParams,
    ) -> Result<ProbeSnippetResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let placed = engine.probe_snippet(&session, p.into_request(), now)?;
        let note = crate::core::text::snippet_notes(
            &placed.probe.file,
            &placed.placement,
            placed
                .reached
                .as_ref()
                .map(|r| (r.target, r.listening.as_str())),
            placed.runtime_note.as_deref(),
        );
        Ok(ProbeSnippetResult {
            probe: placed.probe,
            language: placed.language.to_string(),
            snippet: placed.snippet,
            note,
            placement: placed.placement,
            snapshot: engine.status(&session, now)?,
        })
    }
}

impl RequestHandler for RemoveLogpoints {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: RemoveLogpointsParams,
    ) -> Result<RemoveLogpointsResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let removed = engine.remove_logpoints(&session, p.probe_ids, now)?;
        Ok(RemoveLogpointsResult {
            removed,
            snapshot: engine.status(&session, now)?,
        })
    }
}

impl RequestHandler for TurnStateRequest {
    fn handle(
        engine: &mut Engine,
        _: u64,
        p: SessionParams,
    ) -> Result<TurnStateResult, EngineError> {
        let session_id = engine.resolve(p.session_id.as_deref())?;
        let (state, detail) = engine.turn_state(&session_id)?;
        Ok(TurnStateResult {
            session_id,
            state,
            label: state.label().to_string(),
            detail,
        })
    }
}

impl RequestHandler for ProgressState {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: SessionParams,
    ) -> Result<Option<Bubble>, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.progress_state(&session, now)
    }
}

impl RequestHandler for ProgressViewRequest {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: SessionParams,
    ) -> Result<ProgressViewResult, EngineError> {
        let session_id = engine.resolve(p.session_id.as_deref())?;
        let (view, bubble) = engine.progress_view(&session_id, now)?;
        Ok(ProgressViewResult {
            session_id,
            todos: view.todos.unwrap_or_default(),
            goal: view.goal,
            activity: view.activity,
            bubble,
        })
    }
}

impl RequestHandler for AgentsList {
    fn handle(engine: &mut Engine, _: u64, p: SessionParams) -> Result<AgentList, EngineError> {
        let session_id = engine.resolve(p.session_id.as_deref())?;
        let agents = engine.agents(&session_id)?;
        Ok(AgentList { session_id, agents })
    }
}

impl NotificationHandler for TurnEventNotification {
    fn handle(engine: &mut Engine, now: u64, p: TurnEventParams) -> Result<(), EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let event = HarnessEvent {
            kind: p.kind,
            tool: p.tool,
            source: p.source,
            edits: p.edits,
        };
        engine.harness_event_with_detail(&session, event, p.text.as_deref(), now)
    }
}

impl NotificationHandler for ProgressTodos {
    fn handle(engine: &mut Engine, now: u64, p: TodosParams) -> Result<(), EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.todos(&session, &p.todos, now)
    }
}

impl NotificationHandler for ProgressGoal {
    fn handle(engine: &mut Engine, now: u64, p: GoalParams) -> Result<(), EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.goal(&session, &p.goal, now)
    }
}

impl NotificationHandler for ProgressActivity {
    fn handle(engine: &mut Engine, now: u64, p: ActivityParams) -> Result<(), EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.activity(&session, p.phase.as_deref(), p.line.as_deref(), now)
    }
}

impl NotificationHandler for AgentsEvent {
    fn handle(engine: &mut Engine, now: u64, p: AgentEventParams) -> Result<(), EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let event = AgentEvent {
            id: p.id,
            kind: p.kind,
            agent_type: p.agent_type,
            description: p.description,
            result: p.result,
            error: p.error,
            stats: AgentStats {
                tool_uses: p.tool_uses,
                turns: p.turns,
                max_turns: p.max_turns,
                usage: p.usage,
                compactions: p.compactions,
                question: p.question,
            },
        };
        engine.agent_event(&session, event, now)
    }
}

impl RequestHandler for Probes {
    fn handle(engine: &mut Engine, now: u64, p: ProbesParams) -> Result<ProbesResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let ledger = engine.probes(&session, p.rescan, now)?;
        Ok(ProbesResult {
            probes: ledger.probes,
            live: ledger.live,
            missing: ledger.missing,
            untracked: ledger.untracked,
            foreign: ledger.foreign,
            half_removed: ledger.half_removed,
            scanned: ledger.scanned,
        })
    }
}

fn file_name(target: &LogRun) -> Option<String> {
    target
        .run
        .as_ref()
        .map(|_| target.file.to_string_lossy().into_owned())
}

impl RequestHandler for Logs {
    fn handle(engine: &mut Engine, _: u64, p: LogsParams) -> Result<LogsResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let query = p.query(None);
        let answer = engine.logs(&session, p.run.as_deref(), &query)?;
        Ok(LogsResult {
            file: file_name(&answer.target),
            run: answer.target.run,
            entries: answer.page.entries,
            next_cursor: answer.page.next_cursor,
            total: answer.total,
            malformed: answer.page.malformed,
            oversized: answer.page.oversized,
            note: answer.target.note,
        })
    }
}

impl RequestHandler for LogSummaryRequest {
    fn handle(
        engine: &mut Engine,
        now: u64,
        p: LogSummaryParams,
    ) -> Result<LogSummaryResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let (target, summary) = engine.log_summary(&session, p.run.as_deref(), now)?;
        Ok(LogSummaryResult {
            file: file_name(&target),
            run: target.run,
            summary,
            note: target.note,
        })
    }
}

impl RequestHandler for Attach {
    fn handle(engine: &mut Engine, now: u64, p: AttachParams) -> Result<Snapshot, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        engine.attach(&session, &p.path, p.request_id, p.kind, now)
    }
}

impl RequestHandler for Mark {
    fn handle(engine: &mut Engine, now: u64, p: MarkParams) -> Result<MarkResult, EngineError> {
        let session = engine.resolve(p.session_id.as_deref())?;
        let marked = engine.mark(&session, &p.words, now)?;
        Ok(MarkResult {
            message: crate::core::text::marked(&marked.run, marked.line, &marked.words),
            run: marked.run,
            line: marked.line,
            words: marked.words,
        })
    }
}

impl RequestHandler for Sessions {
    fn handle(engine: &mut Engine, _: u64, _: NoParams) -> Result<SessionsResult, EngineError> {
        let current = engine.resolve(None)?;
        let sessions = engine
            .sessions()?
            .into_iter()
            .map(|s| SessionEntry {
                snapshot: s.snapshot,
                updated_at: s.updated_at,
            })
            .collect();
        Ok(SessionsResult { current, sessions })
    }
}
