//! The engine: the single owner of mutable state in a process (DESIGN
//! section 2). It resolves sessions, applies commands through the store
//! (read, apply, write), performs the I/O their effects ask for (run files,
//! scans), keeps the per-process trackers (turn state, progress, subagents)
//! and records every change for the face to publish.
//!
//! The engine is synchronous; `owner` runs it on its own thread and feeds it
//! jobs in arrival order.

mod activity;
pub mod certificate;
mod commands;
mod config;
mod harness;
mod hits;
mod logpoints;
mod logs;
pub mod owner;
mod probes;
mod rates;
mod recording;
mod session_io;
pub mod tool_results;
pub mod tools;
mod wake;

pub use harness::{FormAnswer, PersonAnswer};
pub use wake::{WaiterView, WakeOutlook};

pub use config::{
    wakes_enabled, workspace_root, EngineConfig, StateDirError, StateDirOrigin, SESSION_ENV,
    STATE_DIR_ENV, STATE_DIR_NAME, WAKE_ENV,
};
use session_io::SessionIo;

use crate::core::activity::{activity_changes, Activity, ActivityChange};
use crate::core::agents::{AgentEvent, AgentRecord};
use crate::core::context_sync::{sync_context, Synced};
use crate::core::error::CommandName;
use crate::core::error::DomainError;
use crate::core::harness::{edited_files, HarnessEvent, HarnessEventKind, ToolNaming};
use crate::core::host::Host;
use crate::core::machine::ArtifactInput;
use crate::core::machine::{
    self, Command, Effect, HandOff, ObservationInput, ProbeRequest, ProceedInput, Reconciliation,
    ScanReport, StopDecision,
};
use crate::core::model::{DebugState, Hypothesis, Placement, Probe, ProbeKind, ProbeState};
use crate::core::progress::{Bubble, BubbleChange};
use crate::core::revision;
use crate::core::session_id::{check_session_id, DEFAULT_SESSION};
use crate::core::snapshot::{snapshot, Snapshot};
use crate::core::target::Target;
use crate::core::text::{self, RenderEnv};
use crate::core::turn::TurnState;
use crate::workspace::artifacts;
use crate::workspace::breadcrumb::{self, Breadcrumb};
use crate::workspace::ingest::{self, IngestInfo};

/// Starts the process's ingest server and says where it listens.
pub type IngestHost = Box<dyn Fn() -> io::Result<IngestInfo> + Send>;
use crate::workspace::logread::{self, LogPage, LogQuery, LogSummary};
use crate::workspace::runlog::{self, Appended, LineCounter};
use crate::workspace::scan::{self, ForeignProbe, HalfRemoved, ScanOutcome, ScanTarget};
use crate::workspace::snippet::{self, SnippetInput};
use crate::workspace::store::{
    Refused, Store, StoreError, Stored, Update, SESSIONS_DIR, STATE_FILE,
};
use crate::workspace::targets;
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
        /// The provider's status text beside the state, if any.
        detail: Option<String>,
    },
    Progress(BubbleChange),
    Agent {
        session_id: String,
        record: AgentRecord,
    },
    /// A person's wake request became due (wakers take it), or what became
    /// of it was decided (delivered, superseded).
    Wake {
        session_id: String,
        request: crate::core::wake::WakeRequest,
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
    /// Files the scan read (the walk's and the tracked ones).
    pub files_read: usize,
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
        scan::rescan_session(&self.state_dir, &self.target, &self.session_id, false)
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
    /// For a block that posts from elsewhere: the listener it reaches.
    pub reached: Option<Reached>,
    /// Where the code runs, when that changed the block: for page code, why
    /// the file got the posting block and the Content Security Policy that
    /// must allow the post (`text::page_note`); for Deno's, the permission
    /// the program must run with (`text::deno_note`).
    pub runtime_note: Option<String>,
}

/// Where a person's mark landed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Marked {
    pub run: String,
    /// 1-based line of the run's file; null if it could not be found again.
    pub line: Option<u64>,
    /// The words as kept (cut, redacted).
    pub words: String,
}

/// A target's listener, as a placed probe reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    pub target: Target,
    /// `address:port` it listens on.
    pub listening: String,
    /// What the block posts to.
    pub url: String,
}

