// The extension's controller: talks to the sidecar through an abstract connection and tells
// an abstract UI what to show. No `vscode` import: the protocol suite drives this very class
// over vscode-jsonrpc against the real binary; extension.ts drives it over a LanguageClient.
import { describeError, stoppedMessage, type SettingsTab, type UserMessage } from './model/errors';
import { agentNodes, withRecord, type AgentNode } from './model/agents';
import { ledgerNodes, leftoverReport, where, type LedgerNode, type LeftoverReport } from './model/ledger';
import { LogTail } from './model/logtail';
import { userTurnPrompt, type UserAction, type UserTurnPrompt } from './model/notification';
import {
  Methods,
  Notifications,
  type AbortResult,
  type AgentChanged,
  type AgentRecord,
  type AgentsList,
  type MarkResult,
  type Bubble,
  type KickoffSnapshot,
  type LogAppended,
  type LogsResult,
  type ProbesResult,
  type ProgressChanged,
  type Snapshot,
  type TurnState,
  type WakeChanged,
} from './model/protocol';
import { statusView, type ServerState, type StatusView } from './model/status';

export interface Disposable {
  dispose(): void;
}

export interface CloseInfo {
  code?: number | null;
  signal?: string | null;
}

/** An initialized connection to one `debug-sidecar serve` process. */
export interface SidecarConnection {
  sendRequest<R>(method: string, params: object): Promise<R>;
  onNotification(method: string, handler: (params: unknown) => void): Disposable;
  /** Called once when the process or connection ends without `stop()`. */
  onClose(handler: (info: CloseInfo) => void): Disposable;
  /** shutdown + exit, then make sure the process is gone. */
  stop(): Promise<void>;
}

/** Starts a sidecar and initializes it; rejects (ENOENT, EACCES, ...) when it cannot. */
export type Launcher = () => Promise<SidecarConnection>;

export interface Ui {
  status(view: StatusView): void;
  /** Show the hand-off notification; a button calls `controller.runAction`. */
  userTurn(prompt: UserTurnPrompt): void;
  ledger(nodes: LedgerNode[]): void;
  /** The session's subagents, as their records stand. */
  agents(nodes: AgentNode[]): void;
  /** Append lines to the run log output. */
  log(lines: string[]): void;
  /** Empty the run log output: a new debug session started. */
  clearLog(): void;
  message(message: UserMessage): void;
  /** Which person's commands are legal now (for menus); `running` false while the sidecar is down. */
  commands(state: CommandState): void;
}

export interface CommandState {
  running: boolean;
  /** `userCommands` of the snapshot (`start`, `proceed`, `done`, `abort`). */
  legal: string[];
}

export interface ControllerOptions {
  /** The configured binary, for messages. */
  binaryPath: () => string;
  /** The settings tab `debugSidecar.path` is read from (`Remote` in a remote window), for messages. */
  settingsTab?: () => SettingsTab;
  /** Delay before a ledger refresh after a state change (ms). */
  ledgerDelayMs?: number;
}

function isConnectionLoss(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  // vscode-jsonrpc: PendingResponseRejected (-32097), ConnectionInactive (-32096),
  // ConnectionError (Closed = 1, Disposed = 2) and write errors on a dead pipe.
  if (e.code === -32097 || e.code === -32096) return true;
  if (typeof e.message === 'string' && /connection (got|is) (closed|disposed)|EPIPE|write after end|Client is not running|not running/i.test(e.message)) {
    return true;
  }
  return e.name === 'ConnectionError';
}

export class SidecarController {
  private conn: SidecarConnection | null = null;
  private subs: Disposable[] = [];
  private stopping = false;
  /** The revision of this window's command whose wake is awaited. */
  private wakeAsked: number | null = null;
  private generation = 0;
  private starting: Promise<boolean> | null = null;
  /** The revision of each session's last `debug/stateChanged`. */
  private readonly heard = new Map<string, number>();
  /** Other sessions of the workspace known (from `debug/stateChanged`) to be live debug sessions. */
  private readonly otherLive = new Set<string>();

