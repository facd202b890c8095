// The controller against a scripted in-memory connection: ordering, session filtering,
// connection loss and restart, without a process. (The real binary: protocol.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Snapshot } from '../src/model/protocol';
import { SidecarController, type CloseInfo, type SidecarConnection } from '../src/session';
import { inactive, probes, snapshot, userTurn } from './support/fixtures';
import { RecordingUi } from './support/recorder';

class FakeConnection implements SidecarConnection {
  handlers = new Map<string, (p: unknown) => void>();
  closeHandlers = new Set<(i: CloseInfo) => void>();
  calls: Array<{ method: string; params: object }> = [];
  stopped = false;
  constructor(public answers: Record<string, (params: object) => unknown>) {}
  async sendRequest<R>(method: string, params: object): Promise<R> {
    this.calls.push({ method, params });
    const a = this.answers[method];
    if (!a) throw { code: -32601, message: `unknown ${method}` };
    return (await a(params)) as R;
  }
  onNotification(method: string, handler: (p: unknown) => void) {
    this.handlers.set(method, handler);
    return { dispose: () => this.handlers.delete(method) };
  }
  onClose(handler: (i: CloseInfo) => void) {
    this.closeHandlers.add(handler);
    return { dispose: () => this.closeHandlers.delete(handler) };
  }
  async stop() {
    this.stopped = true;
  }
  notify(method: string, params: unknown): void {
    this.handlers.get(method)?.(params);
  }
  crash(info: CloseInfo): void {
    for (const h of this.closeHandlers) h(info);
  }
}

function answers(state: { snap: Snapshot }): Record<string, (params: object) => unknown> {
  return {
    'debug/status': () => state.snap,
    'turn/state': () => ({ sessionId: 'default', state: 'idle', label: 'idle' }),
    'progress/state': () => null,
    'agents/list': () => ({ sessionId: 'default', agents: [] }),
    'debug/probes': () => probes({ probes: state.snap.probes.list }),
    'debug/logs': () => ({ run: state.snap.runId, entries: [], nextCursor: null, total: 0, malformed: { count: 0, lines: [] }, oversized: [] }),
  };
}

function setup(initial: Snapshot) {
  const state = { snap: initial };
  const rec = new RecordingUi();
  const conns: FakeConnection[] = [];
  const c = new SidecarController(
    async () => {
      const conn = new FakeConnection(answers(state));
      conns.push(conn);
      return conn;
    },
    rec.ui,
    { binaryPath: () => 'debug-sidecar', ledgerDelayMs: 0 },
  );
  return { state, rec, conns, c };
}

test('a notification overtaken by an answer, or a duplicate, never overwrites newer state', async () => {
  const { rec, conns, c } = setup(snapshot({ revision: 3 }));
  assert.ok(await c.startServer());
  const conn = conns[0]!;
  conn.notify('debug/stateChanged', userTurn({ revision: 5 }));
  assert.equal(rec.prompts.length, 1);
  // Proceed is answered with revision 7; the notification of revision 6 was still on its way.
  conn.answers['debug/proceed'] = () => ({ ...snapshot({ revision: 7, round: 2 }), kickoff: 'Round 2.' });
  await c.proceed();
  assert.equal(c.snapshot?.round, 2);
  conn.notify('debug/stateChanged', userTurn({ revision: 6 }));
  assert.equal(c.snapshot?.stage, 'investigating', 'revision 6 arrived late and is ignored');
  conn.notify('debug/stateChanged', snapshot({ revision: 7, round: 2 }));
  assert.equal(rec.prompts.length, 1, 'the hand-off is announced once');
  assert.match(rec.status?.text ?? '', /Debug: agent investigating · round 2/);
});

