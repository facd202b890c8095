//! The engine: the single owner of mutable state in a process (DESIGN
//! section 2). It resolves sessions, applies commands through the store
//! (read, apply, write), performs the I/O their effects ask for (run files,
//! scans), keeps the per-process trackers (turn state, progress, subagents)
//! and records every change for the face to publish.
//!
//! The engine is synchronous; `owner` runs it on its own thread and feeds it
//! jobs in arrival order.

pub mod owner;

use crate::core::activity::{activity_changes, Activity, ActivityChange};
use crate::core::agents::{AgentEvent, AgentRecord};
use crate::core::context_sync::{sync_context, Synced};
use crate::core::error::CommandName;
use crate::core::error::DomainError;
use crate::core::harness::{edited_files, HarnessEvent, HarnessEventKind};
use crate::core::machine::ArtifactInput;
use crate::core::machine::{
    self, Command, Effect, HandOff, ObservationInput, ProbeRequest, ProceedInput, Reconciliation,
    ScanReport, ScanScope, StopDecision,
};
use crate::core::model::{DebugState, Hypothesis, Placement, Probe, ProbeState};
use crate::core::progress::{Bubble, BubbleChange};
use crate::core::session_id::{check_session_id, DEFAULT_SESSION};
use crate::core::snapshot::{snapshot, Snapshot};
use crate::core::text::{self, RenderEnv};
use crate::core::turn::TurnState;
use crate::workspace::artifacts;
use crate::workspace::breadcrumb::{self, Breadcrumb};
use crate::workspace::ingest::{self, IngestInfo};
use crate::workspace::logread::{self, LogPage, LogQuery, LogSummary};
use crate::workspace::runlog::{self, Appended, LineCounter};
use crate::workspace::scan::{self, index, ForeignProbe, HalfRemoved, ScanOutcome, ScanTarget};
use crate::workspace::snippet::{self, SnippetInput};
use crate::workspace::store::{
    Refused, Store, StoreError, Stored, Update, SESSIONS_DIR, STATE_FILE,
};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("workspace I/O failed: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where the engine works.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The workspace root: scans walk it, probe files are relative to it.
    pub root: PathBuf,
    /// The state directory (`<root>/.debug-sidecar` unless overridden).
    pub state_dir: PathBuf,
    /// The session of requests that name none (from `initialize`).
    pub default_session: Option<String>,
}

/// The state directory's name under the workspace root.
pub const STATE_DIR_NAME: &str = ".debug-sidecar";
/// Overrides the state directory when no option names one.
pub const STATE_DIR_ENV: &str = "DEBUG_SIDECAR_DIR";
/// Names the session an agent's processes (the MCP face, hooks) act on;
/// without it they act on the workspace's most recently active session, the
/// one an editor started or shows.
pub const SESSION_ENV: &str = "DEBUG_SIDECAR_SESSION";

impl EngineConfig {
    /// The configuration of an agent's face (MCP, hooks) in `root`: the
    /// session from [`SESSION_ENV`], else whichever is most recently active.
    /// The harness's own session id is never the debug session's: the
    /// person may have started the debug session in an editor.
    pub fn for_agent(root: PathBuf) -> Self {
        let mut config = EngineConfig::for_workspace(root, None);
        config.default_session = std::env::var(SESSION_ENV).ok().filter(|s| !s.is_empty());
        config
    }

    /// The state directory for a workspace: the one given, else
    /// `$DEBUG_SIDECAR_DIR`, else `<root>/.debug-sidecar`; a relative one is
    /// taken from the root.
    pub fn for_workspace(root: PathBuf, state_dir: Option<PathBuf>) -> Self {
        let state_dir = state_dir
            .or_else(|| std::env::var_os(STATE_DIR_ENV).map(PathBuf::from))
            .map(|dir| {
                if dir.is_relative() {
                    root.join(dir)
                } else {
                    dir
                }
            })
            .unwrap_or_else(|| root.join(STATE_DIR_NAME));
        EngineConfig {
            root,
            state_dir,
            default_session: None,
        }
    }
}

/// One session as a listing shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// When the session was last written (ms since the epoch).
    pub updated_at: u64,
}

/// Something an observer should hear about, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    State(Snapshot),
    Turn {
        session_id: String,
        state: TurnState,
    },
    Progress(BubbleChange),
    Agent {
        session_id: String,
        record: AgentRecord,
    },
    /// Complete lines reached a run's log file.
    LogAppended {
        session_id: String,
        run_id: String,
        appended: Appended,
    },
}

/// The probe ledger as `debug/probes` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeLedger {
    pub probes: Vec<Probe>,
    pub live: usize,
    pub missing: Vec<String>,
    /// Found on disk by this scan without being in the ledger (now adopted).
    pub untracked: Vec<String>,
    pub foreign: Vec<ForeignProbe>,
    pub half_removed: Vec<HalfRemoved>,
    /// Whether this answer comes from a fresh scan.
    pub scanned: bool,
}

/// Which run's file a log request reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRun {
    pub run: Option<String>,
    pub file: PathBuf,
    /// Why this is not the run asked for, when it is not.
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogsAnswer {
    pub target: LogRun,
    pub page: LogPage,
    /// Lines in the run's file.
    pub total: u64,
}

/// What the last scan of a session found besides its ledger's probes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanExtras {
    pub half_removed: Vec<HalfRemoved>,
    pub foreign: Vec<ForeignProbe>,
}

/// A probe scan the owner should run off its thread and commit back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanRequest {
    pub session_id: String,
    pub state_dir: PathBuf,
    pub target: ScanTarget,
}