  server: ServerState = 'stopped';
  snapshot: Snapshot | null = null;
  turn: TurnState | null = null;
  bubble: Bubble | null = null;
  ledger: LedgerNode[] = [];
  /** The subagent records of the session this window shows, and that session. */
  agents: AgentRecord[] = [];
  private agentsSession: string | null = null;
  lastProbes: ProbesResult | null = null;
  readonly tail = new LogTail();

  private shownPromptKey: string | null = null;
  /** The debug session the run log shows (id and problem), kept across restarts. */
  private logSession: string | null = null;
  /** Whether that session was seen to end. */
  private logSessionEnded = false;
  private lastStatus = '';
  private lastCommands = '';
  private ledgerTimer: ReturnType<typeof setTimeout> | null = null;
  private ledgerBusy: Promise<void> = Promise.resolve();
  private logQueue: Promise<void> = Promise.resolve();

  constructor(
    private readonly launcher: Launcher,
    private readonly ui: Ui,
    private readonly options: ControllerOptions,
  ) {}

  get running(): boolean {
    return this.server === 'running' && this.conn !== null;
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Start the sidecar and load the current state. Returns false (and says why) on failure.
   * While a start is in flight, callers share it (no second process).
   */
  startServer(): Promise<boolean> {
    if (this.conn) return Promise.resolve(true);
    if (this.starting) return this.starting;
    const p: Promise<boolean> = this.launch().finally(() => {
      if (this.starting === p) this.starting = null;
    });
    this.starting = p;
    return p;
  }

  /** Resolves once a start in flight (if any) has finished. */
  async settled(): Promise<void> {
    if (this.starting) await this.starting;
  }

  private async launch(): Promise<boolean> {
    const gen = ++this.generation;
    this.stopping = false;
    this.server = 'starting';
    this.render();
    let conn: SidecarConnection;
    try {
      conn = await this.launcher();
    } catch (err) {
      if (gen !== this.generation) return false;
      const msg = describeError(err, 'start', this.options.binaryPath(), this.options.settingsTab?.());
      const code = (err as { code?: unknown } | null)?.code;
      this.server = code === 'ENOENT' || code === 'EACCES' ? 'missing' : 'stopped';
      this.render();
      this.ui.message(msg);
      return false;
    }
    if (gen !== this.generation) {
      await conn.stop().catch(() => undefined);
      return false;
    }
    this.conn = conn;
    this.server = 'running';
    // The state is read afresh below; what the last process said is not compared against.
    this.snapshot = null;
    this.turn = null;
    this.bubble = null;
    this.otherLive.clear();
    this.subs = [
      conn.onNotification(Notifications.stateChanged, (p) => this.applySnapshot(p as Snapshot, 'notification')),
      conn.onNotification(Notifications.turnChanged, (p) => this.applyTurn(p as TurnState)),
      conn.onNotification(Notifications.progressChanged, (p) => this.applyProgress(p as ProgressChanged)),
      conn.onNotification(Notifications.logAppended, (p) => this.onLogAppended(p as LogAppended)),
      conn.onNotification(Notifications.wakeChanged, (p) => this.onWakeChanged(p as WakeChanged)),
      conn.onNotification(Notifications.agentsChanged, (p) => this.onAgentChanged(p as AgentChanged)),
      conn.onClose((info) => this.onClosed(conn, info)),
    ];
    try {
      const snap = await conn.sendRequest<Snapshot>(Methods.status, {});
      if (gen !== this.generation) return false;
      this.applySnapshot(snap, 'response');
      const turn = await conn.sendRequest<TurnState>(Methods.turnState, {});
      // A turn notification that arrived meanwhile is newer (or another process's agent).
      if (this.turn === null) this.applyTurn(turn);
      const bubble = await conn.sendRequest<Bubble | null>(Methods.progressState, {});
      // A notification may have brought a newer bubble (or another agent's) meanwhile.
      if (this.bubble === null) this.bubble = bubble;
      this.render();
      const agents = await conn.sendRequest<AgentsList>(Methods.agentsList, {});
      if (gen !== this.generation) return false;
      this.agentsSession = agents.sessionId;
      this.agents = agents.agents;
      this.ui.agents(agentNodes(this.agents));
      await this.refreshLedger(false, true);
    } catch (err) {
      if (!isConnectionLoss(err)) this.ui.message(describeError(err, 'read the debug session'));
    }
    return this.running;
  }

  /** A subagent's record changed: the view follows the session it shows (the first one
   * heard of when it shows none yet). */
  private onAgentChanged(p: AgentChanged): void {
    if (this.agentsSession === null) this.agentsSession = p.sessionId;
    if (p.sessionId !== this.agentsSession) return;
    this.agents = withRecord(this.agents, p.record);
    this.ui.agents(agentNodes(this.agents));
  }

  /** Stop the sidecar on purpose (deactivate, restart): no "stopped" message. */
  async stopServer(): Promise<void> {
    this.generation++;
    this.starting = null;
    const conn = this.conn;
    this.detach();
    this.server = 'stopped';
    if (conn) {
      this.stopping = true;
      try {
        await conn.stop();
      } catch {
        // already gone
      } finally {
        this.stopping = false;
      }
    }
  }

  async restart(): Promise<boolean> {
    await this.stopServer();
    return this.startServer();
  }

  dispose(): Promise<void> {
    if (this.ledgerTimer) clearTimeout(this.ledgerTimer);
    return this.stopServer();
  }

  private detach(): void {
    for (const s of this.subs) s.dispose();
    this.subs = [];
    this.conn = null;
    if (this.ledgerTimer) {
      clearTimeout(this.ledgerTimer);
      this.ledgerTimer = null;
    }
  }

  private onClosed(conn: SidecarConnection, info: CloseInfo): void {
    if (conn !== this.conn || this.stopping) return;
    this.detach();
    // Release what the dead connection holds (a LanguageClient, a pipe); it is gone anyway.
    void conn.stop().catch(() => undefined);
    this.server = 'stopped';
    this.turn = null;
    this.bubble = null;
    this.render();
    this.ui.message(stoppedMessage(info));
  }

  // ---------------------------------------------------------------- commands

  async start(problem: string): Promise<Snapshot | null> {
    const text = problem.trim();
    if (text === '') {
      this.ui.message({ severity: 'warning', text: 'Describe the problem to start Debug Mode.', actions: [] });
      return null;
    }
    const snap = await this.request<KickoffSnapshot>(Methods.start, { problem: text }, 'start a debug session');
    if (snap) {
      this.applySnapshot(snap, 'response');
      this.ui.message({
        severity: 'info',
        text: `Debug Mode started (round ${snap.round ?? 1}). The agent investigates; you get the reproduction steps when it hands the round to you.`,
        actions: [],
      });
    }
    return snap;
  }

  async proceed(note?: string): Promise<Snapshot | null> {
    const params = note && note.trim() ? { note: note.trim() } : {};
    const snap = await this.request<KickoffSnapshot>(Methods.proceed, params, 'proceed');
    if (snap) {
      this.applySnapshot(snap, 'response');
      this.tellWake(snap);
    }
    return snap;
  }

  async markFixed(note?: string): Promise<Snapshot | null> {
    const params = note && note.trim() ? { note: note.trim() } : {};
    const snap = await this.request<KickoffSnapshot>(Methods.done, params, 'mark the bug fixed');
    if (snap) {
      this.applySnapshot(snap, 'response');
      this.ui.message({
        severity: 'info',
        text: 'Marked fixed. The agent now removes its probes; the session ends when none is left on disk.',
        actions: [],
      });
      this.tellWake(snap);
    }
    return snap;
  }

  /** The sidecar's line on waking the agent after a command given here. */
  private tellWake(snap: KickoffSnapshot): void {
    if (!snap.wake) return;
    this.wakeAsked = snap.wake.state === 'waiting' ? snap.wake.revision : null;
    this.ui.message({ severity: 'info', text: snap.wake.message, actions: [] });
  }

  /** The agent was woken (or its chat went on first) for a command given here. */
  private onWakeChanged(p: WakeChanged): void {
    if (p.revision !== this.wakeAsked) return;
    this.wakeAsked = null;
    this.ui.message({ severity: 'info', text: p.message, actions: [] });
  }

  /** The person marks this moment in the current run ("it froze right after Save"). */
  async mark(words: string): Promise<MarkResult | null> {
    const res = await this.request<MarkResult>(Methods.mark, { words: words.trim() }, 'mark this moment');
    if (res) this.ui.message({ severity: 'info', text: res.message, actions: [] });
    return res;
  }

  async abort(): Promise<AbortResult | null> {
    const res = await this.request<AbortResult>(Methods.abort, {}, 'abort the debug session');
    if (!res) return null;
    this.applySnapshot(res.snapshot, 'response');
    if (res.leftoverProbes.length === 0) {
      this.ui.message({ severity: 'info', text: 'Debug session aborted. No probe is left on disk.', actions: [] });
    } else {
      const list = res.leftoverProbes.map((p) => `${p.id} at ${where(p.file, p.line)}`).join('; ');
      this.ui.message({
        severity: 'warning',
        text: `Debug session aborted. ${res.leftoverProbes.length} probe(s) are still in your files: ${list}. Remove them (each sits between #region debug-probe markers).`,
        actions: [{ title: 'Show Probe Ledger', command: 'debugSidecar.showLedger' }],
      });
    }
    return res;
  }

  /** A button of the hand-off notification. */
  runAction(action: UserAction): Promise<unknown> {
    switch (action) {
      case 'proceed':
        return this.proceed();
      case 'done':
        return this.markFixed();
      case 'abort':
        return this.abort();
    }
  }

  /** Reload the ledger (with a workspace scan when `rescan`) and push it to the tree. */
  async refreshLedger(rescan: boolean, background = false): Promise<LedgerNode[] | null> {
    const run = async (): Promise<LedgerNode[] | null> => {
      const res = await this.request<ProbesResult>(Methods.probes, rescan ? { rescan: true } : {}, 'read the probe ledger', background);
      if (!res) return null;
      this.lastProbes = res;
      this.ledger = ledgerNodes(res, this.snapshot?.hypotheses ?? []);
      this.ui.ledger(this.ledger);
      return this.ledger;
    };
    // One ledger request at a time, so an older answer never overwrites a newer one.
    const next = this.ledgerBusy.then(run, run);
    this.ledgerBusy = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  async checkLeftovers(): Promise<LeftoverReport | null> {
    const nodes = await this.refreshLedger(true);
    if (nodes === null || this.lastProbes === null) return null;
    const report = leftoverReport(this.lastProbes);
    this.ui.message({
      severity: report.clean ? 'info' : 'warning',
      text: report.message,
      actions: report.clean ? [] : [{ title: 'Show Probe Ledger', command: 'debugSidecar.showLedger' }],
    });
    return report;
  }

  /** "Show Run Logs": read every page of the current run and append what is not shown yet. */
  async showLogs(): Promise<number | null> {
    if (!this.ensureRunning()) return null;
    const run = this.snapshot?.runId ?? null;
    let ok = true;
    await this.enqueueLogs(async () => {
      ok = await this.pullLogs(run, null, false);
    });
    if (!ok) return null;
    if (this.tail.currentRun === null && this.tail.count === 0) {
      this.ui.log(['(no run yet: start a debug session first)']);
    }
    return this.tail.count;
  }

  // ---------------------------------------------------------------- incoming state

  /**
   * `response`: a request's answer, authoritative for its session unless a notification
   * already brought a newer revision (another process may have changed the session in
   * between). `notification`: only newer revisions, or a reset; another session only when
   * ours is inactive and that one is live.
   */
  private applySnapshot(snap: Snapshot, source: 'response' | 'notification'): void {
    const cur = this.snapshot;
    if (source === 'notification' && cur && snap.sessionId !== cur.sessionId) {
      if (snap.active) this.otherLive.add(snap.sessionId);
      else this.otherLive.delete(snap.sessionId);
    }
    const heard = this.heard.get(snap.sessionId);
    if (source === 'notification') this.heard.set(snap.sessionId, snap.revision);
    if (cur && snap.sessionId === cur.sessionId) {
      // Notifications come in the order of the changes, so one that goes back means the
      // session was reset (its saved state was damaged and moved aside, or deleted); other
      // older ones were overtaken by an answer.
      const reset =
        source === 'notification' &&
        ((heard !== undefined && snap.revision < heard) || (!!snap.warning && snap.warning !== cur.warning));
      if (!reset && (source === 'notification' ? snap.revision <= cur.revision : snap.revision < cur.revision)) return;
    }
    if (cur && source === 'notification' && snap.sessionId !== cur.sessionId) {
      // Another session of this workspace: follow it only when ours is idle and it is live
      // (the server's default is the most recently active session).
      if (cur.active || !snap.active) return;
    }
    if (cur && cur.sessionId !== snap.sessionId && cur.active) this.otherLive.add(cur.sessionId);
    this.otherLive.delete(snap.sessionId);
    const changedLedger =
      !cur ||
      cur.sessionId !== snap.sessionId ||
      cur.revision !== snap.revision ||
      JSON.stringify(cur.probes) !== JSON.stringify(snap.probes);
    this.snapshot = snap;
    this.followLogSession(snap);
    this.render();
    const prompt = userTurnPrompt(snap, this.shownPromptKey);
    if (prompt) {
      this.shownPromptKey = prompt.key;
      this.ui.userTurn(prompt);
    }
    if (snap.warning && snap.warning !== cur?.warning) {
      this.ui.message({ severity: 'warning', text: `debug-sidecar: ${snap.warning}`, actions: [] });
    }
    if (changedLedger && cur) this.scheduleLedger();
  }

  /**
   * A new debug session (another id or problem, or the same one started again after it
   * ended) empties the run log, so its lines are never read as the new session's.
   */
  private followLogSession(snap: Snapshot): void {
    if (!snap.active) {
      if (this.logSession?.startsWith(`${snap.sessionId}\u0000`)) this.logSessionEnded = true;
      return;
    }
    const key = `${snap.sessionId}\u0000${snap.problem ?? ''}`;
    if (this.logSession !== null && (key !== this.logSession || this.logSessionEnded)) {
      this.tail.reset();
      this.ui.clearLog();
    }
    this.logSession = key;
    this.logSessionEnded = false;
  }

  /**
   * Whether turn state and progress of `sessionId` are this window's agent. An agent's hooks
   * and MCP server report under the workspace's most recently active session, which can differ
   * from the one this window shows (say, before the agent's first debug session), so other ids
   * count too, except a different live debug session.
   */
  private isOurAgent(sessionId: string | undefined): boolean {
    if (!sessionId || !this.snapshot || sessionId === this.snapshot.sessionId) return true;
    return !this.otherLive.has(sessionId);
  }

  private applyTurn(t: TurnState): void {
    if (!t || typeof t.state !== 'string') return;
    if (!this.isOurAgent(t.sessionId)) return;
    this.turn = t;
    this.render();
  }

  private applyProgress(p: ProgressChanged): void {
    if (!p) return;
    if (!this.isOurAgent(p.sessionId)) return;
    this.bubble = p.bubble ?? null;
    this.render();
  }

  private onLogAppended(p: LogAppended): void {
    if (!p || typeof p.run !== 'string') return;
    if (this.snapshot && p.sessionId && p.sessionId !== this.snapshot.sessionId) return;
    // A late announcement of an earlier run (a program of the last round still writing)
    // would flip the output back to that run; the current run is the snapshot's.
    if (this.snapshot?.runId && p.run !== this.snapshot.runId) return;
    void this.enqueueLogs(async () => {
      if (p.run === this.tail.currentRun && this.tail.hasAll(p.run, p.lines)) return;
      await this.pullLogs(p.run, p.cursor ?? null, true);
    });
  }

  private enqueueLogs(job: () => Promise<void>): Promise<void> {
    const next = this.logQueue.then(job, job);
    this.logQueue = next.catch(() => undefined);
    return next.catch(() => undefined);
  }

  /** Follow `nextCursor` from `cursor` to the end of `run`; returns false on failure. */
  private async pullLogs(run: string | null, cursor: string | null, background: boolean): Promise<boolean> {
    let next: string | null = cursor;
    for (let page = 0; page < 10_000; page++) {
      const params: Record<string, unknown> = { limit: 500 };
      if (run) params['run'] = run;
      if (next) params['cursor'] = next;
      const res: LogsResult | null = await this.request<LogsResult>(Methods.logs, params, 'read the run log', background);
      if (!res) return false;
      const lines = this.tail.accept(res.run ?? run, res.entries);
      if (res.note && page === 0 && cursor === null) lines.push(`(${res.note})`);
      if (lines.length > 0) this.ui.log(lines);
      next = res.nextCursor ?? null;
      if (!next) return true;
    }
    return true;
  }

  private scheduleLedger(): void {
    if (this.ledgerTimer) clearTimeout(this.ledgerTimer);
    this.ledgerTimer = setTimeout(() => {
      this.ledgerTimer = null;
      if (this.running) void this.refreshLedger(false, true);
    }, this.options.ledgerDelayMs ?? 50);
  }

  // ---------------------------------------------------------------- helpers

  currentStatus(): StatusView {
    return statusView({ server: this.server, snapshot: this.snapshot, turn: this.turn, bubble: this.bubble });
  }

  private render(): void {
    const view = this.currentStatus();
    const key = `${view.text}\u0000${view.tooltip}\u0000${view.severity}\u0000${view.command}`;
    if (key !== this.lastStatus) {
      this.lastStatus = key;
      this.ui.status(view);
    }
    const running = this.server === 'running';
    const legal = running ? (this.snapshot?.userCommands ?? ['start']) : [];
    const commandsKey = `${running}\u0000${legal.join(',')}`;
    if (commandsKey !== this.lastCommands) {
      this.lastCommands = commandsKey;
      this.ui.commands({ running, legal: [...legal] });
    }
  }

  /** True when the sidecar runs; otherwise tells the person why not (with Restart) and returns false. */
  ensureRunning(): boolean {
    if (this.running) return true;
    if (this.server === 'missing') {
      this.ui.message(describeError({ code: 'ENOENT' }, 'start', this.options.binaryPath(), this.options.settingsTab?.()));
    } else if (this.server === 'starting') {
      this.ui.message({ severity: 'info', text: 'debug-sidecar is still starting; try again in a moment.', actions: [] });
    } else {
      this.ui.message(stoppedMessage());
    }
    return false;
  }

  /**
   * Send a request; on failure tell the person and return null. `background` work (refreshes
   * after notifications) stays quiet while the sidecar is down: only commands say so.
   */
  private async request<R>(method: string, params: object, what: string, background = false): Promise<R | null> {
    if (background && !this.running) return null;
    if (!this.ensureRunning() || !this.conn) return null;
    const conn = this.conn;
    try {
      return await conn.sendRequest<R>(method, params);
    } catch (err) {
      // A lost connection is reported once, by onClose, with a Restart button.
      if (isConnectionLoss(err) || conn !== this.conn) return null;
      this.ui.message(describeError(err, what));
      return null;
    }
  }
}