test('notifications that go back in revision are a reset and are shown', async () => {
  const { conns, c } = setup(snapshot({ revision: 3 }));
  assert.ok(await c.startServer());
  const conn = conns[0]!;
  conn.notify('debug/stateChanged', userTurn({ revision: 5 }));
  assert.equal(c.snapshot?.stage, 'user_turn');
  // The saved state was deleted: the session starts over.
  conn.notify('debug/stateChanged', inactive(0));
  assert.equal(c.snapshot?.active, false);
  assert.equal(c.snapshot?.revision, 0);
});

test('turn and progress of the agent’s own session id are shown; another live debug session’s are not', async () => {
  const { rec, conns, c } = setup(inactive(2));
  await c.startServer();
  const conn = conns[0]!;
  // An agent's hooks report under the harness's session id (Claude's `session_id`).
  conn.notify('turn/stateChanged', { sessionId: 'claude-7f3c', state: 'thinking', label: 'thinking…' });
  assert.equal(c.turn?.state, 'thinking');
  assert.equal(rec.status?.busy, true);
  conn.notify('progress/changed', { sessionId: 'claude-7f3c', bubble: { kind: 'activity', title: 'X' } });
  assert.equal(c.bubble?.title, 'X');

  // Another session that is a live debug session: followed while ours is inactive...
  conn.notify('debug/stateChanged', snapshot({ sessionId: 'agent-7', revision: 1 }));
  assert.equal(c.snapshot?.sessionId, 'agent-7', 'an active session is followed while ours is inactive');
  // ...but a third live debug session is neither followed nor shown.
  conn.notify('debug/stateChanged', snapshot({ sessionId: 'agent-8', revision: 9 }));
  assert.equal(c.snapshot?.sessionId, 'agent-7', 'not switched away from an active one');
  conn.notify('turn/stateChanged', { sessionId: 'agent-8', state: 'working', label: 'working…' });
  conn.notify('progress/changed', { sessionId: 'agent-8', bubble: { kind: 'activity', title: 'Y' } });
  assert.equal(c.turn?.state, 'thinking', 'the other debug session’s turn is not ours');
  assert.equal(c.bubble?.title, 'X');
  conn.notify('turn/stateChanged', { sessionId: 'agent-7', state: 'streaming', label: 'streaming…' });
  assert.equal(c.turn?.state, 'streaming');
  // Once agent-8's session ends, its agent may be this window's again.
  conn.notify('debug/stateChanged', { ...inactive(10), sessionId: 'agent-8' });
  conn.notify('turn/stateChanged', { sessionId: 'agent-8', state: 'idle', label: 'idle' });
  assert.equal(c.turn?.state, 'idle');
});

test('a command’s answer older than a notification already applied does not roll the state back', async () => {
  const { state, rec, conns, c } = setup(userTurn({ revision: 5 }));
  await c.startServer();
  const conn = conns[0]!;
  // Proceed is answered with revision 6, but the agent's process already moved to 7 (handed
  // over again) and that notification arrived first.
  conn.answers['debug/proceed'] = async () => {
    conn.notify('debug/stateChanged', userTurn({ revision: 7, round: 2, steps: ['Again.'] }));
    return snapshot({ revision: 6, round: 2 });
  };
  state.snap = userTurn({ revision: 7, round: 2, steps: ['Again.'] });
  await c.proceed();
  assert.equal(c.snapshot?.revision, 7);
  assert.match(rec.status?.text ?? '', /your turn · round 2/);
  assert.equal(rec.prompts.length, 2);
});

test('two starts at once share one process; a restart during a start wins', async () => {
  const { conns, c } = setup(snapshot());
  const [a, b] = await Promise.all([c.startServer(), c.startServer()]);
  assert.deepEqual([a, b], [true, true]);
  assert.equal(conns.length, 1, 'one sidecar');
  await c.stopServer();
  const first = c.startServer();
  const second = c.restart();
  assert.equal(await second, true);
  assert.equal(await first, false, 'the start overtaken by the restart gives way');
  assert.equal(c.server, 'running');
  assert.ok(conns[1]!.stopped, 'the overtaken process was stopped');
  assert.equal(conns.length, 3);
});

