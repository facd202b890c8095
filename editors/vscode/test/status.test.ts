import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressText, stageText, statusMenu, statusView, TURN_LABELS } from '../src/model/status';
import { inactive, snapshot, userTurn } from './support/fixtures';

test('the five turn labels; a spinner exactly while busy', () => {
  for (const state of ['idle', 'connecting', 'thinking', 'working', 'streaming'] as const) {
    const v = statusView({ server: 'running', snapshot: snapshot(), turn: { sessionId: 'default', state, label: TURN_LABELS[state] }, bubble: null });
    assert.equal(v.busy, state !== 'idle', state);
    assert.equal(v.text.startsWith('$(sync~spin) '), state !== 'idle', v.text);
    assert.ok(v.text.includes(TURN_LABELS[state]), v.text);
  }
  assert.deepEqual(Object.values(TURN_LABELS), ['idle', 'connecting…', 'thinking…', 'working…', 'streaming…']);
});

test('the stage and round; off when no session', () => {
  assert.equal(stageText(snapshot()), 'agent investigating · round 1');
  assert.equal(stageText(userTurn({ round: 2 })), 'your turn · round 2');
  assert.equal(stageText(snapshot({ stage: 'cleaning_up', round: 3 })), 'cleaning up · round 3');
  assert.equal(stageText(inactive()), 'off');
  assert.equal(stageText(null), 'off');
  const v = statusView({ server: 'running', snapshot: null, turn: null, bubble: null });
  assert.equal(v.text, '$(debug-alt) idle | Debug: off');
});

test('progress: percent, completed/total and title, only while a bubble is live', () => {
  assert.equal(progressText({ kind: 'todos', title: 'Adding probes', percent: 33, completed: 1, total: 3 }), '33% 1/3 Adding probes');
  assert.equal(progressText({ kind: 'goal', title: 'Fix the discount', percent: 50, completed: null, total: null }), '50% Fix the discount');
  assert.equal(progressText({ kind: 'activity', title: 'Activity', line: 'Reading checkout.sh', percent: null }), 'Activity: Reading checkout.sh');
  assert.equal(progressText({ kind: 'blocked', title: 'waiting for CI' }), 'blocked: waiting for CI');
  assert.equal(progressText(null), '');
  const v = statusView({
    server: 'running',
    snapshot: snapshot(),
    turn: { sessionId: 'default', state: 'working', label: 'working…' },
    bubble: { kind: 'todos', title: 'Adding probes', percent: 33, completed: 1, total: 3 },
  });
  assert.equal(v.text, '$(sync~spin) working… | Debug: agent investigating · round 1 | 33% 1/3 Adding probes');
  assert.match(v.tooltip, /Progress: 33% 1\/3 Adding probes/);
});

test('a stopped or missing sidecar is an error item that restarts on click', () => {
  for (const server of ['stopped', 'missing'] as const) {
    const v = statusView({ server, snapshot: userTurn(), turn: null, bubble: null });
    assert.equal(v.severity, 'error');
    assert.equal(v.command, 'debugSidecar.restart');
    assert.equal(v.busy, false);
  }
  assert.match(statusView({ server: 'missing', snapshot: null, turn: null, bubble: null }).text, /not found/);
  assert.match(statusView({ server: 'stopped', snapshot: null, turn: null, bubble: null }).text, /stopped/);
});

test('a warning in the snapshot shows in the tooltip and colours the item', () => {
  const v = statusView({ server: 'running', snapshot: snapshot({ warning: 'state.json was damaged' }), turn: null, bubble: null });
  assert.equal(v.severity, 'warning');
  assert.match(v.tooltip, /Warning: state.json was damaged/);
});

test('the status menu offers only the commands legal now', () => {
  const labels = (xs: { label: string }[]): string[] => xs.map((x) => x.label);
  assert.deepEqual(labels(statusMenu('running', userTurn())).slice(0, 3), ['Proceed', 'Mark Fixed', 'Abort']);
  assert.deepEqual(labels(statusMenu('running', inactive())).slice(0, 1), ['Start']);
  assert.ok(!labels(statusMenu('running', snapshot())).includes('Proceed'));
  assert.deepEqual(labels(statusMenu('stopped', userTurn())), ['Restart Sidecar']);
});

test('the person’s turn stays in sight: a highlighted item whose menu has the steps under Proceed', () => {
  const v = statusView({ server: 'running', snapshot: userTurn(), turn: null, bubble: null });
  assert.equal(v.severity, 'warning');
  assert.equal(v.command, 'debugSidecar.statusMenu');
  assert.match(v.tooltip, /^Your turn: click for the steps, Proceed and Mark fixed\./);
  assert.equal(statusView({ server: 'running', snapshot: snapshot(), turn: null, bubble: null }).severity, 'normal');
  const proceed = statusMenu('running', userTurn()).find((i) => i.label === 'Proceed');
  assert.equal(proceed?.detail, '1. Run `sh checkout.sh 1000 2000 3000`. 2. Press Proceed.');
});
