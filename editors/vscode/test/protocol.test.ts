// The protocol suite: the extension's controller over vscode-jsonrpc against the real
// binary ($DEBUG_SIDECAR_BIN), each test in a fresh temp workspace. The agent is played by
// a second `debug-sidecar serve` on the same workspace (as an agent's own process would be)
// and by turn/progress events on the extension's connection.
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { nodeFileProbe, resolveBinary } from '../src/model/binary';
import type { Snapshot } from '../src/model/protocol';
import { SidecarController, type SidecarConnection } from '../src/session';
import { Capture } from './support/capture';
import { spawnLauncher, type LauncherHandle } from './support/launcher';
import { RecordingUi } from './support/recorder';
import { binary, insertBefore, makeWorkspace, CHECKOUT } from './support/workspace';

const BIN = binary();

/** Keep what the person saw (out/capture/<name>.txt); SHOW_CAPTURE=1 prints it too. */
function saveCapture(name: string, cap: Capture): void {
  const dir = path.join(__dirname, '..', 'capture');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.txt`), cap.text());
  if (process.env['SHOW_CAPTURE']) process.stdout.write(`\n${cap.text()}`);
}
const PROBLEM = 'Checkout total ignores the 3-item discount.';

interface Rig {
  ws: ReturnType<typeof makeWorkspace>;
  ext: LauncherHandle;
  rec: RecordingUi;
  c: SidecarController;
  agent: SidecarConnection;
  /** Send an agent-side notification (turn/event, progress/*) on the extension's own process. */
  notifyExt(method: string, params: object): Promise<void>;
  /** Send a notification on the agent's own process (agents/event, as a harness's extension does). */
  notifyAgent(method: string, params: object): Promise<void>;
}

async function rig(t: TestContext, opts: { agent?: boolean } = {}): Promise<Rig> {
  const ws = makeWorkspace();
  const ext = spawnLauncher(BIN, ws.dir);
  const agentHandle = spawnLauncher(BIN, ws.dir);
  const rec = new RecordingUi();
  const c = new SidecarController(ext.launcher, rec.ui, { binaryPath: () => BIN, ledgerDelayMs: 20 });
  t.after(async () => {
    await c.dispose().catch(() => undefined);
    await ext.killAll();
    await agentHandle.killAll();
    ws.cleanup();
  });
  assert.equal(await c.startServer(), true);
  const agent = opts.agent === false ? (null as unknown as SidecarConnection) : await agentHandle.launcher();
  return {
    ws,
    ext,
    rec,
    c,
    agent,
    notifyExt: async (method, params) => {
      const s = ext.spawned.at(-1);
      assert.ok(s);
      await s.connection.sendNotification(method, params);
    },
    notifyAgent: async (method, params) => {
      const s = agentHandle.spawned.at(-1);
      assert.ok(s);
      await s.connection.sendNotification(method, params);
    },
  };
}

/** The agent places probe `hyp` before line `before` of checkout.sh and reports the edit. */
async function placeProbe(r: Rig, hyp: string, before: number, message: string, variables: string[]): Promise<string> {
  const res = await r.agent.sendRequest<{ probe: { id: string }; snippet: string }>('debug/probeSnippet', {
    file: 'checkout.sh',
    hypothesisId: hyp,
    message,
    variables,
  });
  insertBefore(r.ws.file('checkout.sh'), before, res.snippet);
  return res.probe.id;
}

test('a whole session as the extension shows it', async (t) => {
  const r = await rig(t);
  const { rec, c } = r;
  const cap = new Capture(rec);
  cap.step('VS Code opens the folder; the extension starts `debug-sidecar serve`');
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: off');

  // Debug Mode: Start (asks for the problem).
  const started = await c.start(PROBLEM);
  assert.equal(started?.stage, 'investigating');
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: agent investigating · round 1');
  assert.match(rec.messages.at(-1)?.text ?? '', /^Debug Mode started \(round 1\)/);
  cap.step('Debug Mode: Start → "Checkout total ignores the 3-item discount."');

  // The agent's turn: the five labels, a spinner while busy, progress while a bubble is live.
  await r.notifyExt('turn/event', { kind: 'turnStart', source: 'user' });
  await rec.until('connecting…', () => rec.status?.text.startsWith('$(sync~spin) connecting… | Debug: agent investigating') === true);
  await r.notifyExt('turn/event', { kind: 'reasoning' });
  await rec.until('thinking…', () => rec.status?.text === '$(sync~spin) thinking… | Debug: agent investigating · round 1');
  await r.notifyExt('progress/todos', {
    todos: [
      { content: 'Read the checkout code', status: 'completed' },
      { content: 'Add probes', activeForm: 'Adding probes', status: 'in_progress' },
      { content: 'Hand over for reproduction', status: 'pending' },
    ],
  });
  await rec.until('progress', () => rec.status?.text === '$(sync~spin) thinking… | Debug: agent investigating · round 1 | 33% 1/3 Adding probes');
  assert.equal(rec.status?.busy, true);
  cap.step('the agent thinks, with a todo list');

  await r.agent.sendRequest('debug/recordHypotheses', {
    hypotheses: [
      { id: 'H1', statement: 'The discount check uses -gt instead of -ge.', status: 'open' },
      { id: 'H2', statement: 'The item count is off by one.', status: 'open' },
    ],
  });
  const p1 = await placeProbe(r, 'H1', 6, 'count before the discount check', ['count']);
  await r.notifyExt('turn/event', { kind: 'toolCall', tool: 'Edit' });
  await rec.until('working…', () => rec.status?.text.startsWith('$(sync~spin) working… ') === true);
  // The edit makes the sidecar rescan; the tree shows the probe live at its line.
  await rec.until('p1 live in the tree', () => rec.ledgerNodes.some((n) => n.id === `probe:${p1}` && n.marker === 'live'));
  assert.equal(rec.ledgerText(), `checkout.sh:6  ${p1} · H1`);
  assert.deepEqual(rec.ledgerNodes[0]?.location, { file: 'checkout.sh', line: 6 });
  const line6 = fs.readFileSync(r.ws.file('checkout.sh'), 'utf8').split('\n')[5];
  assert.match(line6 ?? '', new RegExp(`#region debug-probe ${p1}`), 'the tree location is the start marker');
  cap.step('the agent records hypotheses and places a probe');

  // Hand-off from the agent's own process: the extension learns it through the state dir.
  await r.agent.sendRequest('debug/handOff', {
    mode: 'reproduce',
    steps: ['Run `sh checkout.sh 1000 2000 3000`.', 'Check the printed total.'],
  });
  await r.notifyExt('turn/event', { kind: 'turnEnd' });
  await rec.until('the hand-off notification', () => rec.prompts.length === 1);
  await rec.until('idle, your turn', () => rec.status?.text === '$(debug-alt) idle | Debug: your turn · round 1');
  const prompt = rec.prompts[0]!;
  assert.equal(
    prompt.message,
    'Your turn: reproduce the problem (round 1). 1. Run `sh checkout.sh 1000 2000 3000`. 2. Check the printed total. Then press Proceed, or Mark fixed if the bug is gone.',
  );
  assert.deepEqual(prompt.buttons.map((b) => b.title), ['Proceed', 'Mark fixed']);
  cap.step('the agent hands the round over');

  // The person reproduces: the probe writes to the run log; the output channel shows it.
  const out = cp.execFileSync('sh', ['checkout.sh', '1000', '2000', '3000'], { cwd: r.ws.dir, encoding: 'utf8' });
  assert.equal(out.trim(), '6000');
  await rec.until('the log line in the output channel', () => rec.output.some((l) => l.includes(`${p1} [H1] checkout.sh count before the discount check {"count":"3"}`)));
  assert.match(rec.output[0] ?? '', /^── run r1-/);
  cap.step('the person runs the steps; the probe line arrives');
  // "Show Run Logs" re-reads every page and adds nothing twice.
  const outputBefore = rec.output.length;
  assert.equal(await c.showLogs(), 1);
  assert.equal(rec.output.length, outputBefore);

  // The button: Proceed.
  await c.runAction(prompt.buttons[0]!.action);
  assert.equal(c.snapshot?.stage, 'investigating');
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: agent investigating · round 2');
  cap.step('the person presses Proceed');

  // Round 2: the agent fixes the check and hands over for verification.
  fs.writeFileSync(
    r.ws.file('checkout.sh'),
    fs.readFileSync(r.ws.file('checkout.sh'), 'utf8').replace('"$count" -gt 3', '"$count" -ge 3'),
  );
  await r.agent.sendRequest('debug/recordHypotheses', {
    hypotheses: [{ id: 'H1', statement: 'The discount check uses -gt instead of -ge.', status: 'confirmed', evidence: [`${p1}: count=3`] }],
  });
  await r.agent.sendRequest('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1000 2000 3000` again; it should print 5400.'] });
  await rec.until('the round-2 notification', () => rec.prompts.length === 2);
  assert.match(rec.prompts[1]!.message, /^Your turn: reproduce the problem \(round 2\)\. 1\. Run `sh checkout\.sh 1000 2000 3000` again; it should print 5400\./);
  assert.equal(cp.execFileSync('sh', ['checkout.sh', '1000', '2000', '3000'], { cwd: r.ws.dir, encoding: 'utf8' }).trim(), '5400');
  await rec.until('the round-2 run in the output', () => rec.output.some((l) => l.startsWith('── run r2-')) && rec.output.some((l) => /^#1 .*"count":"3"/.test(l) && rec.output.indexOf(l) > rec.output.findIndex((x) => x.startsWith('── run r2-'))));
  cap.step('the fix is in; round 2 is handed over for verification');

  // The button: Mark fixed. The agent cleans up; the session ends when no probe is left.
  await c.runAction(rec.prompts[1]!.buttons.find((b) => b.title === 'Mark fixed')!.action);
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: cleaning up · round 2');
  cap.step('the person presses Mark fixed');
  const fixed = fs.readFileSync(r.ws.file('checkout.sh'), 'utf8').replace(/^.*#region debug-probe[\s\S]*?#endregion debug-probe \S+\n/m, '');
  assert.equal(fixed, CHECKOUT.replace('"$count" -gt 3', '"$count" -ge 3'));
  fs.writeFileSync(r.ws.file('checkout.sh'), fixed);
  const stop = await r.agent.sendRequest<{ decision: string; notice: string | null }>('debug/stop', {});
  assert.equal(stop.decision, 'allow', JSON.stringify(stop));
  await rec.until('the session ends', () => rec.status?.text === '$(debug-alt) idle | Debug: off');
  await rec.until('the empty ledger', () => rec.ledgerNodes.length === 0);
  const report = await c.checkLeftovers();
  assert.deepEqual(report, { clean: true, message: 'No leftover probes: the workspace scan found no probe markers.' });
  cap.step('the agent removes the probe; Check for Leftover Probes');
  saveCapture('1-session', cap);

  // The next debug session starts with an empty run log: the last session's lines are gone.
  assert.ok(rec.output.some((l) => l.startsWith('── run r2-')));
  const clearsBefore = rec.events.filter((e) => e.kind === 'clearLog').length;
  await c.start('The total is wrong for 4 items.');
  assert.equal(rec.events.filter((e) => e.kind === 'clearLog').length, clearsBefore + 1);
  assert.deepEqual(rec.output, []);
  // A restart of the sidecar mid-session is not a new session: nothing is cleared.
  await c.restart();
  assert.equal(rec.events.filter((e) => e.kind === 'clearLog').length, clearsBefore + 1);
});

/** Run `debug-sidecar hook claude <event>` as Claude Code would (JSON on stdin, cwd = workspace). */
function claudeHook(ws: string, session: string, event: string, extra: object = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const input = JSON.stringify({ session_id: session, transcript_path: path.join(ws, 'transcript.jsonl'), cwd: ws, hook_event_name: event, ...extra });
  return new Promise((resolve, reject) => {
    const child = cp.spawn(BIN, ['hook', 'claude', event], { cwd: ws, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ stdout, stderr, code }));
    child.stdin.end(input);
  });
}

