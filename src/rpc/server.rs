//! The LSP service: lifecycle, the method table, and the publisher that turns
//! engine changes into notifications.

use super::errors;
use super::handlers::{NotificationHandler, RequestHandler};
use crate::core::harness::ToolNaming;
use crate::core::host::Host;
use crate::core::session_id::check_session_id;
use crate::engine::owner::Owner;
use crate::engine::{tools, Change, Engine, EngineConfig};
use crate::protocol::{self, *};
use crate::workspace::committed;
use crate::workspace::ingest;
use crate::workspace::store::wakers;
use crate::workspace::watch::{watch_state_dir, StateWatch, Watched};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::{
    InitializeParams, InitializeResult, InitializedParams, ServerCapabilities, ServerInfo,
};
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService};

/// Set to `1` to register `debugSidecar/testPanic`, which the tests use to
/// prove a panicking handler or engine job is answered and survived.
pub const TEST_HOOKS_ENV: &str = "DEBUG_SIDECAR_TEST_HOOKS";
pub const TEST_PANIC_METHOD: &str = "debugSidecar/testPanic";
/// With the test hooks: `{advanceMs}` moves the server's clock forward and
/// runs the progress heartbeat at once, answering `{now}`.
pub const TEST_CLOCK_METHOD: &str = "debugSidecar/testClock";

/// Whether the test hooks are on (they also allow shorter ingest timeouts).
fn test_hooks() -> bool {
    std::env::var(TEST_HOOKS_ENV).is_ok_and(|v| v == "1")
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializationOptions {
    session_id: Option<String>,
    state_dir: Option<PathBuf>,
    /// The client's tools that edit files, beyond the ones known by name.
    #[serde(default)]
    edit_tools: Vec<String>,
    /// The host the person uses (`vscode`, `pi`, `oh-my-pi`, ...), where the
    /// client's own name would not say (VS Code's forks name themselves).
    host: Option<String>,
    /// The client can start the agent's turn in its host (pi's extension,
    /// OpenCode's plugin): it hears `debug/wakeRequested` and is listed as
    /// a waker while it runs.
    #[serde(default)]
    wake: bool,
}

pub struct Backend {
    client: Client,
    owner: OnceLock<Owner>,
    /// Kept alive while serving: announces other processes' writes.
    watcher: OnceLock<Mutex<StateWatch>>,
    shutdown_seen: Arc<AtomicBool>,
}

/// The client is gone (the connection ended, with or without `shutdown`):
/// the subagents it reported do not outlive it.
impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.get() {
            if let Err(error) = owner.ask(|engine, now| engine.stop_fed_agents(now)) {
                tracing::warn!("could not stop the client's subagents: {error}");
            }
        }
    }
}

/// A client that wakes the agent: its registration, made once the state
/// directory exists (a waker never makes one).
struct WakerSlot {
    host: Host,
    state_dir: PathBuf,
    lease: Mutex<Option<wakers::WakerLease>>,
}

impl WakerSlot {
    fn register(&self) {
        let Ok(mut lease) = self.lease.lock() else {
            return;
        };
        if lease.is_none() {
            *lease = wakers::register(&self.state_dir, self.host).ok();
        }
    }
}

/// A server notification with its params as JSON.
struct Wire<M>(PhantomData<M>);

