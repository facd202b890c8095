import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ledgerNodes, ledgerText, leftoverReport } from '../src/model/ledger';
import { probes } from './support/fixtures';

const result = probes({
  probes: [
    { id: 'p1', file: 'checkout.sh', line: 7, round: 1, state: 'live', hypothesisId: 'H1', language: 'shell' },
    { id: 'p2', file: 'src/cart.py', line: 12, round: 1, state: 'missing', hypothesisId: 'H2' },
    { id: 'p3', file: 'src/cart.py', line: null, round: 2, state: 'issued', hypothesisId: null },
  ],
  live: 1,
  missing: ['p2'],
  foreign: [{ file: 'web/app.js', line: 3, kind: 'cursorAgentLog', text: '// #region agent log' }],
  halfRemoved: [{ file: 'checkout.sh', line: 20, probeId: 'p9' }],
});

test('one row per probe, file:line first, then probe and hypothesis; missing, foreign and half-removed marked', () => {
  const nodes = ledgerNodes(result, [{ id: 'H1', statement: 'The check uses -gt.', status: 'open' }]);
  assert.equal(
    ledgerText(nodes),
    [
      'checkout.sh:7  p1 · H1',
      'src/cart.py:12  p2 · H2 — MISSING from disk',
      'src/cart.py  p3 · no hypothesis — issued, not on disk yet',
      "web/app.js:3  FOREIGN · Cursor's agent log block",
      'checkout.sh:20  HALF-REMOVED · p9 marker without its pair',
    ].join('\n'),
  );
  assert.deepEqual(nodes.map((n) => n.marker), ['live', 'missing', 'issued', 'foreign', 'halfRemoved']);
  assert.deepEqual(nodes[0]?.location, { file: 'checkout.sh', line: 7 });
  assert.deepEqual(nodes[2]?.location, { file: 'src/cart.py', line: null });
  assert.match(nodes[0]?.tooltip ?? '', /Hypothesis H1 \[open\]: The check uses -gt\./);
  assert.equal(new Set(nodes.map((n) => n.id)).size, nodes.length, 'tree ids are unique');
});

test('a probe named in `missing` is marked missing even if its state lags', () => {
  const nodes = ledgerNodes(probes({ probes: [{ id: 'p1', file: 'a.js', line: 1, round: 1, state: 'live' }], missing: ['p1'] }));
  assert.equal(nodes[0]?.marker, 'missing');
});

test('leftover report lists what is on disk, or says the workspace is clean', () => {
  assert.deepEqual(leftoverReport(probes()), { clean: true, message: 'No leftover probes: the workspace scan found no probe markers.' });
  const r = leftoverReport(result);
  assert.equal(r.clean, false);
  assert.equal(
    r.message,
    "3 leftover probe marker(s): p1 at checkout.sh:7; Cursor's agent log block at web/app.js:3; half-removed p9 at checkout.sh:20.",
  );
  assert.equal(ledgerText([]), '(no probes)');
});