test('the agent’s turn reported by its hooks (another process) shows in the status bar', async (t) => {
  const r = await rig(t);
  const { rec, c, ws } = r;
  // Claude Code's hooks name Claude's own session, not the editor's debug session; they act
  // on the workspace's latest debug session all the same.
  const claude = 'claude-7f3c';
  const hook = async (event: string, extra: object = {}): Promise<string> => {
    const res = await claudeHook(ws.dir, claude, event, extra);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '', `hook ${event} complained`);
    return res.stdout;
  };
  const cap = new Capture(rec);
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: off');

  // No debug session yet: the status bar still shows what the agent is doing.
  await hook('UserPromptSubmit', { prompt: 'Why is the checkout total wrong?' });
  await rec.until('connecting… from the hook', () => rec.status?.text === '$(sync~spin) connecting… | Debug: off');
  assert.equal(rec.status?.busy, true);
  cap.step('the person sends Claude Code a prompt (hook UserPromptSubmit)');
  await hook('PreToolUse', { tool_name: 'Edit', tool_input: {} });
  await rec.until('working… from the hook', () => rec.status?.text === '$(sync~spin) working… | Debug: off');
  await hook('PostToolUse', {
    tool_name: 'TodoWrite',
    tool_input: {
      todos: [
        { content: 'Read the checkout code', status: 'completed', activeForm: 'Reading the checkout code' },
        { content: 'Find the bug', status: 'in_progress', activeForm: 'Finding the bug' },
      ],
    },
  });
  await rec.until('the todo progress from the hook', () => rec.status?.text === '$(sync~spin) working… | Debug: off | 50% 1/2 Finding the bug');
  cap.step('Claude edits and writes a todo list (hooks PreToolUse, PostToolUse)');
  await hook('Stop', { stop_hook_active: false, last_assistant_message: 'Done.' });
  // The turn ends; the todo bubble goes with it (the sidecar shows it while a turn runs).
  await rec.until('idle after Stop', () => rec.status?.text === '$(debug-alt) idle | Debug: off');
  assert.equal(rec.status?.busy, false);
  cap.step('Claude stops (hook Stop)');

  // With a debug session started in the editor, the hooks' turn still reaches the status bar.
  await c.start(PROBLEM);
  await hook('UserPromptSubmit', { prompt: 'go on' });
  await rec.until('connecting… during the session', () => rec.status?.text.startsWith('$(sync~spin) connecting… | Debug: agent investigating · round 1') === true);
  await hook('PreToolUse', { tool_name: 'Read', tool_input: {} });
  await rec.until('working… during the session', () => rec.status?.text.startsWith('$(sync~spin) working… | Debug: agent investigating · round 1') === true);
  cap.step('Debug Mode: Start, then Claude works (hooks UserPromptSubmit, PreToolUse)');
  // Stopping without handing the round over sends Claude back (as guidance,
  // `additionalContext`, which Claude Code runs the model on): its turn goes on.
  const blocked = JSON.parse(await hook('Stop', { stop_hook_active: false, last_assistant_message: 'Looked around.' }));
  assert.equal(blocked.decision, undefined);
  assert.match(blocked.hookSpecificOutput.additionalContext, /hand_off_to_user/);
  assert.ok(rec.status?.text.startsWith('$(sync~spin) working… | Debug: agent investigating · round 1'), rec.status?.text);
  cap.step('Claude stops without handing off (hook Stop): sent back, still working');
  await r.agent.sendRequest('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1000 2000 3000`.'] });
  assert.equal(await hook('Stop', { stop_hook_active: true }), '');
  // The turn's end retires its progress bubble.
  await rec.until('idle, your turn', () => rec.status?.text === '$(debug-alt) idle | Debug: your turn · round 1');
  cap.step('Claude hands off, then stops (hook Stop)');
  assert.deepEqual(rec.messages.filter((m) => m.severity !== 'info'), [], 'nothing went wrong on the way');
  saveCapture('5-hooks', cap);
});

