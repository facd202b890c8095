// Shapes of debug-sidecar protocol v1 (protocol/schema/*.json), as far as this client reads them.
// Unknown fields are ignored (v1 may add fields).

export type Stage = 'investigating' | 'user_turn' | 'cleaning_up';
export type HandoffMode = 'reproduce' | 'capture' | 'question' | 'incomplete';
export type ProbeState = 'issued' | 'live' | 'missing';
export type TurnStateName = 'idle' | 'connecting' | 'thinking' | 'working' | 'streaming';

export interface Probe {
  id: string;
  file: string;
  round: number;
  state: ProbeState;
  hypothesisId?: string | null;
  language?: string | null;
  line?: number | null;
}

export interface Hypothesis {
  id: string;
  statement: string;
  status: 'open' | 'confirmed' | 'rejected' | 'inconclusive';
  evidence?: string[];
}

export interface EvidenceRequest {
  id: string;
  method: 'agent_inspection' | 'runtime_probe' | 'user_report' | 'user_artifact';
  instructions?: string[];
  artifactHint?: string | null;
}

export interface Snapshot {
  sessionId: string;
  active: boolean;
  stage: Stage | null;
  round: number | null;
  handoff: HandoffMode | null;
  problem: string | null;
  runId: string | null;
  logFile: string | null;
  ingestUrl: string | null;
  probes: { live: number; list: Probe[] };
  hypotheses: Hypothesis[];
  steps: string[];
  pendingUserActions: EvidenceRequest[];
  evidenceSummary: string | null;
  userCommands: string[];
  revision: number;
  warning: string | null;
}

/** `debug/start`, `debug/proceed`, `debug/done` answer a snapshot plus `kickoff`. */
/** Whether the agent is woken by itself after a Proceed or Mark fixed given here. */
export interface WakeInfo {
  state: 'waiting' | 'nobody' | 'delivered' | 'superseded';
  wakers: string[];
  revision: number;
  message: string;
}

export type KickoffSnapshot = Snapshot & { kickoff?: string | null; wake?: WakeInfo | null };

/** `debug/wakeChanged`: what became of a wake request. */
export interface WakeChanged {
  sessionId: string;
  revision: number;
  state: 'delivered' | 'superseded';
  by: string | null;
  message: string;
}

export interface AbortResult {
  snapshot: Snapshot;
  leftoverProbes: Probe[];
}

export type ForeignKind = 'cursorAgentLog' | 'ingestUrl' | 'otherSession';

export interface ForeignProbe {
  file: string;
  line: number;
  kind: ForeignKind;
  text: string;
}

export interface HalfRemoved {
  file: string;
  line: number;
  probeId: string;
}

export interface ProbesResult {
  probes: Probe[];
  live: number;
  missing: string[];
  untracked: string[];
  foreign: ForeignProbe[];
  halfRemoved: HalfRemoved[];
  scanned: boolean;
}

export interface LogEntry {
  line: number;
  entry: unknown;
}

export interface LogsResult {
  run?: string | null;
  file?: string | null;
  entries: LogEntry[];
  nextCursor?: string | null;
  total: number;
  malformed: { count: number; lines: number[] };
  oversized: number[];
  note?: string | null;
}

export interface TurnState {
  sessionId: string;
  state: TurnStateName;
  label: string;
}

export interface Bubble {
  kind: 'blocked' | 'todos' | 'goal' | 'activity';
  title: string;
  percent?: number | null;
  completed?: number | null;
  total?: number | null;
  line?: string | null;
}

export interface ProgressChanged {
  sessionId: string;
  bubble: Bubble | null;
}

/** `debug/logAppended`: the current run's log got complete new lines. */
export interface LogAppended {
  sessionId: string;
  run: string;
  lines: number;
  cursor: string | null;
}

/** A subagent record (`agents/list`, `agents/changed`). */
export interface AgentRecord {
  id: string;
  type?: string | null;
  description?: string | null;
  status: string;
  queuedAt?: number | null;
  startedAt?: number | null;
  completedAt?: number | null;
  result?: string | null;
  error?: string | null;
  toolUses?: number | null;
  turns?: number | null;
  maxTurns?: number | null;
  usage?: { input: number; output: number; cacheRead: number; cacheWrite: number } | null;
  compactions?: number | null;
  pendingQuestion?: string | null;
}

export interface MarkResult {
  run: string;
  line: number | null;
  words: string;
  message: string;
}

export interface AgentsList {
  sessionId: string;
  agents: AgentRecord[];
}

export interface AgentChanged {
  sessionId: string;
  record: AgentRecord;
}

export const Methods = {
  start: 'debug/start',
  proceed: 'debug/proceed',
  done: 'debug/done',
  abort: 'debug/abort',
  status: 'debug/status',
  probes: 'debug/probes',
  logs: 'debug/logs',
  turnState: 'turn/state',
  progressState: 'progress/state',
  agentsList: 'agents/list',
  mark: 'debug/mark',
} as const;

export const Notifications = {
  stateChanged: 'debug/stateChanged',
  turnChanged: 'turn/stateChanged',
  progressChanged: 'progress/changed',
  logAppended: 'debug/logAppended',
  wakeChanged: 'debug/wakeChanged',
  agentsChanged: 'agents/changed',
} as const;

export const ErrorCodes = {
  illegalCommand: -32050,
  workspaceIo: -32051,
  invalidParams: -32602,
  methodNotFound: -32601,
  internalError: -32603,
  serverNotInitialized: -32002,
} as const;
