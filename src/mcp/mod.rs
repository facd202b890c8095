//! The `mcp` face (DESIGN section 9): MCP over stdio for agents, on the
//! official Rust SDK (`rmcp`). Tools for the agent's side of a debug session,
//! prompts (slash commands) for the user's side, and the blackboard as a
//! resource. Each tool answers with the text the core writes for the model
//! and the state beside it; an illegal command is a tool error the model can
//! act on, never a protocol error.

mod bounded;
mod form;

use crate::core::harness::{ToolNaming, PERSON_COMMANDS};
use crate::core::harness_memory::PersonCommandKind;
use crate::core::host::{Host, HOST_ENV};
use crate::core::model::Stage;
use crate::core::text::{self, FormDismissal};
use crate::engine::owner::Owner;
use crate::engine::tools::{self, ToolAnswer};
use crate::engine::{Engine, EngineConfig, EngineError, FormAnswer, StateDirError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ContentBlock,
    ElicitRequest, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, RequestId, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, Role, ServerCapabilities, ServerConfig, ServerRequest,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{
    Peer, PeerRequestOptions, RequestContext, SubscriptionContext, SubscriptionSink,
};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The blackboard's resource address.
pub const BLACKBOARD_URI: &str = "debug-sidecar://blackboard";

/// How often an open hand-off form looks whether its round moved on.
const FORM_WATCH: std::time::Duration = std::time::Duration::from_millis(200);

#[derive(Clone)]
pub struct DebugMcp {
    owner: Owner,
    /// The client that subscribed to the blackboard (`resources/subscribe`,
    /// before 2026-07-28), told when it changes.
    subscriber: Arc<Mutex<Option<Peer<RoleServer>>>>,
    /// The open `subscriptions/listen` streams (2026-07-28) that take the
    /// blackboard's updates, by their request id.
    listeners: Arc<Mutex<Vec<(RequestId, SubscriptionSink)>>>,
    /// Hand-off forms handed out in multi-round-trip results.
    forms: form::PendingForms,
}

impl DebugMcp {
    /// The server for the workspace at `root` (its state directory as usual).
    pub fn new(root: PathBuf) -> Result<Self, StateDirError> {
        let config = EngineConfig::for_agent(root)?;
        let store = crate::workspace::committed::open_store(&config.root, &config.state_dir);
        let (changes, _) = tokio::sync::mpsc::unbounded_channel();
        let mut engine = Engine::new(config, store);
        if let Some(host) = named_host() {
            engine.set_host(host);
        }
        Ok(DebugMcp {
            owner: Owner::spawn(engine, changes),
            subscriber: Arc::new(Mutex::new(None)),
            listeners: Arc::new(Mutex::new(Vec::new())),
            forms: form::PendingForms::default(),
        })
    }

    /// Tell a subscribed client the blackboard changed.
    async fn blackboard_changed(&self) {
        let peer = self.subscriber.lock().ok().and_then(|peer| peer.clone());
        if let Some(peer) = peer {
            let update = ResourceUpdatedNotificationParam::new(BLACKBOARD_URI);
            if let Err(error) = peer.notify_resource_updated(update).await {
                tracing::warn!("could not announce the blackboard change: {error}");
            }
        }
        let sinks: Vec<SubscriptionSink> = self
            .listeners
            .lock()
            .map(|l| l.iter().map(|(_, sink)| sink.clone()).collect())
            .unwrap_or_default();
        for sink in sinks {
            if let Err(error) = sink.notify_resource_updated(BLACKBOARD_URI).await {
                tracing::debug!("a listener took no blackboard update: {error}");
            }
        }
    }

    fn run<T>(
        &self,
        job: impl FnOnce(&mut Engine, u64) -> Result<T, EngineError>,
    ) -> Result<T, String> {
        match self.owner.ask(job) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(error.to_string()),
            Err(failed) => Err(failed.to_string()),
        }
    }
}