test('the tree marks missing and foreign probes; leftovers and abort name them', async (t) => {
  const r = await rig(t);
  const { rec, c } = r;
  await c.start(PROBLEM);
  const p1 = await placeProbe(r, 'H1', 6, 'count', ['count']);
  const p2 = await placeProbe(r, 'H2', 3, 'args', ['count']);
  let nodes = await c.refreshLedger(true);
  assert.deepEqual(nodes?.map((n) => n.marker), ['live', 'live']);

  // p2 deleted by hand; a Cursor block pasted elsewhere; half of a block left behind.
  const text = fs.readFileSync(r.ws.file('checkout.sh'), 'utf8');
  fs.writeFileSync(r.ws.file('checkout.sh'), text.replace(new RegExp(`^.*#region debug-probe ${p2}[\\s\\S]*?#endregion debug-probe ${p2}\\n`, 'm'), ''));
  fs.writeFileSync(r.ws.file('app.js'), "// #region agent log\nfetch('http://127.0.0.1:7242/ingest/abc', {});\n// #endregion\n");
  fs.writeFileSync(r.ws.file('half.sh'), `echo hi\n# #region debug-probe p77 ${c.snapshot?.sessionId}\necho there\n`);

  nodes = await c.refreshLedger(true);
  assert.ok(nodes);
  const byId = (id: string) => nodes!.find((n) => n.id === `probe:${id}`);
  assert.equal(byId(p1)?.marker, 'live');
  assert.equal(byId(p2)?.marker, 'missing');
  assert.match(byId(p2)?.description ?? '', /MISSING from disk/);
  const foreign = nodes.filter((n) => n.marker === 'foreign');
  assert.ok(foreign.some((n) => n.location?.file === 'app.js' && n.location.line === 1), rec.ledgerText());
  const half = nodes.filter((n) => n.marker === 'halfRemoved');
  assert.deepEqual(half.map((n) => n.location), [{ file: 'half.sh', line: 2 }], rec.ledgerText());
  assert.equal(rec.ledgerNodes, nodes, 'the tree got the same rows');

  const leftover = await c.checkLeftovers();
  assert.equal(leftover?.clean, false);
  assert.match(leftover?.message ?? '', new RegExp(`${p1} at checkout\\.sh:\\d+`));
  assert.match(leftover?.message ?? '', /app\.js:1/);
  assert.match(leftover?.message ?? '', /half-removed p77 at half\.sh:2/);
  assert.deepEqual(rec.messages.at(-1)?.actions.map((a) => a.title), ['Show Probe Ledger']);

  const aborted = await c.abort();
  assert.ok(aborted);
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: off');
  assert.ok(aborted.leftoverProbes.some((p) => p.id === p1));
  assert.match(rec.messages.at(-1)?.text ?? '', new RegExp(`^Debug session aborted\\. \\d probe\\(s\\) are still in your files: .*${p1} at checkout\\.sh:`));
});

