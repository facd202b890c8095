//! The proxy between an ACP editor and an ACP agent. Every message passes
//! through untouched but for what Debug Mode needs: request ids towards the
//! agent are the proxy's own (so it can send prompts of its own), our MCP
//! server joins each session, the board rides in prompts, our slash
//! commands join the agent's and are answered here, turn states come from
//! the updates, and a turn that ends early is sent back before the editor
//! hears of its end.

use super::message::{self, chunk, result_response};
use super::sidecar::{Sidecar, Stopped};
use crate::core::harness::{person_command, HarnessEventKind, ToolNaming};
use crate::core::machine::TurnSource;
use crate::core::text;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// A line for one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    Agent(Vec<u8>),
    Editor(Vec<u8>),
}

impl Out {
    fn agent(value: &Value) -> Out {
        Out::Agent(value.to_string().into_bytes())
    }
    fn editor(value: &Value) -> Out {
        Out::Editor(value.to_string().into_bytes())
    }
}

/// The last message the agent wrote in a turn is kept up to this many
/// bytes (its tail): what the stop decision reads.
const LAST_MESSAGE_MAX: usize = 16 * 1024;

/// A request the proxy sent the agent, and what its answer is for.
enum Pending {
    /// The editor's request, forwarded.
    Call {
        editor_id: Value,
        method: String,
        params: Value,
    },
    /// A prompt turn: the editor's own prompt (it waits on `editor_id`), a
    /// follow-up the proxy sent after it, or a turn the proxy started to
    /// wake the agent (no editor request: `None`).
    Prompt {
        editor_id: Option<Value>,
        session: String,
        followups: u32,
    },
}

/// What a prompt turn has shown so far.
#[derive(Default)]
struct Turn {
    last: Option<HarnessEventKind>,
    /// The agent's message since its last tool call.
    message: String,
    /// Tool calls by id: whether each edits files.
    tools: HashMap<String, bool>,
}

struct Session {
    cwd: PathBuf,
    /// The agent's own commands, as it last listed them.
    agent_commands: Vec<Value>,
    /// Set while a prompt turn runs.
    turn: Option<Turn>,
    /// The editor cancelled the turn in flight: no follow-up after it.
    cancelled: bool,
}

impl Session {
    fn new(cwd: PathBuf) -> Self {
        Session {
            cwd,
            agent_commands: Vec::new(),
            turn: None,
            cancelled: false,
        }
    }
}