impl<M: Method> Notification for Wire<M> {
    type Params = Value;
    const METHOD: &'static str = M::METHOD;
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let (config, named_host, wakes) = engine_config(&params)?;
        tracing::info!(
            "serving {} (state in {})",
            config.root.display(),
            config.state_dir.display()
        );
        let (changes, published) = mpsc::unbounded_channel();
        let state_dir = config.state_dir.clone();
        let bound = config.default_session.is_some();
        let store = committed::open_store(&config.root, &state_dir);
        let owner = Owner::spawn(Engine::new(config, store), changes);
        if self.owner.set(owner.clone()).is_err() {
            return Err(errors::internal("initialize was already handled"));
        }
        // Texts name our tools as the client's model calls them, by the
        // MCP face's rule (`clientInfo.name`: a harness shim names its host),
        // and the person's commands as the host the options or the name say.
        let name = params.client_info.as_ref().map(|info| info.name.clone());
        let naming = name
            .as_deref()
            .map(ToolNaming::of_client)
            .unwrap_or_default();
        let host = named_host
            .or(name)
            .as_deref()
            .map(Host::of_client)
            .unwrap_or_default();
        owner.tell(move |engine, _| {
            engine.set_tool_naming(naming);
            engine.set_host(host);
            // An editor's Proceed is given away from the agent's chat.
            engine.set_asks_wake(crate::core::wake::asked_from(Some(host)));
        });
        let waker = wakes.then(|| {
            let slot = Arc::new(WakerSlot {
                host,
                state_dir: state_dir.clone(),
                lease: Mutex::new(None),
            });
            slot.register();
            slot
        });
        tokio::spawn(publish(self.client.clone(), published, waker));
        // Browser probes post here; without it they have no URL, nothing else
        // fails. Started when a live session first needs the URL, so a window
        // with no debug session opens no port (nor gets it auto-forwarded).
        let limits = ingest::Limits::from_env(test_hooks());
        let runtime = tokio::runtime::Handle::current();
        let host_dir = state_dir.clone();
        owner.tell(move |engine, _| {
            let intake = engine.intake();
            engine.host_ingest(Box::new(move || {
                let address = ingest::start(
                    &host_dir,
                    ingest::LOOPBACK,
                    limits,
                    &runtime,
                    intake.clone(),
                )?;
                tracing::info!("ingest at http://{address}/ingest/<token>");
                Ok(ingest::IngestInfo {
                    port: address.port(),
                    pid: std::process::id(),
                })
            }))
        });
        self.watch(&state_dir, owner.clone());
        let session = owner
            .ask(|engine, _| engine.resolve(None))
            .map_err(errors::job_failed)?
            .map_err(errors::engine_error)?;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                experimental: Some(json!({
                    "debugSidecar": {
                        "protocolVersion": protocol::PROTOCOL_VERSION,
                        "sessionId": session,
                        "sessionBound": bound,
                    }
                })),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "debug-sidecar".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..InitializeResult::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {}

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shutdown_seen.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// The workspace from `workspaceFolders`, `rootUri` or the current
/// directory; the session and state directory from `initializationOptions`.
/// Also the host the options name, if any.
fn engine_config(
    params: &InitializeParams,
) -> jsonrpc::Result<(EngineConfig, Option<String>, bool)> {
    let options: InitializationOptions = match &params.initialization_options {
        None | Some(Value::Null) => InitializationOptions::default(),
        Some(raw) => errors::parse_params(raw.clone()).map_err(|mut e| {
            e.message = e
                .message
                .replacen("invalid params", "invalid initializationOptions", 1)
                .into();
            e
        })?,
    };
    if let Some(id) = &options.session_id {
        check_session_id(id).map_err(|e| errors::engine_error(e.into()))?;
    }
    #[allow(deprecated)] // `rootUri` is still what many clients send.
    let from_client = params
        .workspace_folders
        .iter()
        .flatten()
        .map(|folder| &folder.uri)
        .chain(params.root_uri.iter())
        .find_map(|uri| uri.to_file_path().map(|p| p.into_owned()));
    let root = match from_client {
        Some(root) => root,
        None => std::env::current_dir().map_err(|e| {
            errors::internal(format!("no workspace given and no current directory: {e}"))
        })?,
    };
    let mut config =
        EngineConfig::for_workspace(root, options.state_dir).map_err(errors::state_dir_error)?;
    config.default_session = options.session_id;
    config.edit_tools = options.edit_tools;
    Ok((config, options.host, options.wake))
}

impl Backend {
    /// Announce sessions other processes change, and the lines programs
    /// append to run logs. A workspace without a state directory is left
    /// untouched until a session is made in it (by this server or another
    /// process). Without a watch (no inotify) the server still works; it
    /// only misses others' changes until its own next request.
    fn watch(&self, state_dir: &Path, owner: Owner) {
        let watched = watch_state_dir(state_dir, move |watched| {
            owner.tell(move |engine, now| match watched {
                Watched::Session(session) => {
                    if let Err(error) = engine.refresh(&session, now) {
                        tracing::warn!("could not reread session {session}: {error}");
                    }
                }
                Watched::Everything => {
                    if let Err(error) = engine.refresh_all(now) {
                        tracing::warn!("could not reread the sessions: {error}");
                    }
                }
                Watched::RunLog {
                    session_id,
                    run_id,
                    appended,
                } => engine.log_appended(&session_id, &run_id, appended),
            })
        });
        match watched {
            Ok(watch) => {
                let _ = self.watcher.set(Mutex::new(watch));
            }
            Err(error) => tracing::warn!("not watching {}: {error}", state_dir.display()),
        }
    }