test('subagents the agent’s process reports show in the Subagents view, as they change', async (t) => {
  const r = await rig(t);
  const { rec } = r;
  // The records oh-my-pi's subagents become (lab: omp: subagents reach the records).
  for (const event of [
    { id: 'Alpha', kind: 'queued', type: 'task', description: 'CHILDA count the items' },
    { id: 'Beta', kind: 'queued', type: 'task', description: 'CHILDB read the config' },
    { id: 'Alpha', kind: 'running' },
    { id: 'Beta', kind: 'running' },
    { id: 'Alpha', kind: 'update', toolUses: 2, turns: 1 },
    { id: 'Beta', kind: 'update', question: 'Which file holds the config?' },
  ]) {
    await r.notifyAgent('agents/event', event);
  }
  await rec.until('both running, Beta asking', () =>
    rec.agentNodes.length === 2 && rec.agentNodes[1]!.description.startsWith('asks a question'),
  );
  assert.deepEqual(rec.agentNodes.map((n) => n.label), ['Alpha', 'Beta']);
  assert.equal(rec.agentNodes[0]!.description, 'running · task · 2 tools · 1 turn');
  await r.notifyAgent('agents/event', { id: 'Alpha', kind: 'completed', result: 'Alpha counted 3 items' });
  await r.notifyAgent('agents/event', { id: 'Beta', kind: 'error', error: 'Beta could not read config.toml' });
  await rec.until('both ended', () => rec.agentNodes.every((n) => n.icon === 'pass' || n.icon === 'error'));
  assert.deepEqual(
    rec.agentNodes.map((n) => [n.label, n.icon]),
    [['Alpha', 'pass'], ['Beta', 'error']],
  );
  assert.match(rec.agentNodes[0]!.tooltip, /Result: Alpha counted 3 items/);
  assert.match(rec.agentNodes[1]!.tooltip, /Error: Beta could not read config.toml/);
  // The person marks the moment; the run says where (no session: refused).
  assert.equal(await r.c.mark('too early'), null);
  assert.ok(await r.c.start(PROBLEM));
  const mark = await r.c.mark('  it froze right after Save ');
  assert.ok(mark, JSON.stringify(rec.messages));
  assert.match(rec.messages.at(-1)?.text ?? '', /^Marked "it froze right after Save" at line \d+ of run r1-/);
  // A restarted sidecar reads them back (`agents/list`).
  assert.equal(await r.c.restart(), true);
  await rec.until('read back', () => rec.agentNodes.length === 2);
  assert.deepEqual(rec.agentNodes.map((n) => n.icon), ['pass', 'error']);
});