impl ScanRequest {
    /// Runs the (decision) rescan it asks for.
    pub fn run(&self) -> ScanOutcome {
        let (findings, _) = index::rescan(&self.state_dir, &self.target, false);
        scan::outcome_for(&findings.found, &self.session_id, ScanScope::Workspace)
    }
}

/// When the rescan an effect asks for runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanTiming {
    /// Before answering: the answer depends on it.
    Inline,
    /// Later, off the owner: a harness event needs no answer.
    Deferred,
}

/// A command applied: what it produced and the state around it.
struct Applied {
    effects: Vec<Effect>,
    before: DebugState,
    after: Stored,
}

/// What a stop decided, with the texts a harness passes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopAnswer {
    pub decision: StopDecision,
    /// For a block: the text sent back to the model.
    pub reason: Option<String>,
    /// For an allow: what to tell the user, if anything.
    pub notice: Option<String>,
}

/// A probe placed in the ledger and the block to paste.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedProbe {
    pub probe: Probe,
    pub snippet: String,
    pub language: &'static str,
    /// Where its file sits for the workspace walk.
    pub placement: Placement,
}

/// What the snippet request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnippetRequest {
    pub file: String,
    pub hypothesis_id: Option<String>,
    pub message: Option<String>,
    pub language: Option<String>,
    pub variables: Vec<String>,
}

pub struct Engine {
    config: EngineConfig,
    store: Box<dyn Store>,
    /// Each session's activity as this process last saw and announced it.
    activities: HashMap<String, Activity>,
    /// The bubble observers last heard of, per session (bubbles also expire
    /// with time, without any saved change).
    visible: HashMap<String, Option<Bubble>>,
    extras: HashMap<String, ScanExtras>,
    /// Run files' line counts, kept by offset so a recount reads only what
    /// was appended.
    counter: RefCell<LineCounter>,
    /// Where the workspace's ingest server listens, when one runs.
    ingest: Cell<Option<IngestInfo>>,
    ingest_urls: RefCell<HashMap<String, String>>,
    /// Whether `ingest.json` names this process's server yet.
    ingest_recorded: Cell<bool>,
    changes: Vec<Change>,
    scan_requests: Vec<ScanRequest>,
    /// The last revision announced per session, so a write seen again
    /// (through the watcher) is not announced twice.
    announced: HashMap<String, u64>,
    /// The most recently written session, once known: kept current by this
    /// process's writes and the ones the watcher reports, so resolving a
    /// request without a session id does not list the directory each time.
    /// (Outer None: not looked up yet; inner None: there is no session.)
    recent: Option<Option<String>>,
}

impl Engine {
    pub fn new(config: EngineConfig, store: Box<dyn Store>) -> Self {
        Engine {
            config,
            store,
            activities: HashMap::new(),
            visible: HashMap::new(),
            extras: HashMap::new(),
            counter: RefCell::new(LineCounter::new()),
            // Read from `ingest.json` when first needed, or set by `serve`.
            ingest: Cell::new(None),
            ingest_urls: RefCell::new(HashMap::new()),
            ingest_recorded: Cell::new(false),
            changes: Vec::new(),
            scan_requests: Vec::new(),
            announced: HashMap::new(),
            recent: None,
        }
    }

    /// Another process may have written the session: announce its state if
    /// it is newer than the last one announced.
    pub fn refresh(&mut self, session_id: &str, now: u64) -> Result<(), EngineError> {
        let stored = self.store.load(session_id)?;
        // Any other revision is news: after a damaged file is moved aside or
        // a session is reset, revisions start again from 1.
        let known = self.announced.get(session_id).copied().unwrap_or(0);
        if stored.revision != known {
            self.announce(session_id, &stored);
        }
        let saved = self.store.load_activity(session_id)?;
        let heard = self.activities.get(session_id).cloned().unwrap_or_default();
        if saved.revision != heard.revision {
            self.announce_activity(session_id, &heard, saved, now);
        }
        Ok(())
    }

    /// Complete lines reached a run's log file (counted by the watcher).
    pub fn log_appended(&mut self, session_id: &str, run_id: &str, appended: Appended) {
        self.changes.push(Change::LogAppended {
            session_id: session_id.to_string(),
            run_id: run_id.to_string(),
            appended,
        });
    }

    /// Any session may have changed unheard: reread them all. Which one is
    /// the most recent is then looked up again, not taken from the order in
    /// which they were reread.
    pub fn refresh_all(&mut self, now: u64) -> Result<(), EngineError> {
        for session_id in self.store.session_ids()? {
            self.refresh(&session_id, now)?;
        }
        self.recent = None;
        Ok(())
    }