test('the legal commands follow the snapshot, and none while the sidecar is down', async () => {
  const { rec, conns, c } = setup(userTurn());
  assert.deepEqual(rec.commands, { running: false, legal: [] });
  await c.startServer();
  assert.deepEqual(rec.commands, { running: true, legal: ['proceed', 'done', 'abort'] });
  conns[0]!.notify('debug/stateChanged', snapshot({ revision: 6 }));
  assert.deepEqual(rec.commands, { running: true, legal: ['done', 'abort'] });
  conns[0]!.crash({ code: 1 });
  assert.deepEqual(rec.commands, { running: false, legal: [] });
});

test('a crash is reported once with Restart; a request cut by it adds no second message; restart reloads', async () => {
  const { state, rec, conns, c } = setup(userTurn());
  await c.startServer();
  assert.equal(rec.prompts.length, 1);
  const conn = conns[0]!;
  // The pending request is rejected before the process exit is known (the pipe closed first).
  conn.answers['debug/proceed'] = () => Promise.reject({ code: -32097, message: 'Pending response rejected since connection got disposed' });
  assert.equal(await c.proceed(), null);
  assert.equal(rec.messages.length, 0, 'the cut request itself says nothing');
  conn.crash({ code: null, signal: 'SIGKILL' });
  assert.equal(c.server, 'stopped');
  assert.equal(rec.messages.length, 1, JSON.stringify(rec.messages));
  assert.match(rec.messages[0]!.text, /^debug-sidecar stopped \(killed by SIGKILL\)/);
  assert.deepEqual(rec.messages[0]!.actions.map((a) => a.command), ['debugSidecar.restart']);
  assert.match(rec.status?.text ?? '', /debug-sidecar stopped/);

  // Commands while stopped say so instead of failing silently.
  assert.equal(await c.markFixed(), null);
  assert.match(rec.messages.at(-1)!.text, /debug-sidecar stopped/);

  state.snap = userTurn({ revision: 5 });
  assert.ok(await c.restart());
  assert.equal(conns.length, 2);
  assert.equal(c.server, 'running');
  assert.match(rec.status?.text ?? '', /your turn · round 1/);
  assert.equal(rec.prompts.length, 1, 'the same hand-off is not announced again after a restart');
});

test('a stop on purpose is not a crash', async () => {
  const { rec, conns, c } = setup(snapshot());
  await c.startServer();
  await c.stopServer();
  conns[0]!.crash({ code: 0 });
  assert.equal(rec.messages.length, 0);
  assert.ok(conns[0]!.stopped);
});

test('a launcher that cannot find the binary marks it missing with a clear message', async () => {
  const rec = new RecordingUi();
  const c = new SidecarController(
    async () => {
      throw Object.assign(new Error('spawn /nope ENOENT'), { code: 'ENOENT' });
    },
    rec.ui,
    { binaryPath: () => '/nope/debug-sidecar' },
  );
  assert.equal(await c.startServer(), false);
  assert.equal(c.server, 'missing');
  assert.match(rec.messages[0]?.text ?? '', /^debug-sidecar was not found \(`\/nope\/debug-sidecar`\)/);
  assert.match(rec.status?.text ?? '', /not found/);
  assert.equal(await c.start('x'), null);
  assert.match(rec.messages.at(-1)?.text ?? '', /was not found/);
});

test('an empty problem is refused before reaching the sidecar', async () => {
  const { rec, conns, c } = setup(inactive());
  await c.startServer();
  assert.equal(await c.start('   '), null);
  assert.ok(!conns[0]!.calls.some((x) => x.method === 'debug/start'));
  assert.match(rec.messages.at(-1)?.text ?? '', /Describe the problem/);
});