test('an illegal command shows the server’s own message, and nothing changes', async (t) => {
  const r = await rig(t, { agent: false });
  const { rec, c } = r;
  const raw = r.ext.spawned[0]!.connection;
  const serverSays = async (method: string, params: object): Promise<string> => {
    try {
      await raw.sendRequest(method, params);
    } catch (e) {
      assert.equal((e as { code: number }).code, -32050);
      return (e as Error).message;
    }
    throw new Error(`${method} was accepted`);
  };

  const cap = new Capture(rec);
  assert.equal(await c.proceed(), null);
  cap.step('Debug Mode: Proceed with no session');
  assert.equal(rec.messages.at(-1)?.text, 'Cannot proceed: no debug session is active; start one first. Possible now: start.');
  assert.equal(rec.messages.at(-1)?.severity, 'warning');
  assert.equal(rec.messages.at(-1)?.text, await serverSays('debug/proceed', {}));

  await c.start(PROBLEM);
  const rev = c.snapshot?.revision;
  assert.equal(await c.start('Another problem.'), null);
  cap.step('Debug Mode: Start while a session is active');
  assert.match(rec.messages.at(-1)?.text ?? '', /^Cannot start a debug session: a debug session is already active \(stage investigating\)/);
  assert.equal(rec.messages.at(-1)?.text, await serverSays('debug/start', { problem: 'Another problem.' }));
  const status = await raw.sendRequest<Snapshot>('debug/status', {});
  assert.equal(status.revision, rev, 'refused commands change nothing');
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: agent investigating · round 1');
  saveCapture('3-illegal', cap);
});

