// extension.ts with the real LanguageClient (vscode-languageclient 11) and the real binary,
// under a stub of the `vscode` API (test/support/vscode-stub.ts): activation, commands,
// status bar, notification buttons, tree, output, crash + Restart, and a missing binary.
import './support/install-vscode-stub';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import { test } from 'node:test';
import * as ext from '../src/extension';
import { spawnLauncher } from './support/launcher';
import * as vscode from './support/vscode-stub';
import { binary, insertBefore, makeWorkspace } from './support/workspace';

const BIN = binary();
const rec = vscode.recorded;

async function until(what: string, pred: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; status: ${rec.status.text}; shown: ${JSON.stringify(rec.shown.slice(-3))}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Our own children that are debug-sidecar processes (Linux /proc), except the agent's. */
const agentPids = new Set<number>();
function sidecarChildren(): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(stat);
      if (m && m[3] === String(process.pid) && m[2] !== 'Z' && m[1]!.startsWith('debug-sidecar') && !agentPids.has(Number(d))) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

test('extension.ts drives the real sidecar through a LanguageClient', async (t) => {
  const ws = makeWorkspace();
  const agentHandle = spawnLauncher(BIN, ws.dir);
  const context = { subscriptions: [] as Array<{ dispose(): unknown }> };
  t.after(async () => {
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
    await agentHandle.killAll();
    for (const pid of sidecarChildren()) process.kill(pid, 'SIGKILL');
    ws.cleanup();
  });
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(ws.dir), name: 'ws', index: 0 }];
  vscode.setConfig('debugSidecar.path', BIN);

  ext.activate(context as never);
  await until('the status bar', () => rec.status.text === '$(debug-alt) idle | Debug: off');
  assert.equal(sidecarChildren().length, 1, 'one sidecar for the workspace');

  // Debug Mode: Start asks for the problem.
  rec.inputs.push('Checkout total ignores the 3-item discount.');
  await vscode.commands.executeCommand('debugSidecar.start');
  assert.equal(rec.status.text, '$(debug-alt) idle | Debug: agent investigating · round 1');
  assert.match(rec.shown.at(-1)?.text ?? '', /^Debug Mode started/);
  // The palette offers what the stage allows (package.json `when` clauses on these keys).
  assert.deepEqual(
    ['running', 'canStart', 'canProceed', 'canMarkFixed', 'canAbort'].map((k) => rec.context.get(`debugSidecar.${k}`)),
    [true, false, true, true, true],
  );

  // The agent (its own process) places a probe and hands over; the person clicks Proceed.
  const agent = await agentHandle.launcher();
  for (const s of agentHandle.spawned) if (s.child.pid) agentPids.add(s.child.pid);
  const sn = await agent.sendRequest<{ probe: { id: string }; snippet: string }>('debug/probeSnippet', { file: 'checkout.sh', hypothesisId: 'H1', message: 'count', variables: ['count'] });
  insertBefore(ws.file('checkout.sh'), 6, sn.snippet);
  rec.answer = (m) => (m.text.startsWith('Your turn') ? 'Proceed' : undefined);
  await agent.sendRequest('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1 2 3`.'] });
  await until('the hand-off notification', () => rec.shown.some((m) => m.text.startsWith('Your turn')));
  const note = rec.shown.find((m) => m.text.startsWith('Your turn'))!;
  assert.deepEqual(note.buttons, ['Proceed', 'Mark fixed']);
  assert.equal(note.text, 'Your turn: reproduce the problem (round 1). 1. Run `sh checkout.sh 1 2 3`. Then press Proceed, or Mark fixed if the bug is gone.');
  await until('round 2 after the Proceed button', () => rec.status.text === '$(debug-alt) idle | Debug: agent investigating · round 2');

  // Tree: Show Probe Ledger rescans; rows open their location.
  await vscode.commands.executeCommand('debugSidecar.showLedger');
  const rows = rec.tree!.getChildren().map((n) => rec.tree!.getTreeItem(n));
  assert.deepEqual(rows.map((r) => `${r.label}  ${r.description}`), [`checkout.sh:6  ${sn.probe.id} · H1`]);
  assert.equal(rows[0]?.command?.command, 'debugSidecar.openLocation');
  assert.deepEqual(rows[0]?.command?.arguments, [{ file: 'checkout.sh', line: 6 }]);

  // Output channel: the run's lines as they arrive.
  cp.execFileSync('sh', ['checkout.sh', '1', '2', '3'], { cwd: ws.dir });
  const runLog = (): string[] => rec.output.get('Debug Sidecar: Run Log') ?? [];
  await until('the log line', () => runLog().some((l) => l.includes(`${sn.probe.id} [H1] checkout.sh count {"count":"3"}`)));

  // Crash: the message offers Restart; pressing it starts a new process on the same session.
  const [pid] = sidecarChildren();
  assert.ok(pid);
  rec.answer = (m) => (m.text.startsWith('debug-sidecar stopped') ? 'Restart' : undefined);
  process.kill(pid, 'SIGKILL');
  await until('the crash message', () => rec.shown.some((m) => m.severity === 'error' && m.text.startsWith('debug-sidecar stopped')));
  const crash = rec.shown.find((m) => m.text.startsWith('debug-sidecar stopped'))!;
  assert.equal(crash.text, 'debug-sidecar stopped (killed by SIGKILL). The debug session is saved in the workspace; run Debug Mode: Restart Sidecar to pick it up again.');
  assert.deepEqual(crash.buttons, ['Restart']);
  await until('restarted at the same stage', () => rec.status.text === '$(debug-alt) idle | Debug: agent investigating · round 2');
  const after = sidecarChildren();
  assert.equal(after.length, 1);
  assert.notEqual(after[0], pid);
  assert.ok(rec.executed.includes('debugSidecar.restart'));

  // A binary that is not there: a clear message, no process.
  rec.answer = () => undefined;
  const shownBefore = rec.shown.length;
  vscode.setConfig('debugSidecar.path', `${ws.dir}/nope/debug-sidecar`);
  await until('the missing-binary message', () => rec.shown.slice(shownBefore).some((m) => m.text.startsWith('debug-sidecar was not found')));
  assert.equal(rec.status.text, '$(error) debug-sidecar not found');
  await until('the old process is gone', () => sidecarChildren().length === 0);
  assert.deepEqual(rec.shown.slice(shownBefore).map((m) => m.severity), ['error'], JSON.stringify(rec.shown.slice(shownBefore)));
  assert.equal(rec.context.get('debugSidecar.running'), false);
  // A command now says so (with its buttons) instead of asking for input or spawning anything.
  rec.inputs.push('should not be asked');
  await vscode.commands.executeCommand('debugSidecar.start');
  assert.match(rec.shown.at(-1)!.text, /^debug-sidecar was not found/);
  assert.deepEqual(rec.inputs, ['should not be asked']);
  rec.inputs.length = 0;
  assert.equal(sidecarChildren().length, 0);

  // Back to the real one, then deactivate: shutdown + exit, nothing left running.
  vscode.setConfig('debugSidecar.path', BIN);
  await until('running again', () => rec.status.text.includes('Debug: agent investigating · round 2'));
  await ext.deactivate();
  await until('no sidecar left', () => sidecarChildren().length === 0);
  const serverLog = rec.output.get('Debug Sidecar: Server') ?? [];
  if (process.env['SHOW_SERVER_LOG']) console.log(serverLog.join('\n'));
  assert.ok(!serverLog.some((l) => /panicked/.test(l)), serverLog.join('\n'));
});
