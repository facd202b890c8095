import assert from 'node:assert/strict';
import { test } from 'node:test';
import { userTurnPrompt } from '../src/model/notification';
import { inactive, snapshot, userTurn } from './support/fixtures';

test('entering user_turn gives the steps with Proceed and Mark fixed', () => {
  const p = userTurnPrompt(userTurn(), null);
  assert.ok(p);
  assert.equal(
    p.message,
    'Your turn: reproduce the problem (round 1). 1. Run `sh checkout.sh 1000 2000 3000`. 2. Press Proceed. Then press Proceed, or Mark fixed if the bug is gone.',
  );
  assert.equal(p.detail, 'Your turn: reproduce the problem (round 1):\n1. Run `sh checkout.sh 1000 2000 3000`.\n2. Press Proceed.');
  assert.deepEqual(p.buttons, [
    { title: 'Proceed', action: 'proceed' },
    { title: 'Mark fixed', action: 'done' },
  ]);
});

test('shown once per hand-off, again for the next round or new steps', () => {
  const first = userTurnPrompt(userTurn(), null);
  assert.ok(first);
  assert.equal(userTurnPrompt(userTurn({ revision: 6 }), first.key), null, 'same hand-off, later revision');
  const reclosed = userTurnPrompt(userTurn({ steps: ['Answer: yes'] }), first.key);
  assert.ok(reclosed, 're-closed with new steps');
  const next = userTurnPrompt(userTurn({ round: 2, runId: 'r2-x' }), first.key);
  assert.ok(next);
  assert.match(next.message, /round 2/);
});

test('no prompt outside user_turn', () => {
  assert.equal(userTurnPrompt(snapshot(), null), null);
  assert.equal(userTurnPrompt(snapshot({ stage: 'cleaning_up' }), null), null);
  assert.equal(userTurnPrompt(inactive(), null), null);
});

test('hand-off modes word the lead; pending user work is listed; buttons follow userCommands', () => {
  const q = userTurnPrompt(userTurn({ handoff: 'question', steps: [] }), null);
  assert.ok(q);
  assert.match(q.message, /^The agent has a question \(round 1\)\. No steps were given\./);
  const c = userTurnPrompt(
    userTurn({
      handoff: 'capture',
      pendingUserActions: [
        { id: 'E2', method: 'user_artifact', instructions: ['Screenshot the cart.'], artifactHint: 'screenshot' },
        { id: 'E1', method: 'runtime_probe', instructions: [] },
      ],
    }),
    null,
  );
  assert.ok(c);
  assert.match(c.message, /Still needed: E2: Screenshot the cart\. \(screenshot\)\./);
  assert.doesNotMatch(c.message, /E1/);
  const onlyDone = userTurnPrompt(userTurn({ userCommands: ['done', 'abort'] }), null);
  assert.deepEqual(onlyDone?.buttons.map((b) => b.title), ['Mark fixed']);
});
