//! Protocol v1 (DESIGN section 8): every method as a type with its `METHOD`
//! name, params and result, in one file. The JSON Schemas in
//! `protocol/schema/` are generated from these types and a test fails when
//! they drift. The `serve` face (`src/rpc`) answers them.

use crate::core::agents::{AgentEventKind, AgentRecord, AgentUsage};
use crate::core::context_sync::ContextPlan;
use crate::core::harness::HarnessEventKind;
use crate::core::machine::{ArtifactInput, ObservationInput, TurnSource};
use crate::core::model::{
    AgentHandoffMode, EvidenceRequest, Hypothesis, Placement, Probe, ProbeKind,
};
use crate::core::progress::{ActivityLine, Bubble, Goal, Todo};
use crate::core::snapshot::Snapshot;
use crate::core::turn::TurnState;
use crate::workspace::logread::{LogEntry, LogSummary, Malformed};
use crate::workspace::scan::{ForeignProbe, HalfRemoved};
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PROTOCOL_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// Client to sidecar, answered.
    Request,
    /// Client to sidecar, not answered.
    ClientNotification,
    /// Sidecar to client.
    ServerNotification,
}

/// One method of the protocol.
pub trait Method {
    const METHOD: &'static str;
    const KIND: Kind;
    type Params: JsonSchema;
    type Result: JsonSchema;
}

macro_rules! methods {
    ($($name:ident = $method:literal, $kind:ident, $params:ty => $result:ty;)*) => {
        $(
            pub enum $name {}
            impl Method for $name {
                const METHOD: &'static str = $method;
                const KIND: Kind = Kind::$kind;
                type Params = $params;
                type Result = $result;
            }
        )*

        /// Every method with its kind and the schemas of its params and result.
        pub fn catalogue() -> Vec<MethodSpec> {
            vec![$(MethodSpec {
                method: $name::METHOD,
                kind: $name::KIND,
                params: schemars::schema_for!($params),
                result: schemars::schema_for!($result),
            }),*]
        }
    };
}

pub struct MethodSpec {
    pub method: &'static str,
    pub kind: Kind,
    pub params: Schema,
    pub result: Schema,
}

/// Every method takes an optional `sessionId`; without one the server uses
/// the session from `initialize`, else the most recently active, else "default".
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionParams {
    pub session_id: Option<String>,
}

/// A method that takes no params (an empty object, or none).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartParams {
    pub session_id: Option<String>,
    pub problem: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandOffParams {
    pub session_id: Option<String>,
    /// `reproduce`, `capture` or `question`; `incomplete` is only ever set
    /// by the sidecar and is refused here.
    pub mode: AgentHandoffMode,
    pub steps: Vec<String>,
    pub plan: Option<Vec<EvidenceRequest>>,
    pub hypotheses: Option<Vec<Hypothesis>>,
    pub message: Option<String>,
}

/// A snapshot plus the message that starts the agent's next turn.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KickoffResult {
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The message a harness sends the model to start its turn (after start,
    /// proceed and done); null when there is none.
    pub kickoff: Option<String>,
    /// Whether the agent is woken by itself, for a Proceed or Mark fixed
    /// given away from its chat (an editor); null otherwise.
    pub wake: Option<WakeInfo>,
}

/// Waking the agent after a person's command, as the person is told.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WakeInfo {
    /// `waiting` (a waker takes it once the agent's turn is free),
    /// `nobody` (no process here can start the agent's turn), `delivered`
    /// or `superseded` (the chat went on first).
    pub state: String,
    /// The hosts that can wake the agent now (`claude-code`, `pi`, ...).
    pub wakers: Vec<String>,
    /// The revision the command wrote; `debug/wakeChanged` names it.
    pub revision: u64,
    /// The line to show the person.
    pub message: String,
}

/// `debug/claimWake`: a waker takes the request `debug/wakeRequested`
/// announced.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimWakeParams {
    pub session_id: Option<String>,
    pub revision: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimWakeResult {
    /// Whether this client took it: it starts the agent's turn now, with
    /// `kickoff` as the person's message. Another waker, a turn already
    /// running or a state that moved on leaves it `false`.
    pub granted: bool,
    pub kickoff: Option<String>,
    /// When granted: the line to show the person beside the new turn.
    pub said: Option<String>,
}

/// `debug/wakeRequested`: a person's Proceed or Mark fixed given away from
/// the agent's chat waits for a waker (sent to clients that said `wake`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WakeRequested {
    pub session_id: String,
    pub revision: u64,
    /// `proceed` or `done`.
    pub kind: String,
    pub round: u32,
    /// The run the kickoff reads (empty for Mark fixed).
    pub run: String,
}