/// The catalogue's tools as rmcp lists them.
fn tools() -> Vec<Tool> {
    tools::TOOLS
        .iter()
        .map(|tool| {
            let hints = tool.hints;
            Tool::new(tool.name, tool.description, Arc::new(tool.input_schema()))
                .with_title(tool.title)
                .annotate(
                    ToolAnnotations::with_title(tool.title)
                        .read_only(hints.read_only)
                        .destructive(hints.destructive)
                        .idempotent(hints.idempotent)
                        .open_world(false),
                )
        })
        .collect()
}

/// The names of the tools this face offers.
pub fn tool_names() -> Vec<String> {
    tools::names().into_iter().map(str::to_string).collect()
}

/// A tool's answer as MCP carries it: the text alone (held to the cap by
/// the catalogue). Claude Code and Codex give the model only
/// `structuredContent` when a result has it, so the text (what to do next,
/// the insertion instructions, the fence saying log lines are data) would
/// never reach the model beside it.
fn result_of(answer: ToolAnswer) -> CallToolResult {
    let content = vec![ContentBlock::text(answer.text)];
    if answer.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl DebugMcp {
    /// A person's command; the text the agent's turn goes on from.
    fn person(&self, kind: PersonCommandKind, words: Option<String>) -> Result<String, String> {
        tools::person(&self.owner, None, kind, words)
    }

    /// `hand_off_to_user`: the hand-off as one job; then, for a client that
    /// can show a form, the person's answer asked for with no lock held and
    /// applied as a job of its own (see `form`).
    async fn hand_off(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        // The answer to a form handed out in a multi-round-trip result.
        if let Some(state) = request.request_state.as_deref() {
            let answer = form::read_value(
                request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get(form::FORM_KEY)),
            );
            let result = match self.forms.take(state) {
                Some(pending) => self.apply_form(pending, answer),
                None => Err(text::FORM_UNKNOWN.to_string()),
            };
            return self.finish(ToolAnswer::of(result)).await;
        }
        let handed = tools::hand_off(&self.owner, None, request.arguments);
        let (snapshot, said) = match handed {
            Ok(handed) => handed,
            Err(message) => return self.finish(ToolAnswer::of(Err(message))).await,
        };
        let way = form::form_way(context);
        if snapshot.stage != Some(Stage::UserTurn) || way == form::FormWay::None {
            return self.finish(ToolAnswer::of(Ok(said))).await;
        }
        let session = snapshot.session_id.clone();
        let asked = self
            .run(move |engine, _| engine.hand_off_form(&session))
            .ok()
            .flatten()
            .and_then(|(round, form)| Some((round, form::request(form)?)));
        let Some((round, params)) = asked else {
            return self.finish(ToolAnswer::of(Ok(said))).await;
        };
        let pending = form::Pending {
            session: snapshot.session_id,
            round,
        };
        // Subscribers see the hand-off while the person answers.
        self.blackboard_changed().await;
        match way {
            form::FormWay::InputRequired => {
                let token = self.forms.add(pending);
                CallToolResponse::InputRequired(form::input_required(params, token))
            }
            _ => {
                let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
                let options = PeerRequestOptions::no_options();
                let sent = context
                    .peer
                    .send_cancellable_request(request, options)
                    .await;
                let mut handle = match sent {
                    Ok(handle) => handle,
                    Err(error) => {
                        tracing::warn!("the hand-off form could not be shown: {error}");
                        let unanswered = FormAnswer::Dismissed(FormDismissal::Unanswered);
                        let result = self.apply_form(pending, unanswered);
                        return self.finish(ToolAnswer::of(result)).await;
                    }
                };
                let withdraws = self.run(|engine, _| Ok(engine.host().withdraws_forms()));
                let answered = tokio::select! {
                    answered = &mut handle.rx => answered,
                    // Proceed or Mark fixed pressed elsewhere while the form
                    // was open: the form is withdrawn and this turn goes on.
                    // (Where the host would keep it, the person closes it and
                    // the answer's turn goes on the same way.)
                    overtaken = self.overtaken(&pending), if withdraws == Ok(true) => {
                        let _ = handle.cancel(Some(text::FORM_WITHDRAWN.to_string())).await;
                        return self.finish(ToolAnswer::of(Ok(overtaken))).await;
                    }
                    // The call was cancelled: nothing more is applied.
                    _ = context.ct.cancelled() => {
                        return CallToolResponse::Complete(result_of(ToolAnswer::of(Ok(said))))
                    }
                };
                let answer = match answered {
                    Ok(Ok(ClientResult::ElicitResult(result))) => form::read(&result),
                    Ok(Ok(_)) => FormAnswer::Dismissed(FormDismissal::Unanswered),
                    Ok(Err(error)) => {
                        tracing::warn!("the hand-off form got no answer: {error}");
                        FormAnswer::Dismissed(FormDismissal::Unanswered)
                    }
                    Err(_) => FormAnswer::Dismissed(FormDismissal::Unanswered),
                };
                let result = self.apply_form(pending, answer);
                self.finish(ToolAnswer::of(result)).await
            }
        }
    }

    /// Resolves once the round of an open form moved on elsewhere, with the
    /// text the hand-off call then returns.
    async fn overtaken(&self, pending: &form::Pending) -> String {
        loop {
            tokio::time::sleep(FORM_WATCH).await;
            let (session, round) = (pending.session.clone(), pending.round);
            let seen = self.run(move |engine, now| engine.hand_off_overtaken(&session, round, now));
            if let Ok(Some(text)) = seen {
                return text;
            }
        }
    }

    /// The person's answer to a form, applied as their command.
    fn apply_form(&self, pending: form::Pending, answer: FormAnswer) -> Result<String, String> {
        self.run(move |engine, now| {
            engine.answer_hand_off(&pending.session, pending.round, answer, now)
        })
    }

    /// A tool's answer as the response; subscribers told of a change.
    async fn finish(&self, answer: ToolAnswer) -> CallToolResponse {
        if !answer.is_error {
            self.blackboard_changed().await;
        }
        CallToolResponse::Complete(result_of(answer))
    }

    fn prompt(&self, name: &str, arguments: Option<Map<String, Value>>) -> Result<String, String> {
        let problem = arguments
            .as_ref()
            .and_then(|a| a.get("problem"))
            .and_then(Value::as_str)
            .map(str::to_string);
        match name {
            "debug" => {
                let problem = problem.ok_or("Say what is wrong: `/debug <the problem>`.")?;
                self.person(PersonCommandKind::Start, Some(problem))
            }
            "debug-proceed" => self.person(PersonCommandKind::Proceed, None),
            "debug-done" => self.person(PersonCommandKind::Done, None),
            "debug-abort" => self.person(PersonCommandKind::Abort, None),
            other => Err(format!("Unknown prompt `{other}`.")),
        }
    }

    /// Texts name our tools as this client calls them. From the request's
    /// own metadata (MCP 2026-07-28 has no session to remember a client
    /// by), else the initialize handshake's.
    fn learn_client(&self, context: &RequestContext<RoleServer>) {
        let Some(client) = context.client_info() else {
            return;
        };
        let name = client.name;
        let naming = ToolNaming::of_client(&name);
        let host = named_host().unwrap_or_else(|| Host::of_mcp_client(&name));
        self.owner.tell(move |engine, _| {
            engine.set_tool_naming(naming);
            engine.set_host(host);
        });
    }
}

