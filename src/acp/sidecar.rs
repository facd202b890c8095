//! The proxy's view of the debug state: one engine per workspace an ACP
//! session works in, opened on first use, and the few questions the proxy
//! asks of it. A workspace whose state cannot be opened is logged and left
//! alone: the editor and the agent keep talking through the proxy.

use crate::core::harness::{HarnessEvent, HarnessEventKind, ToolNaming};
use crate::core::harness_memory::PersonCommandKind;
use crate::core::machine::{StopDecision, TurnSource};
use crate::core::wake::WakeRequest;
use crate::engine::owner::now_ms;
use crate::engine::{workspace_root, Engine, EngineConfig, EngineError, PersonAnswer};
use crate::workspace::committed;
use crate::workspace::store::wakers;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the agent's end of turn means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// Send it back with this text.
    Nudge(String),
    /// It may stop; the person may be told this.
    Allow(Option<String>),
}

#[derive(Default)]
pub struct Sidecar {
    engines: HashMap<PathBuf, Option<Engine>>,
    naming: ToolNaming,
    /// This proxy listed as a waker, per workspace whose state exists.
    leases: HashMap<PathBuf, wakers::WakerLease>,
}

impl Sidecar {
    /// Texts name our tools as the agent behind the proxy calls them.
    pub fn set_naming(&mut self, naming: ToolNaming) {
        self.naming = naming;
        for engine in self.engines.values_mut().flatten() {
            engine.set_tool_naming(naming);
        }
    }

    /// The engine for the workspace holding `cwd`, and its debug session.
    fn open(&mut self, cwd: &Path) -> Option<(&mut Engine, String)> {
        let root = workspace_root(cwd);
        let naming = self.naming;
        let engine = self
            .engines
            .entry(root.clone())
            .or_insert_with(|| match EngineConfig::for_agent(root.clone()) {
                Ok(config) => {
                    let store = committed::open_store(&config.root, &config.state_dir);
                    let mut engine = Engine::new(config, store);
                    engine.set_tool_naming(naming);
                    engine.set_host(crate::core::host::Host::Acp);
                    Some(engine)
                }
                Err(error) => {
                    tracing::warn!("acp: no debug state for {}: {error}", root.display());
                    None
                }
            })
            .as_mut()?;
        match engine.resolve(None) {
            Ok(session) => Some((engine, session)),
            Err(error) => {
                tracing::warn!("acp: {error}");
                None
            }
        }
    }

    /// Runs `job` on the workspace's engine; an engine error is logged
    /// and read as nothing.
    fn with<T>(
        &mut self,
        cwd: &Path,
        job: impl FnOnce(&mut Engine, &str, u64) -> Result<T, EngineError>,
    ) -> Option<T> {
        let (engine, session) = self.open(cwd)?;
        match job(engine, &session, now_ms()) {
            Ok(value) => Some(value),
            Err(error) => {
                tracing::warn!("acp: {error}");
                None
            }
        }
    }

    /// A turn-state report; `source` only for a turn start.
    pub fn turn(
        &mut self,
        cwd: &Path,
        kind: HarnessEventKind,
        tool: Option<String>,
        source: Option<TurnSource>,
    ) {
        let event = HarnessEvent {
            kind,
            tool,
            source,
            // An ACP tool call's edits are known from its kind, and rescanned
            // when it completes (`edited`).
            edits: Some(false),
        };
        self.with(cwd, |engine, session, now| {
            engine.harness_event(session, event, now)
        });
    }

    /// An edit finished: rescan the files it names, or the workspace.
    pub fn edited(&mut self, cwd: &Path, files: &[String]) {
        self.with(cwd, |engine, session, now| {
            if files.is_empty() {
                engine.rescan(session, now).map(drop)
            } else {
                engine.rescan_files(session, files, now).map(drop)
            }
        });
    }

    /// The board for `conversation` when it does not hold this copy yet.
    pub fn board(&mut self, cwd: &Path, conversation: &str) -> Option<String> {
        self.with(cwd, |engine, session, now| {
            engine.board_for(session, conversation, now)
        })
        .flatten()
    }

    /// The conversation lost what it was given (a session loaded again).
    pub fn forget(&mut self, cwd: &Path, conversation: &str) {
        self.with(cwd, |engine, session, now| {
            engine.conversation_reset(session, conversation, now)
        });
    }

    /// The person's command; the error as the person should read it.
    pub fn person(
        &mut self,
        cwd: &Path,
        kind: PersonCommandKind,
        words: String,
    ) -> Result<PersonAnswer, String> {
        let Some((engine, session)) = self.open(cwd) else {
            return Err("the workspace's debug state could not be opened".to_string());
        };
        engine
            .person_command(&session, kind, Some(words), now_ms())
            .map_err(|error| error.to_string())
    }

    /// The agent ended its turn with `last` as its last message.
    pub fn stopped(&mut self, cwd: &Path, last: Option<&str>) -> Stopped {
        let answer = self.with(cwd, |engine, session, now| {
            engine.agent_stopped(session, last, now)
        });
        match answer {
            Some(answer) => match (answer.decision, answer.reason) {
                (StopDecision::Block { .. }, Some(reason)) => Stopped::Nudge(reason),
                _ => Stopped::Allow(answer.notice),
            },
            None => Stopped::Allow(None),
        }
    }

    /// A nudge went to `conversation`.
    pub fn nudged(&mut self, cwd: &Path, conversation: &str, text: &str) {
        self.with(cwd, |engine, session, now| {
            engine.nudge_sent(session, conversation, text, now)
        });
    }

    /// The agent's plan as the session's progress.
    pub fn plan(&mut self, cwd: &Path, todos: &[Value]) {
        self.with(cwd, |engine, session, now| {
            engine.todos(session, todos, now)
        });
    }

    /// The kickoff of a wake request due in the workspace, taken by this
    /// proxy; None when none is due (or another waker took it). The proxy
    /// is listed as a waker of each workspace it serves once its state
    /// exists.
    pub fn take_wake(&mut self, cwd: &Path) -> Option<(String, WakeRequest)> {
        if !crate::engine::wakes_enabled() {
            return None;
        }
        let root = workspace_root(cwd);
        if !self.leases.contains_key(&root) {
            let state_dir = self.open(cwd)?.0.config().state_dir.clone();
            if let Ok(lease) = wakers::register(&state_dir, crate::core::host::Host::Acp) {
                self.leases.insert(root, lease);
            }
        }
        let view = self.with(cwd, |engine, session, now| engine.waiter_view(session, now))?;
        let revision = view.due?;
        let kickoff = self
            .with(cwd, |engine, session, now| {
                engine.claim_wake(session, revision, now)
            })
            .flatten()?;
        let request = self
            .with(cwd, |engine, session, _| {
                engine.wake_outlook(session, revision)
            })
            .flatten()?
            .request;
        Some((kickoff, request))
    }
}
