// The status bar item: the agent's turn state (spinner while busy), the debug stage and,
// when a bubble is live, its progress. Plain text with VS Code codicons (`$(name)`).
import type { Bubble, Snapshot, Stage, TurnState, TurnStateName } from './protocol';

export type ServerState = 'starting' | 'running' | 'stopped' | 'missing';

export interface StatusInput {
  server: ServerState;
  snapshot: Snapshot | null;
  turn: TurnState | null;
  bubble: Bubble | null;
}

export interface StatusView {
  /** The status bar text, with codicons. */
  text: string;
  tooltip: string;
  /** True while the agent's turn runs (the spinner shows). */
  busy: boolean;
  /** Whether the item should be drawn as an error/warning. */
  severity: 'normal' | 'warning' | 'error';
  /** The command a click runs. */
  command: string;
}

export const TURN_LABELS: Record<TurnStateName, string> = {
  idle: 'idle',
  connecting: 'connecting…',
  thinking: 'thinking…',
  working: 'working…',
  streaming: 'streaming…',
};

const STAGE_TEXT: Record<Stage, string> = {
  investigating: 'agent investigating',
  user_turn: 'your turn',
  cleaning_up: 'cleaning up',
};

export function stageText(snapshot: Snapshot | null): string {
  if (!snapshot || !snapshot.active || snapshot.stage === null) return 'off';
  const round = snapshot.round !== null ? ` · round ${snapshot.round}` : '';
  return `${STAGE_TEXT[snapshot.stage] ?? snapshot.stage}${round}`;
}

/** `33% 1/3 Adding probes`; an activity bubble shows its line after the title. */
export function progressText(bubble: Bubble | null): string {
  if (!bubble) return '';
  const parts: string[] = [];
  if (typeof bubble.percent === 'number') parts.push(`${bubble.percent}%`);
  if (typeof bubble.completed === 'number' && typeof bubble.total === 'number') {
    parts.push(`${bubble.completed}/${bubble.total}`);
  }
  let title = bubble.title;
  if (bubble.kind === 'blocked') title = `blocked: ${title}`;
  if (bubble.line && bubble.kind === 'activity') title = `${title}: ${bubble.line}`;
  parts.push(title);
  return parts.join(' ');
}

export function turnIsBusy(turn: TurnState | null): boolean {
  return turn !== null && turn.state !== 'idle';
}

export function statusView(input: StatusInput): StatusView {
  if (input.server === 'missing') {
    return {
      text: '$(error) debug-sidecar not found',
      tooltip: 'The debug-sidecar binary was not found. Set `debugSidecar.path` or put it on PATH.',
      busy: false,
      severity: 'error',
      command: 'debugSidecar.restart',
    };
  }
  if (input.server === 'stopped') {
    return {
      text: '$(error) debug-sidecar stopped',
      tooltip: 'The sidecar stopped. Click to restart it (Debug Mode: Restart Sidecar).',
      busy: false,
      severity: 'error',
      command: 'debugSidecar.restart',
    };
  }
  if (input.server === 'starting') {
    return {
      text: '$(sync~spin) Debug: starting sidecar',
      tooltip: 'Starting debug-sidecar…',
      busy: true,
      severity: 'normal',
      command: 'debugSidecar.statusMenu',
    };
  }
  const busy = turnIsBusy(input.turn);
  const turnLabel = input.turn ? input.turn.label || TURN_LABELS[input.turn.state] : TURN_LABELS.idle;
  const icon = busy ? '$(sync~spin)' : '$(debug-alt)';
  const snap = input.snapshot;
  const parts = [`${icon} ${turnLabel}`, `Debug: ${stageText(snap)}`];
  const progress = progressText(input.bubble);
  if (progress) parts.push(progress);

  const tips: string[] = [];
  const yourTurn = snap?.active === true && snap.stage === 'user_turn';
  if (yourTurn) tips.push('Your turn: click for the steps, Proceed and Mark fixed.');
  if (snap && snap.active) {
    if (snap.problem) tips.push(`Problem: ${snap.problem}`);
    tips.push(`Stage: ${snap.stage ?? 'inactive'}${snap.round !== null ? `, round ${snap.round}` : ''}`);
    tips.push(`Probes live: ${snap.probes.live} of ${snap.probes.list.length}`);
    if (snap.runId) tips.push(`Run: ${snap.runId}`);
  } else {
    tips.push('No debug session. Run "Debug Mode: Start".');
  }
  tips.push(`Agent: ${turnLabel}`);
  if (input.bubble) {
    tips.push(`Progress: ${progress}`);
    if (input.bubble.line && input.bubble.kind !== 'activity') tips.push(input.bubble.line);
  }
  if (snap?.warning) tips.push(`Warning: ${snap.warning}`);

  return {
    text: parts.join(' | '),
    tooltip: tips.join('\n'),
    busy,
    // The hand-off stays in sight until the person acts (the notification hides itself).
    severity: snap?.warning || yourTurn ? 'warning' : 'normal',
    command: 'debugSidecar.statusMenu',
  };
}

export interface MenuItem {
  label: string;
  description: string;
  /** A second line (the reproduction steps under Proceed). */
  detail?: string;
  command: string;
}

/** What a click on the status bar item offers: the commands legal now, then the views. */
export function statusMenu(server: ServerState, snapshot: Snapshot | null): MenuItem[] {
  if (server === 'stopped' || server === 'missing') {
    return [{ label: 'Restart Sidecar', description: 'start debug-sidecar again', command: 'debugSidecar.restart' }];
  }
  const legal = new Set(snapshot?.userCommands ?? ['start']);
  const items: MenuItem[] = [];
  if (legal.has('start')) items.push({ label: 'Start', description: 'describe the problem', command: 'debugSidecar.start' });
  if (legal.has('proceed')) {
    const steps = snapshot?.stage === 'user_turn' ? (snapshot.steps ?? []).map((step, i) => `${i + 1}. ${step}`).join(' ') : '';
    items.push({ label: 'Proceed', description: 'I reproduced it', ...(steps ? { detail: steps } : {}), command: 'debugSidecar.proceed' });
  }
  if (legal.has('done')) items.push({ label: 'Mark Fixed', description: 'the bug is gone; clean up', command: 'debugSidecar.markFixed' });
  if (legal.has('abort')) items.push({ label: 'Abort', description: 'end the session now', command: 'debugSidecar.abort' });
  items.push({ label: 'Show Probe Ledger', description: '', command: 'debugSidecar.showLedger' });
  items.push({ label: 'Show Run Logs', description: '', command: 'debugSidecar.showLogs' });
  items.push({ label: 'Check for Leftover Probes', description: '', command: 'debugSidecar.checkLeftovers' });
  return items;
}