/// The host a launcher named in `DEBUG_SIDECAR_HOST`, which wins over the
/// client's name (the ACP proxy: Claude Code's SDK connects, the person is
/// in an editor).
fn named_host() -> Option<Host> {
    std::env::var(HOST_ENV)
        .ok()
        .filter(|h| !h.trim().is_empty())
        .map(|h| Host::of_client(&h))
}

/// The person's commands as MCP prompts. Only a required argument is
/// declared: an optional note reaches us whole through the prompt hook,
/// while a harness hands MCP prompt arguments over split at whitespace.
fn prompts() -> Vec<Prompt> {
    PERSON_COMMANDS
        .iter()
        .map(|command| {
            let arguments = command.argument.filter(|a| a.required).map(|a| {
                let mut argument = PromptArgument::new(a.name);
                argument.description = Some(a.description.into());
                argument.required = Some(true);
                vec![argument]
            });
            Prompt::new(command.name, Some(command.description), arguments)
                .with_title(command.title)
        })
        .collect()
}

impl ServerHandler for DebugMcp {
    /// The revisions this face is tested at: 2026-07-28 (no `initialize`,
    /// `subscriptions/listen`, multi-round-trip forms) and the handshake
    /// revisions before it. A newer SDK's revisions are not taken on
    /// unseen.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            "debug-sidecar",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Debug Mode: evidence first. The user starts it with the debug prompt (or asks you, \
             and you call start_debug_session); hand_off_to_user closes each round; probes come \
             from probe_snippet and must be removed when the user marks the bug fixed.",
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.learn_client(&context);
        if request.name == text::HAND_OFF_TOOL {
            return Ok(self.hand_off(request, &context).await);
        }
        let answer = match tools::begin(&self.owner, None, &request.name, request.arguments) {
            tools::Begun::Answered(answer) => answer,
            // The program runs on a blocking thread, so this face's one
            // thread goes on reading and answering other calls meanwhile.
            tools::Begun::Running(run) => tokio::task::spawn_blocking(move || run.answer())
                .await
                .unwrap_or_else(|failed| {
                    ToolAnswer::of(Err(format!("the agent's run failed: {failed}")))
                }),
        };
        Ok(self.finish(answer).await)
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.learn_client(&context);
        let text = self
            .prompt(&request.name, request.arguments)
            .map_err(|message| McpError::invalid_params(message, None))?;
        let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
        self.blackboard_changed().await;
        Ok(GetPromptResponse::Complete(result))
    }

    /// `subscriptions/listen` (2026-07-28): the blackboard's updates, and
    /// nothing else, for a client that asks for them.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .resource_subscription(BLACKBOARD_URI)
                .build(),
        )
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        let id = subscription.request_context().id.clone();
        let takes_board = subscription
            .accepted()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|uri| uri == BLACKBOARD_URI));
        if takes_board {
            if let Ok(mut listeners) = self.listeners.lock() {
                listeners.push((id.clone(), subscription.sink().clone()));
            }
        }
        subscription.cancelled().await;
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.retain(|(listener, _)| *listener != id);
        }
        Ok(())
    }

    // The subscription model of protocol versions before 2026-07-28, which
    // most clients in use speak.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != BLACKBOARD_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        if let Ok(mut subscriber) = self.subscriber.lock() {
            *subscriber = Some(context.peer);
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut subscriber) = self.subscriber.lock() {
            *subscriber = None;
        }
        Ok(())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let blackboard = Resource::new(BLACKBOARD_URI, "blackboard")
            .with_title("Debug Mode blackboard")
            .with_description(
                "The debug session's state and what to do next, as the model is told each turn",
            );
        Ok(ListResourcesResult::with_all_items(vec![blackboard]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != BLACKBOARD_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let board = self
            .run(|engine, now| {
                let session = engine.resolve(None)?;
                engine.polled_board(&session, now)
            })
            .map_err(|message| McpError::internal_error(message, None))?;
        let text = board.unwrap_or_else(|| text::NO_SESSION.into());
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text(text, BLACKBOARD_URI)],
        )))
    }
}

/// `debug-sidecar mcp`: serve on this process's stdin and stdout.
pub fn serve_stdio() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let root = crate::engine::workspace_root(&std::env::current_dir()?);
        let (transport, writer) = bounded::stdio();
        let server = rmcp::serve_server(DebugMcp::new(root)?, transport).await?;
        server.waiting().await?;
        // Every answer, rmcp's and the refusals, is out before the exit
        // (the refusals end with the input, which may outlive rmcp).
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
        Ok(())
    })
}
