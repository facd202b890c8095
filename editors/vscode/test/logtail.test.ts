import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatEntry, LogTail } from '../src/model/logtail';

const entry = (line: number, data: unknown = { count: String(line) }) => ({
  line,
  entry: { probeId: 'p1', hypothesisId: 'H1', location: 'checkout.sh', message: 'count', data, sessionId: 'default', timestamp: Date.UTC(2025, 0, 1, 12, 0, 1, 250) },
});

test('an entry is one line: number, time, probe, hypothesis, location, message, data', () => {
  assert.match(formatEntry(entry(3)), /^#3 \d\d:\d\d:01\.250 p1 \[H1\] checkout\.sh count \{"count":"3"\}$/);
  assert.equal(formatEntry({ line: 9, entry: 'not an object' }), '#9 "not an object"');
  assert.equal(formatEntry({ line: 2, entry: { message: 'hi', extra: 1 } }), '#2 --:--:--.--- hi {"extra":1}');
});

test('each line once, in order, across overlapping pages and notifications', () => {
  const t = new LogTail();
  assert.deepEqual(t.accept('r1', [entry(1), entry(2)]).length, 3, 'header + 2');
  assert.deepEqual(t.accept('r1', [entry(2), entry(3)]).map((l) => l.slice(0, 2)), ['#3']);
  assert.deepEqual(t.accept('r1', [entry(5), entry(4)]).map((l) => l.slice(0, 2)), ['#4', '#5']);
  assert.deepEqual(t.accept('r1', [entry(1), entry(5)]), []);
  assert.equal(t.count, 5);
  assert.ok(t.hasAll('r1', 5));
  assert.ok(!t.hasAll('r1', 6));
});

test('a new run starts with a header and its own line numbers', () => {
  const t = new LogTail();
  t.accept('r1', [entry(1)]);
  const out = t.accept('r2', [entry(1)]);
  assert.equal(out[0], '── run r2 ──');
  assert.equal(out.length, 2);
  assert.equal(t.currentRun, 'r2');
  assert.ok(!t.hasAll('r1', 1), 'the old run is no longer tracked');
});
