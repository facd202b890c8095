// A whole debug session driven through `debug-sidecar mcp` by the TypeScript
// MCP SDK (`@modelcontextprotocol/sdk` from npm), a client no one here wrote.
// The person answers the hand-off forms (elicitation): Proceed with a note
// after running the program, then Mark fixed. Prints one JSON object of what
// it saw; tests/mcp_typescript.rs checks it.
//
// Usage: node mcp_typescript.mjs <node_modules dir> <debug-sidecar> <workspace>

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, binary, workspace] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', path)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { ElicitRequestSchema } = await sdk('types.js');

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const seen = { forms: [] };
const answers = [
  () => {
    // The person reproduces while the form is open, then presses Proceed.
    execFileSync('sh', ['cart.sh'], { cwd: workspace });
    return { action: 'accept', content: { choice: 'proceed', note: 'it printed 3' } };
  },
  () => ({ action: 'accept', content: { choice: 'fixed' } }),
];

const client = new Client({ name: 'ts-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  seen.forms.push({ message: request.params.message, schema: request.params.requestedSchema });
  const answer = answers.shift();
  return answer ? answer() : { action: 'decline' };
});
const transport = new StdioClientTransport({
  command: binary,
  args: ['mcp'],
  cwd: workspace,
  env: { ...process.env, DEBUG_SIDECAR_SESSION: 'ts' },
  stderr: 'inherit',
});
await client.connect(transport);
seen.server = client.getServerVersion()?.name;
seen.tools = (await client.listTools()).tools.map((t) => t.name);
seen.prompts = (await client.listPrompts()).prompts.map((p) => p.name);

const kickoff = await client.getPrompt({ name: 'debug', arguments: { problem: 'the total is wrong' } });
seen.kickoff = kickoff.messages[0].content.text;
await client.callTool({
  name: 'record_hypotheses',
  arguments: { hypotheses: [{ id: 'H1', statement: 'n is read before it is set', status: 'open' }] },
});
const placed = text(await client.callTool({
  name: 'probe_snippet',
  arguments: { file: 'cart.sh', hypothesisId: 'H1', variables: ['n'] },
}));
const block = placed.match(/^# #region debug-probe[\s\S]*?^# #endregion debug-probe \S+$/m)[0];
const source = readFileSync(join(workspace, 'cart.sh'), 'utf8');
writeFileSync(join(workspace, 'cart.sh'), `${source}${block}\necho $n\n`);
seen.ledger = text(await client.callTool({ name: 'probe_ledger', arguments: { rescan: true } }));

const plan = [{ id: 'E1', method: 'runtime_probe', instructions: ['the value of n'] }];
const first = await client.callTool({
  name: 'hand_off_to_user',
  arguments: { mode: 'reproduce', steps: ['Run `sh cart.sh`.'], plan },
});
seen.proceed = { isError: first.isError ?? false, text: text(first) };
const run = seen.proceed.text.match(/\br1-[a-z0-9]+/)?.[0];
seen.logs = text(await client.callTool({ name: 'read_logs', arguments: { run } }));
await client.callTool({
  name: 'record_hypotheses',
  arguments: { hypotheses: [{ id: 'H1', statement: 'n is read before it is set', status: 'rejected', evidence: ['p1: n=3'] }] },
});
const second = await client.callTool({
  name: 'hand_off_to_user',
  // A verifying round reuses round 1's probe: no plan promising new ones.
  arguments: { mode: 'reproduce', steps: ['Run `sh cart.sh` again.'] },
});
seen.fixed = { isError: second.isError ?? false, text: text(second) };

// Cleanup: the block goes, markers and all; the ledger sees it gone.
writeFileSync(join(workspace, 'cart.sh'), source + 'echo $n\n');
seen.cleaned = text(await client.callTool({ name: 'probe_ledger', arguments: { rescan: true } }));
seen.status = text(await client.callTool({ name: 'debug_status', arguments: {} }));
await client.close();
process.stdout.write(JSON.stringify(seen));