    fn announce(&mut self, session_id: &str, stored: &Stored) {
        self.announced
            .insert(session_id.to_string(), stored.revision);
        self.recent = Some(Some(session_id.to_string()));
        let snapshot = self.snapshot_of(session_id, stored);
        self.changes.push(Change::State(snapshot));
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The session a request means: the one it names, else the one from
    /// `initialize`, else the most recently active, else `"default"`.
    pub fn resolve(&mut self, requested: Option<&str>) -> Result<String, EngineError> {
        if let Some(id) = requested {
            check_session_id(id)?;
            return Ok(id.to_string());
        }
        if let Some(id) = &self.config.default_session {
            check_session_id(id)?;
            return Ok(id.clone());
        }
        if self.recent.is_none() {
            self.recent = Some(self.store.most_recent()?);
        }
        Ok(self
            .recent
            .clone()
            .flatten()
            // No session left: the one whose state directory was deleted.
            .or_else(|| self.lost_session().map(|lost| lost.session_id))
            .unwrap_or_else(|| DEFAULT_SESSION.to_string()))
    }

    /// The session whose state was deleted while it was active, as the note
    /// kept outside the state directory remembers it.
    pub fn lost_session(&self) -> Option<Breadcrumb> {
        let crumb = breadcrumb::read(&self.config.root)?;
        if crumb.state_dir != self.config.state_dir.to_string_lossy() {
            return None;
        }
        check_session_id(&crumb.session_id).ok()?;
        let state = self
            .config
            .state_dir
            .join(SESSIONS_DIR)
            .join(&crumb.session_id)
            .join(STATE_FILE);
        (!state.exists()).then_some(crumb)
    }

    /// The person and the model were told: the note goes.
    pub fn forget_lost_session(&self, session_id: &str) {
        breadcrumb::clear(&self.config.root, session_id);
    }

    /// Keeps the note outside the state directory in step with a write.
    fn note_session(&self, session_id: &str, state: &DebugState) {
        let Some(session) = state.session() else {
            breadcrumb::clear(&self.config.root, session_id);
            return;
        };
        let crumb = Breadcrumb {
            session_id: session_id.to_string(),
            state_dir: self.config.state_dir.to_string_lossy().into_owned(),
            probes: session
                .probes
                .iter()
                .filter(|p| p.state != ProbeState::Missing)
                .map(|p| format!("{} {}", p.id, p.location()))
                .collect(),
        };
        if let Err(error) = breadcrumb::write(&self.config.root, &crumb) {
            tracing::warn!("could not note the session outside its state directory: {error}");
        }
    }

    /// Changes since the last call, oldest first.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.changes)
    }

    /// Scans that harness events asked for, to run off the owner.
    pub fn take_scan_requests(&mut self) -> Vec<ScanRequest> {
        std::mem::take(&mut self.scan_requests)
    }

    pub fn env(&self, session_id: &str) -> RenderEnv {
        RenderEnv {
            runs_dir: Some(self.runs_dir(session_id).to_string_lossy().into_owned()),
            ingest_url: self.ingest_url(session_id),
        }
    }

    /// This process now hosts the workspace's ingest server.
    pub fn set_ingest(&mut self, info: IngestInfo) {
        self.ingest.set(Some(info));
        self.ingest_recorded.set(false);
    }

    /// The URL the session's browser probes post to, when a server runs.
    fn ingest_url(&self, session_id: &str) -> Option<String> {
        let info = match self.ingest.get() {
            Some(info) => info,
            None => {
                // A process without a server of its own (the MCP face) may
                // have started before the workspace's `serve` recorded its.
                let found =
                    IngestInfo::read(&self.config.state_dir).filter(IngestInfo::is_alive)?;
                self.ingest.set(Some(found));
                self.ingest_recorded.set(true);
                found
            }
        };
        let info = &info;
        let mut urls = self.ingest_urls.borrow_mut();
        if let Some(url) = urls.get(session_id) {
            return Some(url.clone());
        }
        // A token lives beside the session's state: a session never written
        // (a status before any start) gets none, so reading leaves no trace.
        let session_dir = self.config.state_dir.join(SESSIONS_DIR).join(session_id);
        if !session_dir.is_dir() {
            return None;
        }
        // A URL handed out must survive this process: a restarted server
        // reads the port back from the record to take it again.
        if !self.ingest_recorded.get() {
            match info.record(&self.config.state_dir) {
                Ok(()) => self.ingest_recorded.set(true),
                Err(error) => tracing::warn!("could not record the ingest address: {error}"),
            }
        }
        let url = ingest::ingest_url(&self.config.state_dir, info, session_id)?;
        urls.insert(session_id.to_string(), url.clone());
        Some(url)
    }

    pub fn runs_dir(&self, session_id: &str) -> PathBuf {
        self.config
            .state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join("runs")
    }

    /// Half-removed blocks and foreign probes the last scan of the session saw.
    pub fn scan_extras(&self, session_id: &str) -> ScanExtras {
        self.extras.get(session_id).cloned().unwrap_or_default()
    }

    // ----------------------------------------------------------- requests

    /// Every session the store knows, most recently active first.
    pub fn sessions(&mut self) -> Result<Vec<SessionSummary>, EngineError> {
        let sessions = self.store.sessions()?;
        Ok(sessions
            .into_iter()
            .map(|(id, stored)| SessionSummary {
                snapshot: self.snapshot_of(&id, &stored),
                updated_at: stored.updated_at,
            })
            .collect())
    }

    /// The session now, its probes as a fresh (decision) rescan sees them.
    pub fn status(&mut self, session_id: &str, now: u64) -> Result<Snapshot, EngineError> {
        let (stored, _) = self.fresh_view(session_id, false, now)?;
        Ok(self.snapshot_of(session_id, &stored))
    }