/// What the snippet request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnippetRequest {
    pub file: String,
    pub hypothesis_id: Option<String>,
    pub message: Option<String>,
    pub language: Option<String>,
    pub variables: Vec<String>,
    /// `logpoint`: no block; the ledger holds `file:line` and the variables.
    pub kind: ProbeKind,
    /// A logpoint's 1-based line.
    pub line: Option<u32>,
    /// Where the program runs: a block for another target posts its line
    /// to that target's listener.
    pub target: Target,
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
    /// Starts this process's own ingest server (only `serve` hosts one),
    /// the first time a live session needs its URL.
    ingest_host: Option<IngestHost>,
    ingest_urls: RefCell<HashMap<String, String>>,
    /// Whether `ingest.json` names this process's server yet.
    ingest_recorded: Cell<bool>,
    changes: Vec<Change>,
    scan_requests: Vec<ScanRequest>,
    /// The last revision announced per session, with its write time, so a
    /// write seen again (through the watcher) is not announced twice.
    announced: HashMap<String, (u64, u64)>,
    /// The most recently written session, once known: kept current by this
    /// process's writes and the ones the watcher reports, so resolving a
    /// request without a session id does not list the directory each time.
    /// (Outer None: not looked up yet; inner None: there is no session.)
    recent: Option<Option<String>>,
    /// How the harness this process serves calls our tools.
    tool_naming: ToolNaming,
    /// Where the person this process serves gives their commands.
    host: Host,
    /// Whether the person's commands through this engine come from away
    /// from the agent's chat, and so ask for the agent to be woken.
    asks_wake: bool,
    /// The workspace's redaction rules, read when first needed.
    redactor: std::cell::OnceCell<crate::core::redact::Redactor>,

    /// Values redacted per run file, counted by offset.
    redactions: RefCell<crate::workspace::redaction::RedactionCounter>,
    /// The subagents this process's client reported, per session: stopped
    /// when it goes (`stop_fed_agents`).
    fed_agents: HashMap<String, std::collections::BTreeSet<String>>,
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
            ingest_host: None,
            ingest_urls: RefCell::new(HashMap::new()),
            ingest_recorded: Cell::new(false),
            changes: Vec::new(),
            scan_requests: Vec::new(),
            announced: HashMap::new(),
            recent: None,
            tool_naming: ToolNaming::default(),
            host: Host::default(),
            asks_wake: false,
            redactor: std::cell::OnceCell::new(),
            redactions: RefCell::default(),
            fed_agents: HashMap::new(),
        }
    }

    /// Texts from now on say how this harness calls our tools.
    pub fn set_tool_naming(&mut self, naming: ToolNaming) {
        self.tool_naming = naming;
    }

    /// Texts from now on spell the person's commands as this host does.
    pub fn set_host(&mut self, host: Host) {
        self.host = host;
    }

    pub fn host(&self) -> Host {
        self.host
    }

    /// The workspace's redaction rules (`workspace::redaction`): every log
    /// line, summary and board this engine hands out goes through them.
    pub fn redactor(&self) -> &crate::core::redact::Redactor {
        self.redactor.get_or_init(|| {
            crate::workspace::redaction::load(&self.config.root, &self.config.state_dir)
        })
    }

    /// The workspace's target settings (path map, addresses), read fresh:
    /// the person may write them mid-session, and they are read only when a
    /// probe asks for a target or names a path outside the workspace.
    pub fn targets(&self) -> crate::workspace::targets::Targets {
        crate::workspace::targets::Targets::load(&self.config.root, &self.config.state_dir)
    }

    /// What an ingest server of this workspace does with what it receives.
    pub fn intake(&self) -> ingest::Intake {
        ingest::Intake {
            redactor: self.redactor().clone(),
            paths: Some(std::sync::Arc::new(
                crate::workspace::targets::LivePaths::new(
                    &self.config.root,
                    &self.config.state_dir,
                ),
            )),
            session: None,
        }
    }

    /// Values redacted in a session's current run, for the board.
    pub(super) fn redacted_in_current_run(&self, session_id: &str, state: &DebugState) -> u64 {
        let Some(session) = state.session() else {
            return 0;
        };
        let file = runlog::run_file(&self.runs_dir(session_id), session.run_id());
        self.redactions
            .borrow_mut()
            .count(&file, self.redactor())
            .unwrap_or(0)
    }

    /// Another process may have written the session: announce its state if
    /// it is newer than the last one announced.
    pub fn refresh(&mut self, session_id: &str, now: u64) -> Result<(), EngineError> {
        let stored = self.load(session_id)?;
        // Any other revision is news: after a damaged file is moved aside or
        // a session is reset, revisions start again from 1. A saturated one
        // is told apart by its write time.
        let known = self.announced.get(session_id).copied().unwrap_or((0, 0));
        if revision::changed(known, (stored.revision, stored.updated_at)) {
            self.announce(session_id, &stored);
        }
        let saved = self.store.load_activity(session_id)?;
        let heard = self.activities.get(session_id).cloned().unwrap_or_default();
        if saved.news_to(&heard) {
            self.announce_activity(session_id, &heard, saved, now);
        }
        Ok(())
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

    /// The session as saved. When `active.jsonl` does not link to the run
    /// the state names (a process killed between writing the state and
    /// switching the link, an agent's run that ended or died: see
    /// `runlog::lend_active`), it is repaired under the session's lock, against
    /// the state as it is then.
    fn load(&mut self, session_id: &str) -> Result<Stored, EngineError> {
        let stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(stored);
        };
        let runs_dir = self.runs_dir(session_id);
        // The state's current run, or the agent's run while it holds the link.
        let linked = runlog::linked_run(&runs_dir, session.run_id(), owner::now_ms());
        let current = runlog::run_file(&runs_dir, &linked);
        if runlog::active_target(&runs_dir).is_ok_and(|linked| linked == current) {
            return Ok(stored);
        }
        let repaired = self.store.update_then(
            session_id,
            owner::now_ms(),
            &mut |_| Err(Refused::default()),
            &mut |durable| session_io::follow_run(&runs_dir, durable),
        );
        if let Err(error) = repaired {
            tracing::warn!("could not repair the run link of session {session_id}: {error}");
        }
        Ok(stored)
    }

    fn announce(&mut self, session_id: &str, stored: &Stored) {
        self.announced
            .insert(session_id.to_string(), (stored.revision, stored.updated_at));
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

    /// Changes since the last call, oldest first.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.changes)
    }

    /// Scans that harness events asked for, to run off the owner.
    pub fn take_scan_requests(&mut self) -> Vec<ScanRequest> {
        std::mem::take(&mut self.scan_requests)
    }

    /// What texts and snapshots of the session render with; `live`: whether
    /// it is a live debug session (only those get, and may start, an ingest
    /// server).
    pub fn env(&self, session_id: &str, live: bool) -> RenderEnv {
        let ingest_url = live.then(|| self.ingest_url(session_id)).flatten();
        RenderEnv {
            runs_dir: Some(self.runs_dir(session_id).to_string_lossy().into_owned()),
            ingest_refused: if ingest_url.is_some() {
                ingest::busy_refusals(&self.config.state_dir)
            } else {
                0
            },
            ingest_url,
            listeners: if live {
                ingest::listener::Listening::all(&self.config.state_dir, session_id)
                    .into_iter()
                    .map(|(target, at)| (target, at.address()))
                    .collect()
            } else {
                Vec::new()
            },
            tools: self.tool_naming,
            host: self.host,
            // Counted where the board is rendered (`context`).
            redacted: 0,
            // Judged where a Proceed kickoff is made (`with_kickoff`).
            no_hits: Vec::new(),
            closed_attempts: None,
            closed_marks: Vec::new(),
            closed_marks_total: 0,
            fix_backing: None,
        }
    }

    fn snapshot_of(&self, session_id: &str, stored: &Stored) -> Snapshot {
        let env = self.env(session_id, stored.state.session().is_some());
        self.snapshot_with(session_id, stored, &env)
    }

    fn snapshot_with(&self, session_id: &str, stored: &Stored, env: &RenderEnv) -> Snapshot {
        let mut snapshot = snapshot(session_id, &stored.state, env, stored.revision);
        snapshot.warning = stored.warning.clone();
        if snapshot.warning.is_none() && stored.revision == 0 && stored.state.session().is_none() {
            snapshot.warning = self
                .lost_session()
                .filter(|lost| lost.session_id == session_id)
                .map(|lost| text::lost_state(session_id, &lost.state_dir, &lost.probes).0);
        }
        snapshot
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
        let io = SessionIo::new(
            &self.config,
            &self.counter,
            self.runs_dir(session_id),
            session_id,
        );
        let mut outcome: Option<Result<(Vec<Effect>, DebugState), EngineError>> = None;
        let mut halves: Option<ScanExtras> = None;
        let runs_dir = io.runs_dir.clone();
        let update = self.store.update_then(
            session_id,
            now,
            &mut |current| {
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
            },
            &mut |durable| session_io::follow_run(&runs_dir, durable),
        );
        let update = match update {
            Ok(update) => update,
            Err(error) => {
                // The state naming a new run was not written: its file is
                // nobody's (the link never left the run the state names).
                if let Some(Ok((effects, _))) = &outcome {
                    session_io::forget_unnamed_runs(&runs_dir, effects);
                }
                return Err(error.into());
            }
        };
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
