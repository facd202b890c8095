import type { ProbesResult, Snapshot } from '../../src/model/protocol';

export function snapshot(over: Partial<Snapshot> = {}): Snapshot {
  return {
    sessionId: 'default',
    active: true,
    stage: 'investigating',
    round: 1,
    handoff: null,
    problem: 'Checkout total ignores the 3-item discount.',
    runId: 'r1-abc',
    logFile: '/ws/.debug-sidecar/sessions/default/runs/r1-abc.jsonl',
    ingestUrl: null,
    probes: { live: 0, list: [] },
    hypotheses: [],
    steps: [],
    pendingUserActions: [],
    evidenceSummary: 'round 1: no evidence plan yet',
    userCommands: ['done', 'abort'],
    revision: 1,
    warning: null,
    ...over,
  };
}

export function inactive(revision = 0): Snapshot {
  return snapshot({
    active: false,
    stage: null,
    round: null,
    problem: null,
    runId: null,
    logFile: null,
    evidenceSummary: null,
    userCommands: ['start'],
    revision,
  });
}

export function userTurn(over: Partial<Snapshot> = {}): Snapshot {
  return snapshot({
    stage: 'user_turn',
    handoff: 'reproduce',
    steps: ['Run `sh checkout.sh 1000 2000 3000`.', 'Press Proceed.'],
    userCommands: ['proceed', 'done', 'abort'],
    revision: 5,
    ...over,
  });
}

export function probes(over: Partial<ProbesResult> = {}): ProbesResult {
  return { probes: [], live: 0, missing: [], untracked: [], foreign: [], halfRemoved: [], scanned: false, ...over };
}