    fn owner(&self) -> jsonrpc::Result<&Owner> {
        self.owner
            .get()
            .ok_or_else(|| errors::internal("the server is not initialized"))
    }

    async fn request<M>(&self, params: Value) -> jsonrpc::Result<M::Result>
    where
        M: RequestHandler,
        M::Params: DeserializeOwned + Send + 'static,
        M::Result: Serialize + Send + 'static,
    {
        // No `.await` before the engine has run: arrival order is apply order.
        let params: M::Params = errors::parse_params(params)?;
        let answer = self
            .owner()?
            .ask(move |engine, now| M::handle(engine, now, params));
        let result = answer.map_err(errors::job_failed)?;
        result.map_err(errors::engine_error)
    }

    async fn notification<M>(&self, params: Value)
    where
        M: NotificationHandler,
        M::Params: DeserializeOwned + Send + 'static,
    {
        let params: M::Params = match errors::parse_params(params) {
            Ok(params) => params,
            Err(error) => {
                tracing::warn!("{} ignored: {}", M::METHOD, error.message);
                return;
            }
        };
        let Ok(owner) = self.owner() else {
            return;
        };
        owner.tell(move |engine, now| {
            if let Err(error) = M::handle(engine, now, params) {
                tracing::warn!("{} failed: {error}", M::METHOD);
            }
        });
    }
}

impl Backend {
    /// `tools/call`: the tool's answer as the MCP face gives it. A run of a
    /// program (`run_reproduction`) is prepared in arrival order and waits
    /// off the runtime, so the server keeps answering and notifying while
    /// it runs; every other call is applied before any `.await`, in arrival
    /// order.
    async fn tools_call(&self, params: Value) -> jsonrpc::Result<ToolCallResult> {
        let p: ToolCallParams = errors::parse_params(params)?;
        if let Some(id) = &p.session_id {
            check_session_id(id).map_err(|e| errors::engine_error(e.into()))?;
        }
        let owner = self.owner()?.clone();
        let answer =
            match tools::begin(&owner, p.session_id.as_deref(), &p.name, p.arguments) {
                tools::Begun::Answered(answer) => answer,
                tools::Begun::Running(run) => tokio::task::spawn_blocking(move || run.answer())
                    .await
                    .map_err(|error| errors::internal(format!("the run failed: {error}")))?,
            };
        Ok(ToolCallResult {
            content: vec![ToolContent {
                kind: "text".into(),
                text: answer.text,
            }],
            is_error: answer.is_error,
        })
    }

    /// `tools/list`: every tool of the catalogue.
    async fn tools_list(&self, params: Value) -> jsonrpc::Result<ToolsListResult> {
        let _: NoParams = errors::parse_params(params)?;
        Ok(ToolsListResult {
            tools: tools::specs(),
        })
    }

    /// Panics where the params say: in this handler, or in an engine job.
    async fn test_panic(&self, params: Value) -> jsonrpc::Result<Value> {
        if params.get("where").and_then(Value::as_str) == Some("engine") {
            let answer = self
                .owner()?
                .ask(|_, _| -> Value { panic!("test hook: an engine job panicked") });
            return answer.map_err(errors::job_failed);
        }
        panic!("test hook: a handler panicked")
    }