test('the sidecar crashes mid-session: the client says so, and a restart picks the session up', async (t) => {
  const r = await rig(t);
  const { rec, c } = r;
  await c.start(PROBLEM);
  await r.agent.sendRequest('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1 2 3`.'] });
  await rec.until('your turn', () => rec.status?.text === '$(debug-alt) idle | Debug: your turn · round 1');
  assert.equal(rec.prompts.length, 1);
  const first = r.ext.spawned[0]!;
  const messagesBefore = rec.messages.length;
  const cap = new Capture(rec);
  cap.step('the round is with the person');

  first.child.kill('SIGKILL');
  await rec.until('the stopped message', () => rec.messages.length > messagesBefore);
  const msg = rec.messages.at(-1)!;
  assert.equal(msg.severity, 'error');
  assert.equal(msg.text, 'debug-sidecar stopped (killed by SIGKILL). The debug session is saved in the workspace; run Debug Mode: Restart Sidecar to pick it up again.');
  assert.deepEqual(msg.actions, [{ title: 'Restart', command: 'debugSidecar.restart' }]);
  cap.step('the sidecar process is killed (SIGKILL)');
  assert.equal(rec.status?.text, '$(error) debug-sidecar stopped');
  assert.equal(rec.status?.command, 'debugSidecar.restart');
  // A command while it is down says so instead of hanging.
  assert.equal(await c.proceed(), null);
  assert.match(rec.messages.at(-1)?.text ?? '', /^debug-sidecar stopped\./);
  cap.step('Debug Mode: Proceed while it is down');
  assert.equal(rec.messages.length, messagesBefore + 2, 'one crash message, one for the refused command');

  // The Restart button.
  assert.equal(await c.restart(), true);
  assert.equal(r.ext.spawned.length, 2);
  const second = r.ext.spawned[1]!;
  assert.notEqual(second.child.pid, first.child.pid);
  assert.equal(c.snapshot?.stage, 'user_turn');
  assert.equal(c.snapshot?.round, 1);
  assert.deepEqual(c.snapshot?.steps, ['Run `sh checkout.sh 1 2 3`.']);
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: your turn · round 1');
  assert.equal(rec.prompts.length, 1, 'the hand-off is not announced twice');
  cap.step('the person presses Restart');
  saveCapture('2-crash', cap);

  // The new process serves the session: Proceed works and notifications flow again.
  await c.proceed();
  assert.equal(rec.status?.text, '$(debug-alt) idle | Debug: agent investigating · round 2');
  await r.notifyExt('turn/event', { kind: 'turnStart', source: 'continuation' });
  await rec.until('turn state from the new process', () => rec.status?.text.startsWith('$(sync~spin) connecting…') === true);

  // A crash while a request is in flight: still one clear message.
  const n = rec.messages.length;
  const pending = c.refreshLedger(true);
  second.child.kill('SIGKILL');
  await pending;
  await rec.until('the second stopped message', () => rec.messages.length > n);
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(rec.messages.length, n + 1, JSON.stringify(rec.messages.slice(n)));
  assert.match(rec.messages.at(-1)!.text, /^debug-sidecar stopped/);
});

