import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentNodes, withRecord } from '../src/model/agents';
import type { AgentRecord } from '../src/model/protocol';

const record = (over: Partial<AgentRecord>): AgentRecord => ({
  id: 'Alpha',
  type: 'task',
  description: 'count the items',
  status: 'running',
  toolUses: 0,
  turns: 0,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  ...over,
});

test('a row per subagent: its status, type and work; the tooltip its task and end', () => {
  const nodes = agentNodes([
    record({ status: 'queued' }),
    record({ id: 'Beta', status: 'completed', toolUses: 2, turns: 1, result: 'Alpha counted 3 items', usage: { input: 40, output: 12, cacheRead: 0, cacheWrite: 0 } }),
    record({ id: 'Gamma', status: 'error', toolUses: 1, turns: 1, error: 'could not read config.toml' }),
  ]);
  assert.deepEqual(
    nodes.map((n) => [n.label, n.description, n.icon, n.alert]),
    [
      ['Alpha', 'queued · task', 'clock', false],
      ['Beta', 'completed · task · 2 tools · 1 turn', 'pass', false],
      ['Gamma', 'error · task · 1 tool · 1 turn', 'error', true],
    ],
  );
  assert.equal(nodes[1]!.tooltip, 'Subagent Beta (task): completed\ncount the items\nResult: Alpha counted 3 items\nTokens: 40 in, 12 out');
  assert.match(nodes[2]!.tooltip, /Error: could not read config.toml/);
});

test('a machine-made id (pi-subagents\' run uuid and index) gives the row its task as its name', () => {
  const id = '7acaa35c-84ff-49b6-a85a-928411694f3b:0';
  const [byTask, long, bare] = agentNodes([
    record({ id, type: 'delegate', description: 'CHILDA count the items' }),
    record({ id, description: `check ${'every '.repeat(20)}item\nagain` }),
    record({ id, description: undefined }),
  ]);
  assert.equal(byTask!.label, 'CHILDA count the items');
  assert.equal(byTask!.tooltip.split('\n')[0], `Subagent ${id} (delegate): running`);
  assert.equal(long!.label.length, 60);
  assert.ok(long!.label.endsWith('…') && !long!.label.includes('\n'), long!.label);
  assert.equal(bare!.label, id);
});

test('a pending question is what the row says, and asks for attention', () => {
  const [node] = agentNodes([record({ pendingQuestion: 'Which file?' })]);
  assert.equal(node!.description, 'asks a question · task');
  assert.equal(node!.icon, 'question');
  assert.ok(node!.alert);
  assert.match(node!.tooltip, /Asks: Which file\?/);
});

test('a changed record takes its place; a new one goes last', () => {
  const first = [record({}), record({ id: 'Beta' })];
  const changed = withRecord(first, record({ status: 'completed' }));
  assert.deepEqual(changed.map((r) => [r.id, r.status]), [['Alpha', 'completed'], ['Beta', 'running']]);
  assert.deepEqual(withRecord(first, record({ id: 'Delta' })).map((r) => r.id), ['Alpha', 'Beta', 'Delta']);
  assert.equal(first[0]!.status, 'running', 'the list given is not changed');
});

test('a long result is cut in the tooltip', () => {
  const [node] = agentNodes([record({ status: 'completed', result: 'x'.repeat(5000) })]);
  assert.ok(node!.tooltip.length < 800, `${node!.tooltip.length}`);
});