    /// Moves the clock the engine reads forward by `advanceMs`.
    async fn test_clock(&self, params: Value) -> jsonrpc::Result<Value> {
        let Some(ms) = params.get("advanceMs").and_then(Value::as_u64) else {
            let invalid = crate::core::error::DomainError::invalid(
                "advanceMs",
                "a whole number of milliseconds is needed",
            );
            return Err(errors::engine_error(invalid.into()));
        };
        let now = self
            .owner()?
            .advance_clock(ms)
            .map_err(errors::job_failed)?;
        Ok(json!({ "now": now }))
    }
}

/// Sends every change to the client, in order, as its notification.
async fn publish(
    client: Client,
    mut changes: mpsc::UnboundedReceiver<Change>,
    waker: Option<Arc<WakerSlot>>,
) {
    while let Some(change) = changes.recv().await {
        match change {
            Change::State(snapshot) => {
                if let Some(waker) = &waker {
                    waker.register();
                }
                send::<StateChanged>(&client, &snapshot).await
            }
            Change::Wake {
                session_id,
                request,
            } => {
                if request.pending() {
                    if waker.is_some() {
                        let params = WakeRequested {
                            session_id,
                            revision: request.revision,
                            kind: request.kind.as_str().to_string(),
                            round: request.round,
                            run: request.run,
                        };
                        send::<WakeRequestedNotification>(&client, &params).await
                    }
                } else {
                    let by = request.delivered_by();
                    let revision = request.revision;
                    let outlook = crate::engine::WakeOutlook::settled(request);
                    let params = WakeChanged {
                        session_id,
                        revision,
                        state: outlook.state().to_string(),
                        by,
                        message: outlook.said(),
                    };
                    send::<WakeChangedNotification>(&client, &params).await
                }
            }
            Change::Turn {
                session_id,
                state,
                detail,
            } => {
                let params = TurnStateResult {
                    session_id,
                    state,
                    label: state.label().to_string(),
                    detail,
                };
                send::<TurnStateChanged>(&client, &params).await
            }
            Change::Progress(change) => {
                let params = ProgressChanged {
                    session_id: change.session_id,
                    bubble: change.bubble,
                };
                send::<ProgressChangedNotification>(&client, &params).await
            }
            Change::Agent { session_id, record } => {
                send::<AgentsChanged>(&client, &AgentChanged { session_id, record }).await
            }
            Change::LogAppended {
                session_id,
                run_id,
                appended,
            } => {
                let params = LogAppended {
                    session_id,
                    run: run_id,
                    lines: appended.lines,
                    cursor: appended.cursor,
                };
                send::<LogAppendedNotification>(&client, &params).await
            }
        }
    }
}

async fn send<M: Method>(client: &Client, params: &impl Serialize) {
    match serde_json::to_value(params) {
        Ok(value) => client.send_notification::<Wire<M>>(value).await,
        Err(error) => tracing::error!("{} could not be encoded: {error}", M::METHOD),
    }
}

/// The service with every method of protocol v1, and a flag set by `shutdown`.
pub fn build() -> (LspService<Backend>, ClientSocket, Arc<AtomicBool>) {
    let shutdown_seen = Arc::new(AtomicBool::new(false));
    let flag = shutdown_seen.clone();
    let builder = LspService::build(move |client| Backend {
        client,
        owner: OnceLock::new(),
        watcher: OnceLock::new(),
        shutdown_seen: flag,
    });
    // Each method once, by its type: the name comes from its `METHOD`.
    macro_rules! register {
        ($builder:ident; requests: $($request:ty),*; notifications: $($note:ty),*) => {{
            $(let $builder = $builder.custom_method(<$request>::METHOD, Backend::request::<$request>);)*
            $(let $builder = $builder.custom_method(<$note>::METHOD, Backend::notification::<$note>);)*
            $builder
        }};
    }
    let builder = register!(builder;
        requests: Start, HandOff, Proceed, Done, Abort, Status, Context, Stop, Observe,
            RecordHypotheses, ProbeSnippet, Probes, RemoveLogpoints, Logs, LogSummaryRequest,
            Attach, Mark, TurnStateRequest, ProgressState, ProgressViewRequest, AgentsList, Sessions,
            ClaimWake;
        notifications: TurnEventNotification, ProgressTodos, ProgressGoal, ProgressActivity,
            AgentsEvent);
    let builder = builder
        .custom_method(ToolsCall::METHOD, Backend::tools_call)
        .custom_method(ToolsList::METHOD, Backend::tools_list);
    let builder = if test_hooks() {
        builder
            .custom_method(TEST_PANIC_METHOD, Backend::test_panic)
            .custom_method(TEST_CLOCK_METHOD, Backend::test_clock)
    } else {
        builder
    };
    let (service, socket) = builder.finish();
    (service, socket, shutdown_seen)
}