pub struct Proxy {
    next_id: u64,
    /// Follow-ups the proxy may send for one prompt of the editor's.
    nudges: u32,
    /// This binary, for the MCP server entry.
    program: String,
    /// Where sessions work when the editor did not say.
    default_cwd: PathBuf,
    pending: HashMap<u64, Pending>,
    /// The proxy id that carries an editor's request now, by the editor's
    /// id (as JSON text): a follow-up takes over the editor's prompt.
    carrying: HashMap<String, u64>,
    sessions: HashMap<String, Session>,
    sidecar: Sidecar,
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Proxy {
    pub fn new(nudges: u32, program: String, default_cwd: PathBuf) -> Self {
        Proxy {
            next_id: 1,
            nudges,
            program,
            default_cwd,
            pending: HashMap::new(),
            carrying: HashMap::new(),
            sessions: HashMap::new(),
            sidecar: Sidecar::default(),
        }
    }

    /// A line from the editor.
    pub fn editor_line(&mut self, line: &[u8]) -> Vec<Out> {
        let Some(Value::Object(mut object)) = serde_json::from_slice::<Value>(line).ok() else {
            return vec![Out::Agent(line.to_vec())];
        };
        let method = object
            .get("method")
            .and_then(Value::as_str)
            .map(String::from);
        let id = object.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = object.remove("params").unwrap_or(Value::Null);
                self.editor_request(object, method, id, params)
            }
            (Some(method), None) => {
                let mut message = Value::Object(object);
                match method.as_str() {
                    "session/cancel" => {
                        let session = message["params"]["sessionId"].as_str().map(String::from);
                        if let Some(session) = session.and_then(|s| self.sessions.get_mut(&s)) {
                            session.cancelled = true;
                        }
                    }
                    "$/cancel_request" => {
                        let carried = message["params"]
                            .get("requestId")
                            .and_then(|id| self.carrying.get(&id_key(id)));
                        if let Some(carried) = carried {
                            message["params"]["requestId"] = json!(carried);
                        }
                    }
                    _ => {}
                }
                vec![Out::agent(&message)]
            }
            // A response to one of the agent's requests: its ids are its own.
            (None, _) => vec![Out::Agent(line.to_vec())],
        }
    }

    /// A line from the agent.
    pub fn agent_line(&mut self, line: &[u8]) -> Vec<Out> {
        let Some(Value::Object(object)) = serde_json::from_slice::<Value>(line).ok() else {
            return vec![Out::Editor(line.to_vec())];
        };
        let mut message = Value::Object(object);
        if message.get("method").is_some() {
            if message["method"] == "session/update" && self.update(&mut message) {
                return vec![Out::editor(&message)];
            }
            return vec![Out::Editor(line.to_vec())];
        }
        let pending = message
            .get("id")
            .and_then(Value::as_u64)
            .and_then(|id| self.pending.remove(&id));
        match pending {
            Some(Pending::Call {
                editor_id,
                method,
                params,
            }) => {
                self.carrying.remove(&id_key(&editor_id));
                message["id"] = editor_id;
                let mut out = Vec::new();
                let session = self.answered(&method, &params, &message);
                out.push(Out::editor(&message));
                if let Some(session) = session {
                    out.push(self.commands_for(&session));
                }
                out
            }
            Some(Pending::Prompt {
                editor_id,
                session,
                followups,
            }) => self.prompt_ended(message, editor_id, session, followups),
            None => vec![Out::Editor(line.to_vec())],
        }
    }

    /// The agent is gone: every request the editor still waits on fails.
    pub fn agent_exited(&mut self) -> Vec<Out> {
        self.pending
            .drain()
            .filter_map(|(_, pending)| {
                let id = match pending {
                    Pending::Call { editor_id, .. } => Some(editor_id),
                    Pending::Prompt { editor_id, .. } => editor_id,
                }?;
                Some(Out::editor(&message::error_response(
                    id,
                    "the agent exited",
                )))
            })
            .collect()
    }

    fn send(&mut self, mut request: serde_json::Map<String, Value>, pending: Pending) -> Out {
        let id = self.next_id;
        self.next_id += 1;
        let editor_id = match &pending {
            Pending::Call { editor_id, .. } => Some(editor_id),
            Pending::Prompt { editor_id, .. } => editor_id.as_ref(),
        };
        if let Some(editor_id) = editor_id {
            self.carrying.insert(id_key(editor_id), id);
        }
        request.insert("id".into(), json!(id));
        self.pending.insert(id, pending);
        Out::agent(&Value::Object(request))
    }

    fn editor_request(
        &mut self,
        mut request: serde_json::Map<String, Value>,
        method: String,
        id: Value,
        mut params: Value,
    ) -> Vec<Out> {
        match method.as_str() {
            "session/prompt" if params["sessionId"].is_string() => {
                return self.prompt(request, id, params);
            }
            "session/new" | "session/load" | "session/resume" | "session/fork" => {
                message::add_mcp_server(&mut params, &self.program);
                if method == "session/load" {
                    // Its history replays before the answer: no turn runs.
                    if let Some(session) = params["sessionId"].as_str() {
                        self.session(session);
                    }
                }
            }
            _ => {}
        }
        if !params.is_null() {
            request.insert("params".into(), params.clone());
        }
        let pending = Pending::Call {
            editor_id: id,
            method,
            params,
        };
        vec![self.send(request, pending)]
    }

    /// The agent answered a forwarded request: learn what it says of its
    /// sessions. The session whose command list the editor must be given.
    fn answered(&mut self, method: &str, params: &Value, response: &Value) -> Option<String> {
        let result = response.get("result")?;
        let cwd = params["cwd"].as_str().map(PathBuf::from);
        match method {
            "initialize" => {
                // An npm package's name, scope and all: `@zed-industries/claude-agent-acp`.
                let agent = result["agentInfo"]["name"].as_str().unwrap_or_default();
                let agent = agent.rsplit('/').next().unwrap_or(agent);
                self.sidecar.set_naming(ToolNaming::of_client(agent));
                None
            }
            "session/new" | "session/fork" => {
                let session = result["sessionId"].as_str()?.to_string();
                let cwd = cwd.unwrap_or_else(|| self.default_cwd.clone());
                self.sessions.insert(session.clone(), Session::new(cwd));
                Some(session)
            }
            "session/load" | "session/resume" => {
                let session = params["sessionId"].as_str()?.to_string();
                let state = self.session(&session);
                if let Some(cwd) = cwd {
                    state.cwd = cwd;
                }
                let cwd = state.cwd.clone();
                // Its history holds copies of old boards: the next prompt
                // carries the whole current one.
                self.sidecar.forget(&cwd, &session);
                Some(session)
            }
            _ => None,
        }
    }

    fn session(&mut self, id: &str) -> &mut Session {
        let cwd = self.default_cwd.clone();
        self.sessions
            .entry(id.to_string())
            .or_insert_with(|| Session::new(cwd))
    }

    fn commands_for(&mut self, session: &str) -> Out {
        let agent = self.session(session).agent_commands.clone();
        Out::editor(&message::commands_update(
            session,
            message::merged_commands(&agent),
        ))
    }

    /// The editor's `session/prompt`: one of our commands is answered here
    /// (and its kickoff sent as the prompt); any other prompt is forwarded
    /// with the board when the conversation does not hold its current copy.
    fn prompt(
        &mut self,
        mut request: serde_json::Map<String, Value>,
        id: Value,
        mut params: Value,
    ) -> Vec<Out> {
        let session_id = params["sessionId"].as_str().unwrap_or_default().to_string();
        let session = self.session(&session_id);
        session.cancelled = false;
        let cwd = session.cwd.clone();
        let blocks: Vec<Value> = params["prompt"].as_array().cloned().unwrap_or_default();
        let command = message::first_text(&blocks).and_then(person_command);
        let mut out = Vec::new();
        self.sidecar.turn(
            &cwd,
            HarnessEventKind::TurnStart,
            None,
            Some(TurnSource::User),
        );
        let prompt = match command {
            Some((kind, words)) => match self.sidecar.person(&cwd, kind, words) {
                Ok(answer) => {
                    out.push(Out::editor(&chunk(
                        &session_id,
                        text::acp_said(&answer.said),
                    )));
                    // The kickoff (an abort's notice too) is what the agent's
                    // turn starts from, in place of the typed command.
                    answer.kickoff.map(|kickoff| {
                        let board = self.sidecar.board(&cwd, &session_id);
                        vec![message::text_block(text::acp_prompt(
                            &kickoff,
                            board.as_deref(),
                        ))]
                    })
                }
                Err(error) => {
                    let said = text::acp_said(&error);
                    out.push(Out::editor(&chunk(&session_id, said)));
                    None
                }
            },
            None => {
                let mut blocks = blocks;
                if let Some(board) = self.sidecar.board(&cwd, &session_id) {
                    message::with_board(&mut blocks, text::acp_board(&board));
                }
                Some(blocks)
            }
        };
        let Some(prompt) = prompt else {
            // Nothing for the agent to do: the turn is over here.
            self.sidecar
                .turn(&cwd, HarnessEventKind::TurnEnd, None, None);
            out.push(Out::editor(&result_response(
                id,
                json!({ "stopReason": "end_turn" }),
            )));
            return out;
        };
        params["prompt"] = Value::Array(prompt);
        request.insert("params".into(), params);
        self.session(&session_id).turn = Some(Turn::default());
        let pending = Pending::Prompt {
            editor_id: Some(id),
            session: session_id,
            followups: 0,
        };
        out.push(self.send(request, pending));
        out
    }

    /// A `session/update`: turn states and progress while a turn runs, and
    /// our commands merged into the agent's list. Whether it changed the
    /// message (else the agent's own bytes go on).
    fn update(&mut self, message: &mut Value) -> bool {
        let Some(session_id) = message["params"]["sessionId"].as_str().map(String::from) else {
            return false;
        };
        let update = &mut message["params"]["update"];
        let kind = update["sessionUpdate"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.session(&session_id);
        let Some(session) = self.sessions.get_mut(&session_id) else {
            return false;
        };
        if kind == "available_commands_update" {
            session.agent_commands = message::agent_commands(update);
            update["availableCommands"] =
                Value::Array(message::merged_commands(&session.agent_commands));
            return true;
        }
        let cwd = session.cwd.clone();
        let Some(turn) = session.turn.as_mut() else {
            // A history replay (`session/load`) or an update between turns.
            return false;
        };
        let event = match kind.as_str() {
            "agent_thought_chunk" => Some((HarnessEventKind::Reasoning, None)),
            "agent_message_chunk" => {
                if let Some(text) = update["content"]["text"].as_str() {
                    turn.message.push_str(text);
                    if turn.message.len() > LAST_MESSAGE_MAX {
                        let cut = turn.message.len() - LAST_MESSAGE_MAX;
                        let cut = (cut..turn.message.len())
                            .find(|&i| turn.message.is_char_boundary(i))
                            .unwrap_or(turn.message.len());
                        turn.message.drain(..cut);
                    }
                }
                Some((HarnessEventKind::Content, None))
            }
            "tool_call" => {
                turn.message.clear();
                let call = update["toolCallId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                turn.tools
                    .insert(call, message::edits(update["kind"].as_str()));
                let title = update["title"]
                    .as_str()
                    .map(|t| crate::core::budget::cut(t, 80));
                Some((HarnessEventKind::ToolCall, title))
            }
            "tool_call_update" => {
                let call = update["toolCallId"].as_str().unwrap_or_default();
                let edits = match update["kind"].as_str() {
                    Some(kind) => message::edits(Some(kind)),
                    None => turn.tools.get(call).copied().unwrap_or(false),
                };
                let finished = matches!(update["status"].as_str(), Some("completed" | "failed"));
                if edits && finished {
                    let files = message::locations(update);
                    self.sidecar.edited(&cwd, &files);
                }
                None
            }
            "plan" => {
                let todos = message::plan_todos(update);
                self.sidecar.plan(&cwd, &todos);
                None
            }
            _ => None,
        };
        let Some((event, tool)) = event else {
            return false;
        };
        // One report per change of state; every tool call is its own.
        if turn.last == Some(event) && event != HarnessEventKind::ToolCall {
            return false;
        }
        turn.last = Some(event);
        self.sidecar.turn(&cwd, event, tool, None);
        false
    }

    /// The agent answered a prompt turn. After `end_turn` the stop decision
    /// may send it back (within `nudges` follow-ups); the editor hears of
    /// the end only when the agent may really stop.
    fn prompt_ended(
        &mut self,
        mut response: Value,
        editor_id: Option<Value>,
        session_id: String,
        followups: u32,
    ) -> Vec<Out> {
        let mut out = Vec::new();
        let session = self.session(&session_id);
        let cwd = session.cwd.clone();
        let cancelled = session.cancelled;
        let turn = session.turn.take().unwrap_or_default();
        let stop = response["result"]["stopReason"].as_str().map(String::from);
        match stop.as_deref() {
            Some("end_turn") if !cancelled && followups < self.nudges => {
                let last = Some(turn.message.as_str()).filter(|m| !m.trim().is_empty());
                match self.sidecar.stopped(&cwd, last) {
                    Stopped::Nudge(reason) => {
                        self.sidecar.nudged(&cwd, &session_id, &reason);
                        let said = text::acp_said(text::NUDGE_NOTICE);
                        out.push(Out::editor(&chunk(&session_id, said)));
                        let board = self.sidecar.board(&cwd, &session_id);
                        let prompt = text::acp_prompt(&reason, board.as_deref());
                        self.sidecar
                            .turn(&cwd, HarnessEventKind::TurnStart, None, None);
                        self.session(&session_id).turn = Some(Turn::default());
                        let request = prompt_request(&session_id, prompt);
                        let pending = Pending::Prompt {
                            editor_id,
                            session: session_id,
                            followups: followups + 1,
                        };
                        out.push(self.send(request, pending));
                        return out;
                    }
                    Stopped::Allow(notice) => {
                        if let Some(notice) = notice {
                            out.push(Out::editor(&chunk(&session_id, text::acp_said(&notice))));
                        }
                    }
                }
            }
            Some("cancelled") => {
                self.sidecar
                    .turn(&cwd, HarnessEventKind::Cancel, None, None);
            }
            None => {
                self.sidecar.turn(&cwd, HarnessEventKind::Error, None, None);
            }
            // Over the proxy's budget, a refusal, a `max_*` stop: the turn
            // ends as the agent said, never sent back.
            Some(_) => {
                self.sidecar
                    .turn(&cwd, HarnessEventKind::TurnEnd, None, None);
            }
        }
        // A turn the proxy started itself is nobody's request to answer.
        if let Some(editor_id) = editor_id {
            self.carrying.remove(&id_key(&editor_id));
            response["id"] = editor_id;
            out.push(Out::editor(&response));
        }
        out
    }

    /// Looked at a few times a second: a wake request due in the workspace
    /// of an idle session starts the agent's turn from here, as a prompt of
    /// the proxy's own, and the editor is shown why.
    pub fn tick(&mut self) -> Vec<Out> {
        let idle: Vec<(String, PathBuf)> = self
            .sessions
            .iter()
            .filter(|(_, session)| session.turn.is_none())
            .map(|(id, session)| (id.clone(), session.cwd.clone()))
            .collect();
        let mut out = Vec::new();
        for (session_id, cwd) in idle {
            let Some((kickoff, request)) = self.sidecar.take_wake(&cwd) else {
                continue;
            };
            let said = text::wake_started(request.kind, &request.run);
            out.push(Out::editor(&chunk(&session_id, text::acp_said(&said))));
            let board = self.sidecar.board(&cwd, &session_id);
            let prompt = text::acp_prompt(&kickoff, board.as_deref());
            self.sidecar.turn(
                &cwd,
                HarnessEventKind::TurnStart,
                None,
                Some(TurnSource::User),
            );
            let session = self.session(&session_id);
            session.turn = Some(Turn::default());
            session.cancelled = false;
            let request = prompt_request(&session_id, prompt);
            let pending = Pending::Prompt {
                editor_id: None,
                session: session_id,
                followups: 0,
            };
            out.push(self.send(request, pending));
        }
        out
    }
}

/// The ids of the editor's requests the proxy answers or carries now (for
/// tests of the bookkeeping).
#[cfg(test)]
impl Proxy {
    fn carried(&self) -> std::collections::HashSet<String> {
        self.carrying.keys().cloned().collect()
    }
}

/// A `session/prompt` of the proxy's own (an id is given when it is sent).
fn prompt_request(session_id: &str, prompt: String) -> serde_json::Map<String, Value> {
    let mut params = serde_json::Map::new();
    params.insert("sessionId".into(), Value::from(session_id));
    params.insert("prompt".into(), json!([message::text_block(prompt)]));
    let mut request = serde_json::Map::new();
    request.insert("jsonrpc".into(), Value::from("2.0"));
    request.insert("method".into(), Value::from("session/prompt"));
    request.insert("params".into(), Value::Object(params));
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(out: &Out) -> (char, Value) {
        match out {
            Out::Agent(line) => ('a', serde_json::from_slice(line).unwrap()),
            Out::Editor(line) => ('e', serde_json::from_slice(line).unwrap()),
        }
    }

    /// A proxy whose sessions work in a directory of its own, removed
    /// with it: tests leave nothing in the temporary directory.
    struct Tested {
        proxy: Proxy,
        dir: PathBuf,
    }

    impl std::ops::Deref for Tested {
        type Target = Proxy;
        fn deref(&self) -> &Proxy {
            &self.proxy
        }
    }

    impl std::ops::DerefMut for Tested {
        fn deref_mut(&mut self) -> &mut Proxy {
            &mut self.proxy
        }
    }

    impl Drop for Tested {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn proxy() -> Tested {
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("acp-proxy-unit-{}-{made}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Tested {
            proxy: Proxy::new(3, "/bin/debug-sidecar".into(), dir.clone()),
            dir,
        }
    }

    #[test]
    fn ids_towards_the_agent_are_the_proxys_and_come_back_as_the_editors() {
        let mut p = proxy();
        let out = p.editor_line(
            br#"{"jsonrpc":"2.0","id":"x-1","method":"initialize","params":{"protocolVersion":1}}"#,
        );
        let (side, sent) = parse(&out[0]);
        assert_eq!(side, 'a');
        assert_eq!(sent["id"], 1);
        assert!(p.carried().contains("\"x-1\""));
        let back = p.agent_line(
            br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"_meta":{"k":1}}}"#,
        );
        let (side, answer) = parse(&back[0]);
        assert_eq!(side, 'e');
        assert_eq!(answer["id"], "x-1");
        assert_eq!(answer["result"]["_meta"]["k"], 1);
        assert!(p.carried().is_empty());
    }

    use proptest::prelude::*;

    /// An editor request: its id (a number or a string, maybe reused after
    /// its answer) and a method the proxy only forwards.
    fn request() -> impl Strategy<Value = (Value, String)> {
        let id = prop_oneof![
            (0u64..6).prop_map(|n| json!(n)),
            "[a-c]{1,2}".prop_map(|s| json!(s)),
        ];
        let method = prop_oneof![
            Just("initialize".to_string()),
            Just("authenticate".to_string()),
            Just("session/set_mode".to_string()),
            "_[a-z]{1,6}/[a-z]{1,6}",
        ];
        (id, method)
    }

    proptest! {
        /// However the agent orders its answers, each request the editor
        /// sent is answered once, under its own id, with its own result.
        #[test]
        fn every_request_is_answered_once_under_its_own_id(
            requests in proptest::collection::vec(request(), 1..12),
            keys in proptest::collection::vec(any::<u32>(), 12),
        ) {
            let mut p = proxy();
            let mut sent = Vec::new();
            for (n, (id, method)) in requests.iter().enumerate() {
                // The editor reuses an id only once its request was answered.
                if sent.iter().any(|(_, editor_id, _): &(Value, Value, usize)| editor_id == id) {
                    continue;
                }
                let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"n": n}});
                let out = p.editor_line(line.to_string().as_bytes());
                let (side, forwarded) = parse(&out[0]);
                prop_assert_eq!(side, 'a');
                prop_assert_eq!(&forwarded["params"]["n"], &json!(n));
                sent.push((forwarded["id"].clone(), id.clone(), n));
            }
            let ids: std::collections::HashSet<String> =
                sent.iter().map(|(agent_id, _, _)| agent_id.to_string()).collect();
            prop_assert_eq!(ids.len(), sent.len(), "the agent saw two requests under one id");
            // The answers in any order: sorted by a random key each.
            let mut pending = sent.clone();
            pending.sort_by_key(|(_, _, n)| keys[*n]);
            for (agent_id, editor_id, n) in pending {
                let answer = json!({"jsonrpc": "2.0", "id": agent_id, "result": {"n": n}});
                let out = p.agent_line(answer.to_string().as_bytes());
                let (side, back) = parse(&out[0]);
                prop_assert_eq!(side, 'e');
                prop_assert_eq!(&back["id"], &editor_id);
                prop_assert_eq!(&back["result"]["n"], &json!(n));
            }
            prop_assert!(p.pending.is_empty());
            prop_assert!(p.carried().is_empty());
        }
    }

    #[test]
    fn what_is_not_json_passes_through() {
        let mut p = proxy();
        assert_eq!(
            p.editor_line(b"not json"),
            vec![Out::Agent(b"not json".to_vec())]
        );
        assert_eq!(p.agent_line(b"[1,2]"), vec![Out::Editor(b"[1,2]".to_vec())]);
    }
}