/// `debug/wakeChanged`: what became of a wake request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WakeChanged {
    pub session_id: String,
    pub revision: u64,
    /// `delivered` or `superseded`.
    pub state: String,
    /// The host it was delivered in, when it was.
    pub by: Option<String>,
    /// The line to show the person.
    pub message: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordHypothesesParams {
    pub session_id: Option<String>,
    /// New hypotheses and updates of known ones (matched by `id`).
    pub hypotheses: Vec<Hypothesis>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandOffResult {
    pub snapshot: Snapshot,
    /// The text the hand-off tool returns to the model: the new state and what to do next.
    pub tool_result: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProceedParams {
    pub session_id: Option<String>,
    pub note: Option<String>,
    #[serde(default)]
    pub observations: Vec<ObservationInput>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DoneParams {
    pub session_id: Option<String>,
    pub note: Option<String>,
    /// The person says it is fixed whatever the failure rate says: for a
    /// bug whose reproduction failed only some of the time, Mark fixed is
    /// otherwise refused until the attempts since are significantly better.
    pub anyway: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbortResult {
    pub snapshot: Snapshot,
    /// Probes still on disk when the session was aborted.
    pub leftover_probes: Vec<Probe>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextParams {
    pub session_id: Option<String>,
    /// The messages a harness is about to send; when given, the synced list is returned.
    pub messages: Option<Vec<Value>>,
    /// Instead of the whole list: the contents of the context copies it
    /// holds, in order; when given, `plan` says what to do with them.
    pub held: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextResult {
    /// Always `debug-mode-context`.
    pub custom_type: String,
    /// The blackboard; null when no session is active.
    pub content: Option<String>,
    /// The synced list; null when it is unchanged (or none was given).
    pub messages: Option<Vec<Value>>,
    /// For `held`: what to do with those copies so the list holds exactly
    /// one current copy; null when it already does (or `held` was not given).
    pub plan: Option<ContextPlan>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopParams {
    pub session_id: Option<String>,
    pub last_assistant_message: Option<String>,
    /// The harness's own "already blocked once" flag: a hint only, the
    /// sidecar keeps its own budgets.
    pub stop_hook_active: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Block,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StopResult {
    pub decision: Decision,
    /// For `block`: the text sent back to the model.
    pub reason: Option<String>,
    /// For `allow`: what to tell the user, if anything.
    pub notice: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObserveParams {
    pub session_id: Option<String>,
    pub text: String,
    #[serde(default)]
    pub request_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStateResult {
    pub session_id: String,
    pub state: TurnState,
    /// The state's label (`thinking…`); the state machine's alone.
    pub label: String,
    /// The provider's own status text for the current state (`turn/event`'s
    /// `text`): a non-authoritative suffix to show after the label, one line
    /// of at most 60 characters; null when it gave none. It never moves the
    /// state and is cleared when the state changes without one, and at idle.
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnEventParams {
    pub session_id: Option<String>,
    pub kind: HarnessEventKind,
    /// For `toolCall`: the tool's name (edit tools trigger a probe rescan).
    pub tool: Option<String>,
    /// The provider's status text (Fido's `onStatus`) for the state this
    /// event moves to: shown as `detail` beside the label, never instead of
    /// it. Ignored for `message` and the kinds that end a turn.
    pub text: Option<String>,
    /// For `turnStart`: a user-sourced start is the "user message arrived" event.
    pub source: Option<TurnSource>,
    /// For `toolCall`: whether the call edited files, so a probe rescan
    /// follows (or not). Without it the tool's name decides: the known edit
    /// tools and the client's `editTools` from `initialize`.
    pub edits: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProbeSnippetParams {
    pub session_id: Option<String>,
    /// The file the block goes into, relative to the workspace (or absolute inside it).
    pub file: String,
    pub hypothesis_id: Option<String>,
    /// What the probe records, written into every line it logs.
    pub message: Option<String>,
    /// Overrides the language the file's extension names. A `.js` or `.ts`
    /// file that runs in a page (it uses `document` or `window`, or its
    /// tsconfig has the DOM beside a bundler's config) gets `browser`, the
    /// block that posts to the ingest URL, and one in a Deno project (a
    /// `deno.json` above it, or it uses `Deno`) gets `deno`, the block that
    /// never opens Deno's permission prompt, unless a language is given.
    pub language: Option<String>,
    /// Variables whose values go into the line's `data`; for a logpoint,
    /// the expressions it records (1 to 16, each at most 200 bytes).
    #[serde(default)]
    pub variables: Vec<String>,
    /// `source` (default): a block to insert. `logpoint`: no file is
    /// edited; `debug-sidecar run` sets it at `file:line` in the Python
    /// program or the Node processes it runs.
    #[serde(default)]
    pub kind: ProbeKind,
    /// A logpoint's 1-based line: it records before that line runs.
    pub line: Option<u32>,
    /// Where the program runs, when it cannot write this machine's files:
    /// `docker`, `android-emulator`, `lan` (a device on the network) or
    /// `wsl` (a Windows program). The block then posts its line to a
    /// listener the session starts on the address that target reaches
    /// (`host`, the default: it appends to the run's file).
    pub target: Option<crate::core::target::Target>,
}

impl ProbeSnippetParams {
    /// The engine's request, the same from every face.
    pub fn into_request(self) -> crate::engine::SnippetRequest {
        crate::engine::SnippetRequest {
            file: self.file,
            hypothesis_id: self.hypothesis_id,
            message: self.message,
            language: self.language,
            variables: self.variables,
            kind: self.kind,
            line: self.line,
            target: self.target.unwrap_or_default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoveLogpointsParams {
    pub session_id: Option<String>,
    /// The logpoints to remove (their probe ids): the cleanup of a logpoint.
    pub probe_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveLogpointsResult {
    /// The ids that were live and are removed now.
    pub removed: Vec<String>,
    pub snapshot: Snapshot,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeSnippetResult {
    /// The probe as the ledger now holds it (state `issued` until a scan finds it).
    pub probe: Probe,
    pub language: String,
    /// The block to insert, markers included.
    pub snippet: String,
    /// Where the file sits for the workspace walk (ignored, behind a symlink).
    pub placement: Placement,
    /// What to tell the model about that, when the walk would not see it.
    pub note: Option<String>,
    /// The session's state after registering the probe.
    pub snapshot: Snapshot,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProbesParams {
    pub session_id: Option<String>,
    /// Scan the workspace first (otherwise the last scan's view).
    #[serde(default)]
    pub rescan: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbesResult {
    /// The whole ledger with each probe's state.
    pub probes: Vec<Probe>,
    /// Probes the last scan found on disk.
    pub live: usize,
    /// Ledger probes no longer on disk.
    pub missing: Vec<String>,
    /// Found on disk by this scan without being in the ledger; now adopted.
    pub untracked: Vec<String>,
    /// Other tools' probes and other sessions' markers.
    pub foreign: Vec<ForeignProbe>,
    /// Start markers without an end, or ends without a start.
    pub half_removed: Vec<HalfRemoved>,
    /// Whether this answer comes from a scan made for it.
    pub scanned: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogsParams {
    pub session_id: Option<String>,
    /// A run id; default the current run.
    pub run: Option<String>,
    pub probe: Option<String>,
    pub hypothesis: Option<String>,
    /// Only lines containing this text.
    pub contains: Option<String>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Entries per page (default 50, at most 500).
    pub limit: Option<usize>,
    /// Bytes of entries per page (default 32 KiB, at most 1 MiB).
    pub max_bytes: Option<usize>,
    /// Only lines after this one: a mark's line (`log_summary` lists the
    /// person's marks), for what happened after it.
    pub after_line: Option<u64>,
    /// Only lines before this one: a later mark's line.
    pub before_line: Option<u64>,
}

impl LogsParams {
    /// The reader's query, with at most `max_bytes` per page when given.
    pub fn query(&self, cap: Option<usize>) -> crate::workspace::logread::LogQuery {
        crate::workspace::logread::LogQuery {
            probe: self.probe.clone(),
            hypothesis: self.hypothesis.clone(),
            contains: self.contains.clone(),
            cursor: self.cursor.clone(),
            limit: self.limit,
            max_bytes: match cap {
                Some(cap) => Some(self.max_bytes.unwrap_or(cap).min(cap)),
                None => self.max_bytes,
            },
            after_line: self.after_line,
            before_line: self.before_line,
        }
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogsResult {
    /// The run read; null when there is none.
    pub run: Option<String>,
    /// Its file (absolute).
    pub file: Option<String>,
    pub entries: Vec<LogEntry>,
    pub next_cursor: Option<String>,
    /// Lines in the run's file.
    pub total: u64,
    /// Malformed lines among those this page read.
    pub malformed: Malformed,
    /// Lines longer than the byte cap, skipped.
    pub oversized: Vec<u64>,
    /// Why this is not the run asked for, when it is not.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogSummaryParams {
    pub session_id: Option<String>,
    pub run: Option<String>,
}

/// The agent's `run_reproduction` tool (MCP only): the program and its
/// arguments, run without a shell in the workspace, and its time cap.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunReproductionParams {
    pub session_id: Option<String>,
    /// The program and its arguments, e.g. `["npm", "test"]` or
    /// `["./run.sh", "3"]`; no shell is involved (pass `["sh", "-c", "..."]`
    /// to ask for one).
    pub command: Vec<String>,
    /// Seconds before the program (and its process group) is killed:
    /// default 60, at most 600.
    pub timeout_sec: Option<u64>,
    /// Run it this many times (at most 50) into the one run, to measure how
    /// often a flaky bug fails: the answer says "failed k of N (rate, 95%
    /// interval)". `timeoutSec` is each attempt's cap; all attempts
    /// together get at most 600 s.
    pub repeat: Option<u64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogSummaryResult {
    pub run: Option<String>,
    pub file: Option<String>,
    #[serde(flatten)]
    pub summary: LogSummary,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachParams {
    pub session_id: Option<String>,
    /// A file inside the workspace (relative or absolute) or the user's home.
    pub path: String,
    /// The evidence request it answers.
    pub request_id: Option<String>,
    /// `screenshot`, `crash-dump`, `har`, ...
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MarkParams {
    pub session_id: Option<String>,
    /// What the person saw at this moment ("it froze right after Save").
    #[serde(default)]
    pub words: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkResult {
    /// The run the mark went into.
    pub run: String,
    /// Its 1-based line; null if it could not be found again.
    pub line: Option<u64>,
    /// The words as kept (cut to 500 characters, redacted).
    pub words: String,
    /// What to tell the person.
    pub message: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TodosParams {
    pub session_id: Option<String>,
    /// Raw entries `{content, status, activeForm?}`; malformed ones are skipped.
    pub todos: Vec<Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalParams {
    pub session_id: Option<String>,
    /// `{objective, status, blockedReason?, roundsUsed?, roundBudget?}` or null to clear.
    pub goal: Value,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivityParams {
    pub session_id: Option<String>,
    pub phase: Option<String>,
    pub line: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEventParams {
    pub session_id: Option<String>,
    pub id: String,
    pub kind: AgentEventKind,
    #[serde(rename = "type")]
    pub agent_type: Option<String>,
    pub description: Option<String>,
    pub result: Option<String>,
    pub error: Option<String>,
    /// Tool calls made so far (a running total: a smaller one is ignored).
    pub tool_uses: Option<u32>,
    /// Turns of the current run.
    pub turns: Option<u32>,
    /// The current run's turn ceiling.
    pub max_turns: Option<u32>,
    /// Lifetime tokens `{input, output, cacheRead, cacheWrite}` (running totals).
    pub usage: Option<AgentUsage>,
    /// Times its session compacted (a running total).
    pub compactions: Option<u32>,
    /// The question it ended its turn with; a blank one clears it, and a new
    /// run answers it.
    pub question: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressChanged {
    pub session_id: String,
    pub bubble: Option<Bubble>,
}

/// Everything known about a session's progress, for a panel that prints
/// the whole todo list (the bubble is one line). The view outlives the
/// bubble: it is kept after the bubble expires or its turn ends.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressViewResult {
    pub session_id: String,
    /// The last todo list written, every entry in order (empty when none).
    pub todos: Vec<Todo>,
    pub goal: Option<Goal>,
    /// The activity line of a session with nothing to measure.
    pub activity: Option<ActivityLine>,
    /// The bubble visible now, as `progress/state` answers it.
    pub bubble: Option<Bubble>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentChanged {
    pub session_id: String,
    pub record: AgentRecord,
}

/// Complete lines reached the log file of a run: read them with
/// `debug/logs {run, cursor}`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogAppended {
    pub session_id: String,
    pub run: String,
    /// Complete lines in the run's file now.
    pub lines: u64,
    /// A `debug/logs` cursor at the first line not announced before.
    pub cursor: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentList {
    pub session_id: String,
    pub agents: Vec<AgentRecord>,
}

/// A tool's hints, as MCP annotates a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    pub title: String,
    /// Changes nothing the user sees.
    pub read_only_hint: bool,
    /// May do what the session cannot undo (only `run_reproduction`, which
    /// runs a program of the workspace).
    pub destructive_hint: bool,
    /// Does nothing more when called again with the same arguments.
    pub idempotent_hint: bool,
    /// Reaches beyond the machine (never).
    pub open_world_hint: bool,
}

/// One of the agent's tools, as the MCP face lists it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub title: String,
    /// What the model is told the tool does.
    pub description: String,
    /// The JSON Schema (draft 2020-12) of its arguments.
    pub input_schema: serde_json::Map<String, Value>,
    pub annotations: ToolAnnotations,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsListResult {
    pub tools: Vec<ToolSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallParams {
    pub session_id: Option<String>,
    /// A name from `tools/list`.
    pub name: String,
    /// The model's arguments, as it gave them; checked against the tool's
    /// schema by the sidecar (a bad one is an `isError` answer).
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// One block of a tool's answer: always text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ToolContent {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResult {
    /// The text the model reads, as the MCP face answers it: one block, at
    /// the tool-result cap.
    pub content: Vec<ToolContent>,
    /// The call failed (bad arguments, a command the stage does not allow,
    /// an unknown tool): the text says why, for the model to act on.
    pub is_error: bool,
}

/// One session of the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// When it was last written (ms since the epoch).
    pub updated_at: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionsResult {
    /// The session a request without `sessionId` acts on now.
    pub current: String,
    /// Every session of the workspace, most recently active first.
    pub sessions: Vec<SessionEntry>,
}

methods! {
    Start = "debug/start", Request, StartParams => KickoffResult;
    HandOff = "debug/handOff", Request, HandOffParams => HandOffResult;
    Proceed = "debug/proceed", Request, ProceedParams => KickoffResult;
    Done = "debug/done", Request, DoneParams => KickoffResult;
    Abort = "debug/abort", Request, SessionParams => AbortResult;
    Status = "debug/status", Request, SessionParams => Snapshot;
    Context = "debug/context", Request, ContextParams => ContextResult;
    Stop = "debug/stop", Request, StopParams => StopResult;
    Observe = "debug/observe", Request, ObserveParams => Snapshot;
    RecordHypotheses = "debug/recordHypotheses", Request, RecordHypothesesParams => Snapshot;
    ProbeSnippet = "debug/probeSnippet", Request, ProbeSnippetParams => ProbeSnippetResult;
    Probes = "debug/probes", Request, ProbesParams => ProbesResult;
    RemoveLogpoints = "debug/removeLogpoints", Request, RemoveLogpointsParams => RemoveLogpointsResult;
    Logs = "debug/logs", Request, LogsParams => LogsResult;
    LogSummaryRequest = "debug/logSummary", Request, LogSummaryParams => LogSummaryResult;
    Attach = "debug/attach", Request, AttachParams => Snapshot;
    Mark = "debug/mark", Request, MarkParams => MarkResult;
    TurnStateRequest = "turn/state", Request, SessionParams => TurnStateResult;
    ProgressState = "progress/state", Request, SessionParams => Option<Bubble>;
    ProgressViewRequest = "progress/view", Request, SessionParams => ProgressViewResult;
    AgentsList = "agents/list", Request, SessionParams => AgentList;
    Sessions = "debug/sessions", Request, NoParams => SessionsResult;
    ClaimWake = "debug/claimWake", Request, ClaimWakeParams => ClaimWakeResult;
    ToolsList = "tools/list", Request, NoParams => ToolsListResult;
    ToolsCall = "tools/call", Request, ToolCallParams => ToolCallResult;
    TurnEventNotification = "turn/event", ClientNotification, TurnEventParams => ();
    ProgressTodos = "progress/todos", ClientNotification, TodosParams => ();
    ProgressGoal = "progress/goal", ClientNotification, GoalParams => ();
    ProgressActivity = "progress/activity", ClientNotification, ActivityParams => ();
    AgentsEvent = "agents/event", ClientNotification, AgentEventParams => ();
    StateChanged = "debug/stateChanged", ServerNotification, Snapshot => ();
    TurnStateChanged = "turn/stateChanged", ServerNotification, TurnStateResult => ();
    ProgressChangedNotification = "progress/changed", ServerNotification, ProgressChanged => ();
    AgentsChanged = "agents/changed", ServerNotification, AgentChanged => ();
    LogAppendedNotification = "debug/logAppended", ServerNotification, LogAppended => ();
    WakeRequestedNotification = "debug/wakeRequested", ServerNotification, WakeRequested => ();
    WakeChangedNotification = "debug/wakeChanged", ServerNotification, WakeChanged => ();
}