test('the sidecar binary is missing or not executable', async (t) => {
  const ws = makeWorkspace();
  t.after(() => ws.cleanup());

  // What the extension resolves before it launches (default name, not on PATH).
  const resolved = resolveBinary('debug-sidecar', { PATH: ws.dir }, ws.dir, nodeFileProbe(fs));
  assert.deepEqual(resolved, { ok: false, reason: 'missing', path: 'debug-sidecar' });
  assert.deepEqual(resolveBinary(BIN, { PATH: '' }, ws.dir, nodeFileProbe(fs)), { ok: true, path: BIN });

  // And what the person sees when the launch itself fails.
  const missing = path.join(ws.dir, 'no-such-dir', 'debug-sidecar');
  const h = spawnLauncher(missing, ws.dir);
  const rec = new RecordingUi();
  const c = new SidecarController(h.launcher, rec.ui, { binaryPath: () => missing });
  assert.equal(await c.startServer(), false);
  assert.equal(c.server, 'missing');
  assert.equal(rec.messages.length, 1);
  assert.equal(
    rec.messages[0]!.text,
    `debug-sidecar was not found (\`${missing}\`). Install it (\`cargo install --path .\` in the debug-sidecar repository) or set "debugSidecar.path" in the User settings to its absolute path, then run Debug Mode: Restart Sidecar.`,
  );
  assert.deepEqual(rec.messages[0]!.actions.map((a) => a.title), ['Open Settings', 'Restart']);
  assert.equal(rec.status?.text, '$(error) debug-sidecar not found');
  const cap = new Capture(rec);
  cap.step('debugSidecar.path points nowhere');
  saveCapture('4-missing', cap);
  assert.equal(await c.start(PROBLEM), null, 'commands say the binary is missing');
  assert.match(rec.messages.at(-1)!.text, /^debug-sidecar was not found/);

  const notExec = ws.file('debug-sidecar');
  fs.writeFileSync(notExec, '#!/bin/sh\n');
  fs.chmodSync(notExec, 0o644);
  const rec2 = new RecordingUi();
  const c2 = new SidecarController(spawnLauncher(notExec, ws.dir).launcher, rec2.ui, { binaryPath: () => notExec });
  assert.equal(await c2.startServer(), false);
  assert.match(rec2.messages[0]?.text ?? '', /is not executable/);
  assert.equal(h.spawned.length, 0, 'no process was left behind');
});

test('a second window: Show Run Logs reads the run from pages alone', async (t) => {
  const r = await rig(t);
  const { c } = r;
  await c.start(PROBLEM);
  const p1 = await placeProbe(r, 'H1', 6, 'count', ['count']);
  for (let i = 0; i < 3; i++) cp.execFileSync('sh', ['checkout.sh', '1', '2', String(i)], { cwd: r.ws.dir });
  // Wait until the extension's process announced all three lines.
  await r.rec.until('three lines tailed', () => r.rec.output.filter((l) => l.includes(p1)).length === 3);

  const rec2 = new RecordingUi();
  const other = spawnLauncher(BIN, r.ws.dir);
  const c2 = new SidecarController(other.launcher, rec2.ui, { binaryPath: () => BIN });
  t.after(async () => {
    await c2.dispose();
    await other.killAll();
  });
  await c2.startServer();
  assert.equal(rec2.output.length, 0);
  assert.equal(await c2.showLogs(), 3);
  assert.deepEqual(rec2.output.slice(1).map((l) => l.replace(/^(#\d+) \S+/, '$1')), [
    `#1 ${p1} [H1] checkout.sh count {"count":"3"}`,
    `#2 ${p1} [H1] checkout.sh count {"count":"3"}`,
    `#3 ${p1} [H1] checkout.sh count {"count":"3"}`,
  ]);
  assert.equal(await c2.showLogs(), 3);
  assert.equal(rec2.output.length, 4, 'a second Show Run Logs adds nothing');
});

test('the extension\'s process exits cleanly on shutdown/exit', async (t) => {
  const r = await rig(t, { agent: false });
  const s = r.ext.spawned[0]!;
  await r.c.stopServer();
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.equal(r.rec.messages.length, 0, 'a stop on purpose is not reported as a crash');
});