test('background work queued before a stop on purpose stays quiet', async () => {
  const { rec, conns, c } = setup(snapshot());
  await c.startServer();
  const conn = conns[0]!;
  conn.notify('debug/logAppended', { sessionId: 'default', run: 'r1-abc', lines: 2, cursor: '0:0' });
  conn.notify('debug/stateChanged', snapshot({ revision: 2 }));
  const stopping = c.stopServer();
  await stopping;
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(rec.messages, []);
  assert.ok(!conn.calls.some((x) => x.method === 'debug/logs'), 'nothing was sent after the stop');
});

test('a log notification pulls pages from its cursor and shows each line once', async () => {
  const { rec, conns, c } = setup(snapshot());
  await c.startServer();
  const conn = conns[0]!;
  const page = (lines: number[], next: string | null) => ({
    run: 'r1-abc',
    entries: lines.map((line) => ({ line, entry: { probeId: 'p1', message: `m${line}` } })),
    nextCursor: next,
    total: 3,
    malformed: { count: 0, lines: [] },
    oversized: [],
  });
  conn.answers['debug/logs'] = (params) => {
    const cursor = (params as { cursor?: string }).cursor;
    return cursor === '0:0' ? page([1, 2], 'c2') : cursor === 'c2' ? page([3], null) : page([1, 2, 3], null);
  };
  conn.notify('debug/logAppended', { sessionId: 'default', run: 'r1-abc', lines: 3, cursor: '0:0' });
  await rec.until('three lines', () => rec.output.length === 4);
  assert.deepEqual(conn.calls.filter((x) => x.method === 'debug/logs').map((x) => x.params), [
    { limit: 500, run: 'r1-abc', cursor: '0:0' },
    { limit: 500, run: 'r1-abc', cursor: 'c2' },
  ]);
  conn.notify('debug/logAppended', { sessionId: 'default', run: 'r1-abc', lines: 3, cursor: '0:0' });
  assert.equal(await c.showLogs(), 3);
  assert.equal(rec.output.length, 4, 'nothing twice');
  assert.equal(conn.calls.filter((x) => x.method === 'debug/logs').length, 3, 'an announcement of lines already shown is not fetched');
});

test('a late announcement of the previous run does not flip the output back to it', async () => {
  const { rec, conns, c } = setup(snapshot({ runId: 'r2-def', round: 2 }));
  await c.startServer();
  const conn = conns[0]!;
  conn.notify('debug/logAppended', { sessionId: 'default', run: 'r1-abc', lines: 4, cursor: '0:0' });
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(!conn.calls.some((x) => x.method === 'debug/logs'), 'the old run is not read');
  assert.deepEqual(rec.output, []);
});

test('a Proceed pressed here says who wakes the agent, then that it was woken', async () => {
  const { rec, conns, c } = setup(userTurn({ revision: 5 }));
  assert.ok(await c.startServer());
  const conn = conns[0]!;
  const waiting = 'Waking the agent in Claude Code: it starts reading run r1-a once its turn is free.';
  conn.answers['debug/proceed'] = () => ({
    ...snapshot({ revision: 6, round: 2 }),
    kickoff: 'Round 2.',
    wake: { state: 'waiting', wakers: ['claude-code'], revision: 6, message: waiting },
  });
  await c.proceed();
  assert.ok(rec.messages.some((m) => m.text === waiting), 'who wakes the agent is said');
  // Another window's wake is not this one's news.
  conn.notify('debug/wakeChanged', { sessionId: 'default', revision: 4, state: 'delivered', by: 'pi', message: 'old' });
  assert.ok(!rec.messages.some((m) => m.text === 'old'));
  const woken = 'The agent is reading run r1-a (woken in Claude Code).';
  conn.notify('debug/wakeChanged', { sessionId: 'default', revision: 6, state: 'delivered', by: 'claude-code', message: woken });
  assert.equal(rec.messages.filter((m) => m.text === woken).length, 1);
  conn.notify('debug/wakeChanged', { sessionId: 'default', revision: 6, state: 'delivered', by: 'claude-code', message: woken });
  assert.equal(rec.messages.filter((m) => m.text === woken).length, 1, 'said once');
});