    /// The session with its ledger reconciled against a fresh scan (`full`:
    /// the whole walk), and what the scan found beside it. A read: what the
    /// scan found is shown, not written.
    fn fresh_view(
        &mut self,
        session_id: &str,
        full: bool,
        now: u64,
    ) -> Result<(Stored, ScanExtras), EngineError> {
        let mut stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok((stored, self.scan_extras(session_id)));
        };
        let target = self.scan_target(session_id, session.files_to_rescan());
        let (findings, _) = index::rescan(&self.config.state_dir, &target, full);
        let outcome = scan::outcome_for(&findings.found, session_id, ScanScope::Workspace);
        if let Ok(seen) = machine::apply(&stored.state, Command::ProbeScan(outcome.report), now) {
            stored.state = seen.state;
        }
        let extras = ScanExtras {
            half_removed: outcome.half_removed,
            foreign: outcome.foreign,
        };
        self.extras.insert(session_id.to_string(), extras.clone());
        Ok((stored, extras))
    }

    /// Starts a session; returns it with the kickoff message for the model.
    pub fn start(
        &mut self,
        session_id: &str,
        problem: String,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let applied = self.apply(
            session_id,
            Command::Start { problem },
            now,
            ScanTiming::Inline,
        )?;
        Ok(self.with_kickoff(session_id, applied))
    }

    /// The hand-off tool call: the new state and the text the tool returns.
    pub fn hand_off(
        &mut self,
        session_id: &str,
        hand_off: HandOff,
        now: u64,
    ) -> Result<(Snapshot, String), EngineError> {
        let applied = self.apply(
            session_id,
            Command::HandOff(hand_off),
            now,
            ScanTiming::Inline,
        )?;
        let result = applied.effects.iter().find_map(|effect| match effect {
            Effect::HandOff(result) => Some(result.clone()),
            _ => None,
        });
        let tool_result = match (applied.after.state.session(), result) {
            (Some(session), Some(result)) => text::hand_off_result(session, &result),
            _ => String::new(),
        };
        Ok((self.snapshot_of(session_id, &applied.after), tool_result))
    }

    pub fn proceed(
        &mut self,
        session_id: &str,
        input: ProceedInput,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let applied = self.apply(session_id, Command::Proceed(input), now, ScanTiming::Inline)?;
        Ok(self.with_kickoff(session_id, applied))
    }

    pub fn done(
        &mut self,
        session_id: &str,
        note: Option<String>,
        now: u64,
    ) -> Result<(Snapshot, Option<String>), EngineError> {
        let applied = self.apply(session_id, Command::Done { note }, now, ScanTiming::Inline)?;
        Ok(self.with_kickoff(session_id, applied))
    }

    pub fn record_hypotheses(
        &mut self,
        session_id: &str,
        hypotheses: Vec<Hypothesis>,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        let command = Command::RecordHypotheses(hypotheses);
        let applied = self.apply(session_id, command, now, ScanTiming::Inline)?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    /// Ends the session; returns the probes still on disk.
    pub fn abort(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<(Snapshot, Vec<Probe>), EngineError> {
        let applied = self.apply(session_id, Command::Abort, now, ScanTiming::Inline)?;
        let leftover = applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Aborted { leftover } => Some(leftover),
                _ => None,
            })
            .unwrap_or_default();
        Ok((self.snapshot_of(session_id, &applied.after), leftover))
    }

    pub fn observe(
        &mut self,
        session_id: &str,
        input: ObservationInput,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        let applied = self.apply(session_id, Command::Observe(input), now, ScanTiming::Inline)?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    /// The agent's turn ended: send it back, or let it stop. A last assistant
    /// message the harness passes along counts as the agent having spoken.
    pub fn stop(
        &mut self,
        session_id: &str,
        last_message: Option<&str>,
        now: u64,
    ) -> Result<StopAnswer, EngineError> {
        // The message and the stop are one moment: one write, one revision.
        let spoke = last_message.is_some_and(|m| !m.trim().is_empty());
        let facts: &[Command] = if spoke {
            &[Command::AssistantMessage]
        } else {
            &[]
        };
        let applied =
            self.apply_with_facts(session_id, facts, Command::Stop, now, ScanTiming::Inline)?;
        let decision = applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Stop(decision) => Some(decision),
                _ => None,
            })
            .unwrap_or(StopDecision::Allow { notice: None });
        // Texts are rendered against the state they speak of: a nudge against
        // the session it sends back, a notice against the round just closed.
        let reason = text::stop_reason(applied.after.state.session(), &decision);
        let notice = match &decision {
            StopDecision::Allow {
                notice: Some(notice),
            } => {
                let round = applied
                    .before
                    .session()
                    .map_or(0, |session| session.round().index);
                Some(text::notice(notice, round))
            }
            _ => None,
        };
        Ok(StopAnswer {
            decision,
            reason,
            notice,
        })
    }

    /// The blackboard, and the harness's message list synced to it when given
    /// (`None` when the list needs no change).
    pub fn context(
        &mut self,
        session_id: &str,
        messages: Option<Vec<Value>>,
    ) -> Result<(Option<String>, Option<Vec<Value>>), EngineError> {
        let stored = self.store.load(session_id)?;
        let env = self.env(session_id);
        let content = stored
            .state
            .session()
            .map(|session| text::blackboard(session, &env));
        let synced =
            messages.and_then(
                |messages| match sync_context(&messages, content.as_deref()) {
                    Synced::Unchanged => None,
                    Synced::Changed(list) => Some(list),
                },
            );
        Ok((content, synced))
    }

    /// Registers a probe for a file and returns its block, ready to paste.
    pub fn probe_snippet(
        &mut self,
        session_id: &str,
        request: SnippetRequest,
        now: u64,
    ) -> Result<PlacedProbe, EngineError> {
        let file = self.workspace_relative(&request.file)?;
        // Refuse an unsupported language (or browser without an ingest URL)
        // before the ledger gains a probe.
        let env = self.env(session_id);
        let language = snippet::language_for(&file, request.language.as_deref())
            .and_then(|language| {
                snippet::check_writable(language, env.ingest_url.as_deref()).map(|()| language)
            })
            .map_err(|unsupported| DomainError::invalid("language", unsupported.to_string()))?;
        let command = Command::RegisterProbe(ProbeRequest {
            file,
            hypothesis_id: request.hypothesis_id,
            language: Some(language.to_string()),
        });
        let applied = self.apply(session_id, command, now, ScanTiming::Inline)?;
        let probe = applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::ProbeRegistered { probe } => Some(probe),
                _ => None,
            })
            .ok_or_else(|| DomainError::invalid("file", "no probe was registered"))?;
        let log_file = env.probe_log().unwrap_or_default();
        let variables: Vec<&str> = request.variables.iter().map(String::as_str).collect();
        let block = snippet::snippet(
            language,
            &SnippetInput {
                probe: &probe,
                session_id,
                session_tag: session_id,
                log_file: &log_file,
                message: request.message.as_deref().unwrap_or(""),
                variables: &variables,
                ingest_url: env.ingest_url.as_deref(),
            },
        )
        .map_err(|unsupported| DomainError::invalid("language", unsupported.to_string()))?;
        let placement =
            scan::placement(&self.config.root, &probe.file, Some(&self.config.state_dir));
        Ok(PlacedProbe {
            probe,
            snippet: block,
            language,
            placement,
        })
    }

    /// Reconcile the ledger with the whole workspace now (a full walk).
    pub fn rescan(&mut self, session_id: &str, now: u64) -> Result<Reconciliation, EngineError> {
        self.rescan_with(session_id, &[], true, now)
    }

    /// Reconcile after an edit: a decision rescan that also reads these
    /// files (absolute or workspace-relative), ignored or not.
    pub fn rescan_files(
        &mut self,
        session_id: &str,
        files: &[String],
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let files: Vec<String> = files
            .iter()
            .filter_map(|file| self.workspace_relative(file).ok())
            .collect();
        self.rescan_with(session_id, &files, false, now)
    }

    fn rescan_with(
        &mut self,
        session_id: &str,
        extra: &[String],
        full: bool,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(Reconciliation::default());
        };
        let mut tracked = session.files_to_rescan();
        tracked.extend(extra.iter().cloned());
        let target = self.scan_target(session_id, tracked);
        let (findings, _) = index::rescan(&self.config.state_dir, &target, full);
        let outcome = scan::outcome_for(&findings.found, session_id, ScanScope::Workspace);
        self.commit_scan(session_id, outcome, now)
    }

    /// What `check` reads beyond its walk: every active session's tracked
    /// files (ignored or behind a symlink), with every session's clues. A
    /// state that cannot be read adds nothing: the walk and the fingerprints
    /// still find the probes.
    pub fn check_target(&mut self) -> ScanTarget {
        let mut target = ScanTarget::for_session(
            &self.config.root,
            &self.config.state_dir,
            DEFAULT_SESSION,
            Vec::new(),
        );
        for (id, stored) in self.store.sessions().unwrap_or_default() {
            if let Some(session) = stored.state.session() {
                target.tracked.extend(session.files_to_rescan());
            }
            if let Some(token) = ingest::existing_token(&self.config.state_dir, &id) {
                target.clues = target.clues.with_token(&token, &id);
            }
        }
        target.tracked.sort();
        target.tracked.dedup();
        target
    }

    fn scan_target(&self, session_id: &str, tracked: Vec<String>) -> ScanTarget {
        ScanTarget::for_session(
            &self.config.root,
            &self.config.state_dir,
            session_id,
            tracked,
        )
    }

    /// Apply a scan that ran elsewhere.
    pub fn commit_scan(
        &mut self,
        session_id: &str,
        outcome: ScanOutcome,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        self.extras.insert(
            session_id.to_string(),
            ScanExtras {
                half_removed: outcome.half_removed,
                foreign: outcome.foreign,
            },
        );
        self.reconcile(session_id, outcome.report, now)
    }

    /// Apply a scan report to the ledger.
    fn reconcile(
        &mut self,
        session_id: &str,
        report: ScanReport,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let applied = self.apply(
            session_id,
            Command::ProbeScan(report),
            now,
            ScanTiming::Inline,
        )?;
        Ok(applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Reconciled(r) => Some(r),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// The ledger, and what the last scan found beside it; with `rescan`,
    /// after a fresh scan.
    pub fn probes(
        &mut self,
        session_id: &str,
        rescan: bool,
        now: u64,
    ) -> Result<ProbeLedger, EngineError> {
        // `rescan`: the whole walk, its adoptions written; otherwise the
        // decision rescan, shown and not written.
        let (stored, mut extras, adopted) = if rescan {
            let adopted = self.rescan(session_id, now)?.adopted;
            let stored = self.store.load(session_id)?;
            (stored, self.scan_extras(session_id), adopted)
        } else {
            let (stored, extras) = self.fresh_view(session_id, false, now)?;
            (stored, extras, Vec::new())
        };
        let probes = stored
            .state
            .session()
            .map(|s| s.probes.clone())
            .unwrap_or_default();
        // A lone end marker the ledger claimed is listed as its probe.
        extras.half_removed.retain(|half| {
            !probes.iter().any(|p| {
                p.id == half.probe_id && p.file == half.file && p.state == ProbeState::Live
            })
        });
        Ok(ProbeLedger {
            live: probes
                .iter()
                .filter(|p| p.state == ProbeState::Live)
                .count(),
            missing: probes
                .iter()
                .filter(|p| p.state == ProbeState::Missing)
                .map(|p| p.id.clone())
                .collect(),
            untracked: adopted,
            probes,
            foreign: extras.foreign,
            half_removed: extras.half_removed,
            scanned: stored.state.session().is_some(),
        })
    }

    /// The run a log request means: the one named when the session has it,
    /// else the current run, with a note saying so.
    fn log_run(&mut self, session_id: &str, run: Option<&str>) -> Result<LogRun, EngineError> {
        let stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            // After a session ends its run files stay: the one named, else the last.
            let runs = runlog::list_runs(&self.runs_dir(session_id));
            let run = match run {
                Some(run) if runs.iter().any(|r| r == run) => Some(run.to_string()),
                _ => runs.last().cloned(),
            };
            let note = match &run {
                Some(run) => format!("No debug session is active; showing its run {run}."),
                None => "No debug session is active and it left no run logs.".to_string(),
            };
            return Ok(LogRun {
                file: run
                    .as_ref()
                    .map(|run| runlog::run_file(&self.runs_dir(session_id), run))
                    .unwrap_or_default(),
                run,
                note: Some(note),
            });
        };
        let current = session.run_id().to_string();
        let (run, note) = match run {
            Some(run) if session.run(run).is_some() => (run.to_string(), None),
            Some(run) => {
                let known: Vec<&str> = session.runs.iter().map(|r| r.id.as_str()).collect();
                (
                    current.clone(),
                    Some(format!(
                        "Run {run} does not exist; showing the current run {current}. Runs: {}.",
                        known.join(", ")
                    )),
                )
            }
            None => (current, None),
        };
        Ok(LogRun {
            file: runlog::run_file(&self.runs_dir(session_id), &run),
            run: Some(run),
            note,
        })
    }

    /// One page of a run's log lines.
    pub fn logs(
        &mut self,
        session_id: &str,
        run: Option<&str>,
        query: &LogQuery,
    ) -> Result<LogsAnswer, EngineError> {
        let target = self.log_run(session_id, run)?;
        if target.run.is_none() {
            return Ok(LogsAnswer {
                target,
                page: LogPage::default(),
                total: 0,
            });
        }
        let page = logread::read_page(&target.file, query).map_err(|error| match error {
            logread::ReadError::BadCursor(_) => {
                EngineError::Domain(DomainError::invalid("cursor", error.to_string()))
            }
            logread::ReadError::Io(io) => EngineError::Io(io),
        })?;
        let total = self.counter.borrow_mut().count(&target.file)?;
        Ok(LogsAnswer {
            target,
            page,
            total,
        })
    }

    /// Per-probe figures of a run's log.
    pub fn log_summary(
        &mut self,
        session_id: &str,
        run: Option<&str>,
    ) -> Result<(LogRun, LogSummary), EngineError> {
        let target = self.log_run(session_id, run)?;
        if target.run.is_none() {
            return Ok((target, LogSummary::default()));
        }
        let summary = logread::summarize(&target.file)?;
        Ok((target, summary))
    }

    /// Copy a user's file (a screenshot, a crash dump, a HAR) into the
    /// session's `artifacts/` and record it, linked to an evidence request.
    pub fn attach(
        &mut self,
        session_id: &str,
        path: &str,
        request_id: Option<String>,
        kind: Option<String>,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        // Refuse early when no session could take it, before copying anything.
        let state = self.store.load(session_id)?.state;
        machine::check_legal(&state, CommandName::Attach)?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let source = artifacts::admissible(path, &self.config.root, home.as_deref())?;
        let dir = self
            .config
            .state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join("artifacts");
        let copy = artifacts::copy_in(&source, &dir)?;
        let input = ArtifactInput {
            path: copy.to_string_lossy().into_owned(),
            request_id,
            kind,
        };
        let applied = self.apply(session_id, Command::Attach(input), now, ScanTiming::Inline)?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    pub fn turn_state(&mut self, session_id: &str) -> Result<TurnState, EngineError> {
        Ok(self.store.load_activity(session_id)?.turn.state())
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

    pub fn agents(&mut self, session_id: &str) -> Result<Vec<AgentRecord>, EngineError> {
        Ok(self.store.load_activity(session_id)?.agents.list())
    }

    // ------------------------------------------------------- harness events

    /// A harness report: turn state, the progress bubble's turn, and the
    /// debug session's own event. Scans it asks for are deferred.
    pub fn harness_event(
        &mut self,
        session_id: &str,
        event: HarnessEvent,
        now: u64,
    ) -> Result<(), EngineError> {
        let turn_event = event.turn_event();
        let edge = event.progress_edge();
        self.change_activity(session_id, now, &mut |activity| {
            if let Some(turn_event) = turn_event {
                activity.turn.apply(turn_event);
            }
            match edge {
                Some(true) => drop(activity.progress.turn_start(session_id, now)),
                Some(false) => drop(activity.progress.turn_end(session_id, now)),
                None => {}
            }
        })?;
        if let Some(command) = event.session_command() {
            // Only an active session has anything to learn from the harness.
            if self.store.load(session_id)?.state.session().is_some() {
                self.apply(session_id, command, now, ScanTiming::Deferred)?;
            }
        }
        Ok(())
    }

    /// A harness reports a finished tool call (`PostToolUse`): a todo list
    /// becomes progress, the call is the session's tool event, and an edit's
    /// rescan runs now, on the edited files when the input names them
    /// (relative ones resolved against `base_dir`, the harness's `cwd`).
    pub fn tool_used(
        &mut self,
        session_id: &str,
        tool: &str,
        tool_input: &Value,
        base_dir: &Path,
        now: u64,
    ) -> Result<(), EngineError> {
        if tool == "TodoWrite" {
            if let Some(todos) = tool_input.get("todos").and_then(Value::as_array) {
                self.todos(session_id, todos, now)?;
            }
        }
        let call = HarnessEvent {
            kind: HarnessEventKind::ToolCall,
            tool: Some(tool.to_string()),
            source: None,
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

    pub fn activity(&mut self, session_id: &str, line: &str, now: u64) -> Result<(), EngineError> {
        self.change_activity(session_id, now, &mut |activity| {
            activity.progress.activity(session_id, line, now);
        })
    }

    pub fn agent_event(
        &mut self,
        session_id: &str,
        event: AgentEvent,
        now: u64,
    ) -> Result<(), EngineError> {
        self.change_activity(session_id, now, &mut |activity| {
            activity.agents.apply(event.clone(), now);
        })
    }

    /// Heartbeat: keeps running turns' bubbles alive and retires stale ones,
    /// in the sessions this process has seen.
    pub fn tick(&mut self, now: u64) {
        let shown: Vec<String> = self
            .activities
            .iter()
            .filter(|(id, activity)| {
                activity.progress.visible(id, now).is_some()
                    || activity.progress.is_turn_running(id)
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

    // ------------------------------------------------------------ internals

    /// The activity as this process last saw it, read from the store once.
    fn activity_of(&mut self, session_id: &str) -> Result<&Activity, EngineError> {
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
    fn change_activity(
        &mut self,
        session_id: &str,
        now: u64,
        apply: &mut dyn FnMut(&mut Activity),
    ) -> Result<(), EngineError> {
        // What observers last heard, and what is saved now (another process
        // may have written since): "nothing changed" is decided on the saved one.
        let known = self.activity_of(session_id)?.clone();
        let saved = self.store.load_activity(session_id)?;
        let mut candidate = saved.clone();
        apply(&mut candidate);
        if candidate.same_as(&saved) {
            if saved.revision != known.revision {
                self.announce_activity(session_id, &known, saved, now);
            }
            return Ok(());
        }
        let saved = self.store.update_activity(session_id, apply)?;
        self.announce_activity(session_id, &known, saved, now);
        Ok(())
    }

    /// Announce what differs between what observers heard and `now_saved`.
    fn announce_activity(
        &mut self,
        session_id: &str,
        heard: &Activity,
        now_saved: Activity,
        now: u64,
    ) {
        for change in activity_changes(session_id, heard, &now_saved, now) {
            let session_id = session_id.to_string();
            self.changes.push(match change {
                ActivityChange::Turn(state) => Change::Turn { session_id, state },
                ActivityChange::Progress(bubble) => {
                    Change::Progress(BubbleChange { session_id, bubble })
                }
                ActivityChange::Agent(record) => Change::Agent { session_id, record },
            });
        }
        self.visible.insert(
            session_id.to_string(),
            now_saved.progress.visible(session_id, now),
        );
        self.activities.insert(session_id.to_string(), now_saved);
    }

    /// A bubble that expired on its own is announced as gone.
    fn announce_visible_bubble(&mut self, session_id: &str, now: u64) {
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

    /// The snapshot after a command, with the kickoff text its effects ask for.
    fn with_kickoff(&self, session_id: &str, applied: Applied) -> (Snapshot, Option<String>) {
        let env = self.env(session_id);
        let kickoff = applied.after.state.session().and_then(|session| {
            applied.effects.iter().find_map(|effect| match effect {
                Effect::Kickoff(kickoff) => Some(text::kickoff(session, *kickoff, &env)),
                _ => None,
            })
        });
        (self.snapshot_of(session_id, &applied.after), kickoff)
    }

    fn snapshot_of(&self, session_id: &str, stored: &Stored) -> Snapshot {
        let mut snapshot = snapshot(
            session_id,
            &stored.state,
            &self.env(session_id),
            stored.revision,
        );
        snapshot.warning = stored.warning.clone();
        if snapshot.warning.is_none() && stored.revision == 0 && stored.state.session().is_none() {
            snapshot.warning = self
                .lost_session()
                .filter(|lost| lost.session_id == session_id)
                .map(|lost| text::lost_state(session_id, &lost.state_dir, &lost.probes).0);
        }
        snapshot
    }

    /// A probe file as the ledger names it: relative to the workspace root,
    /// never outside it.
    fn workspace_relative(&self, file: &str) -> Result<String, DomainError> {
        let path = Path::new(file.trim());
        let relative = if path.is_absolute() {
            path.strip_prefix(&self.config.root)
                .map_err(|_| DomainError::invalid("file", "is outside the workspace"))?
        } else {
            path
        };
        let mut parts = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(DomainError::invalid("file", "is outside the workspace"));
                    }
                }
                _ => return Err(DomainError::invalid("file", "is outside the workspace")),
            }
        }
        if parts.is_empty() {
            return Err(DomainError::invalid(
                "file",
                "must name a file in the workspace",
            ));
        }
        Ok(parts.join("/"))
    }

    /// Apply one command through the store: fresh facts from the disk first
    /// when the decision reads them, then the transition and its I/O.
    fn apply(
        &mut self,
        session_id: &str,
        command: Command,
        now: u64,
        timing: ScanTiming,
    ) -> Result<Applied, EngineError> {
        self.apply_with_facts(session_id, &[], command, now, timing)
    }

    /// `apply`, after harness facts (`facts`) that belong to the same moment:
    /// all of it is one write, one revision, one notification.
    fn apply_with_facts(
        &mut self,
        session_id: &str,
        facts: &[Command],
        command: Command,
        now: u64,
        timing: ScanTiming,
    ) -> Result<Applied, EngineError> {
        let io = SessionIo {
            root: &self.config.root,
            state_dir: &self.config.state_dir,
            runs_dir: self.runs_dir(session_id),
            session_id,
            counter: &self.counter,
        };
        let mut outcome: Option<Result<(Vec<Effect>, DebugState), EngineError>> = None;
        let mut halves: Option<ScanExtras> = None;
        let update = self.store.update(session_id, now, &mut |current| {
            let (result, facts) = io.step(current, facts, &command, now, timing, &mut halves);
            match result {
                Ok((next, effects)) => {
                    outcome = Some(Ok((effects, current.clone())));
                    Ok(next)
                }
                Err(error) => {
                    outcome = Some(Err(error));
                    Err(Refused { keep: Some(facts) })
                }
            }
        })?;
        if let Some(halves) = halves {
            self.extras.insert(session_id.to_string(), halves);
        }
        let (effects, before) = match outcome {
            Some(Ok(done)) => done,
            Some(Err(error)) => {
                // Facts learned before the refusal may have been written.
                if let Err(refresh) = self.refresh(session_id, now) {
                    tracing::warn!("could not reread session {session_id}: {refresh}");
                }
                return Err(error);
            }
            None => {
                return Err(DomainError::invalid("command", "the store did not apply it").into())
            }
        };
        let after = match update {
            Update::Written(stored) => {
                self.note_session(session_id, &stored.state);
                self.announce(session_id, &stored);
                stored
            }
            Update::Unchanged(stored) => stored,
            Update::Refused => self.store.load(session_id)?,
        };
        if effects.iter().any(|e| matches!(e, Effect::Rescan)) {
            let tracked = after
                .state
                .session()
                .map(|s| s.files_to_rescan())
                .unwrap_or_default();
            self.scan_requests.push(ScanRequest {
                session_id: session_id.to_string(),
                state_dir: self.config.state_dir.clone(),
                target: self.scan_target(session_id, tracked),
            });
        }
        Ok(Applied {
            effects,
            before,
            after,
        })
    }
}

/// The disk a session's commands touch.
struct SessionIo<'a> {
    root: &'a Path,
    state_dir: &'a Path,
    runs_dir: PathBuf,
    session_id: &'a str,
    counter: &'a RefCell<LineCounter>,
}

type StepResult = Result<(DebugState, Vec<Effect>), EngineError>;

impl SessionIo<'_> {
    /// One command against `current`, after the harness facts. Returns the
    /// outcome and the state with the facts and the disk facts learned before
    /// the command (kept even on refusal).
    fn step(
        &self,
        current: &DebugState,
        harness_facts: &[Command],
        command: &Command,
        now: u64,
        timing: ScanTiming,
        halves: &mut Option<ScanExtras>,
    ) -> (StepResult, DebugState) {
        let mut facts = current.clone();
        for fact in harness_facts {
            match machine::apply(&facts, fact.clone(), now) {
                Ok(transition) => facts = transition.state,
                Err(error) => return (Err(error.into()), facts),
            }
        }
        if machine::needs_fresh_scan(&facts, command) {
            // Cleanup is verified from the whole walk, never from the index
            // alone: it is the claim the session ends on.
            let verifying = matches!(command, Command::Stop)
                && facts.stage() == Some(crate::core::model::Stage::CleaningUp);
            match self.scan(&facts, verifying, now, halves) {
                Ok((state, _)) => facts = state,
                Err(error) => return (Err(error), facts),
            }
        }
        if matches!(command, Command::Proceed(_) | Command::Done { .. }) {
            // Both close the run: its line count must be current first.
            match self.count_current_run(&facts, now) {
                Ok(state) => facts = state,
                Err(error) => return (Err(error), facts),
            }
        }
        let result = self.transition(&facts, command.clone(), now, timing, halves);
        (result, facts)
    }

    fn transition(
        &self,
        state: &DebugState,
        command: Command,
        now: u64,
        timing: ScanTiming,
        halves: &mut Option<ScanExtras>,
    ) -> StepResult {
        let transition = machine::apply(state, command, now)?;
        let mut state = transition.state;
        let mut effects = Vec::new();
        for effect in transition.effects {
            match effect {
                Effect::RunStarted { ref run_id } => {
                    runlog::start_run(&self.runs_dir, run_id)?;
                    effects.push(effect);
                }
                Effect::Rescan if timing == ScanTiming::Inline => {
                    let (scanned, reconciled) = self.scan(&state, false, now, halves)?;
                    state = scanned;
                    effects.push(Effect::Reconciled(reconciled));
                }
                other => effects.push(other),
            }
        }
        Ok((state, effects))
    }

    /// A decision rescan of the session (`full`: the whole walk).
    fn scan(
        &self,
        state: &DebugState,
        full: bool,
        now: u64,
        halves: &mut Option<ScanExtras>,
    ) -> Result<(DebugState, Reconciliation), EngineError> {
        let Some(session) = state.session() else {
            return Ok((state.clone(), Reconciliation::default()));
        };
        let target = ScanTarget::for_session(
            self.root,
            self.state_dir,
            self.session_id,
            session.files_to_rescan(),
        );
        let (findings, _) = index::rescan(self.state_dir, &target, full);
        let outcome = scan::outcome_for(&findings.found, self.session_id, ScanScope::Workspace);
        *halves = Some(ScanExtras {
            half_removed: outcome.half_removed,
            foreign: outcome.foreign,
        });
        let transition = machine::apply(state, Command::ProbeScan(outcome.report), now)?;
        let reconciled = transition
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Reconciled(r) => Some(r),
                _ => None,
            })
            .unwrap_or_default();
        Ok((transition.state, reconciled))
    }

    fn count_current_run(&self, state: &DebugState, now: u64) -> Result<DebugState, EngineError> {
        let Some(session) = state.session() else {
            return Ok(state.clone());
        };
        let run_id = session.run_id().to_string();
        let file = runlog::run_file(&self.runs_dir, &run_id);
        let lines = self.counter.borrow_mut().count(&file)?;
        Ok(machine::apply(state, Command::LogLines { run_id, lines }, now)?.state)
    }
}
