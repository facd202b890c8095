// The person in front of a real VS Code (code-server in chromium), and the agent beside it.
// Run by ../browser-test.sh, which installs everything, starts code-server and passes:
// DRIVE_PORT, DRIVE_RUN (the run directory: home, ws, shots), DRIVE_BIN (debug-sidecar),
// DRIVE_PLAYWRIGHT (playwright-core).
// Every step is a check; a failed one is reported and the next steps still run.
// Prints `N passed, N failed` last; exits 1 when anything failed.
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`drive.mjs: ${name} is not set (run ../browser-test.sh)`);
  return v;
};
const PORT = env('DRIVE_PORT');
const RUN = env('DRIVE_RUN');
const BIN = env('DRIVE_BIN');
const { chromium } = require(env('DRIVE_PLAYWRIGHT'));
// The extension's own vscode-jsonrpc (../node_modules), the library under its LanguageClient.
const rpc = require('vscode-jsonrpc/node');
const WS = path.join(RUN, 'ws');
const HOME = path.join(RUN, 'home');
const SHOTS = path.join(RUN, 'shots');
/** Where the README's screenshots go (the extension's media/), when asked for. */
const README_SHOTS = process.env['DRIVE_README_SHOTS'] || '';

const CHECKOUT = [
  '#!/bin/sh',
  '# Sums the prices given as arguments; 3 items or more get 10% off.',
  'count=$#',
  'total=0',
  'for p in "$@"; do total=$((total + p)); done',
  'if [ "$count" -gt 3 ]; then total=$((total * 9 / 10)); fi',
  'echo "$total"',
  '',
].join('\n');
const PROBLEM = 'Checkout total ignores the 3-item discount.';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns a truthy value; fail with `what` after `ms`. */
async function until(what, fn, ms = 20000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await sleep(250);
  }
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

// ------------------------------------------------------------------ the agent

/** A second `debug-sidecar serve` on the workspace: the agent's own process. */
async function startAgent() {
  const child = cp.spawn(BIN, ['serve'], { cwd: WS, stdio: ['pipe', 'pipe', 'ignore'] });
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', resolve);
  });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.onError(() => undefined);
  conn.listen();
  const uri = pathToFileURL(WS).href;
  await conn.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'browser-test agent' },
    rootUri: uri,
    workspaceFolders: [{ uri, name: 'ws' }],
    capabilities: {},
    initializationOptions: {},
  });
  await conn.sendNotification('initialized', {});
  return {
    request: (method, params) => conn.sendRequest(method, params),
    notify: (method, params) => conn.sendNotification(method, params),
    stop: () => {
      conn.dispose();
      child.kill();
    },
  };
}

/** Insert `snippet` before line `before` (1-based) of `file`, as the agent's Edit would. */
function insertBefore(file, before, snippet) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.splice(before - 1, 0, ...snippet.replace(/\n$/, '').split('\n'));
  fs.writeFileSync(file, lines.join('\n'));
}

// ------------------------------------------------------------------ the machine

/** TCP ports `pid` listens on (its socket descriptors matched against the kernel's tables). */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      if (cols.length > 9 && cols[3] === '0A' && inodes.has(cols[9])) ports.push(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return ports;
}

// ------------------------------------------------------------------ the person

const results = [];
let page;
let shot = 0;

async function screenshot(name) {
  shot += 1;
  const file = path.join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file }).catch(() => undefined);
  return file;
}

/**
 * A README picture (DRIVE_README_SHOTS): the smallest rectangle holding `parts` (selectors),
 * so each PNG stays small.
 */
async function readmeShot(name, ...parts) {
  if (!README_SHOTS) return;
  // A trailing `{ width, height, top }` keeps the left and bottom (or `top`) part only.
  const limit = typeof parts.at(-1) === 'object' ? parts.pop() : {};
  const boxes = [];
  for (const part of parts) {
    const box = await page.locator(part).first().boundingBox();
    if (box) boxes.push(box);
  }
  if (boxes.length === 0) throw new Error(`readme shot ${name}: none of ${parts.join(', ')} is shown`);
  const x = Math.max(0, Math.min(...boxes.map((b) => b.x)));
  const y = Math.max(0, Math.min(...boxes.map((b) => b.y)));
  const right = Math.max(...boxes.map((b) => b.x + b.width));
  const bottom = Math.max(...boxes.map((b) => b.y + b.height));
  const width = Math.min(right - x, limit.width ?? Infinity);
  const height = Math.min(bottom - y, limit.height ?? Infinity);
  fs.mkdirSync(README_SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(README_SHOTS, `${name}.png`), clip: { x, y: limit.top ? y : bottom - height, width, height } });
}

async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  } catch (e) {
    results.push({ name, ok: false, error: e });
    console.log(`FAIL ${name}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await screenshot(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase().slice(0, 60));
  }
}

const statusItem = () => page.locator('.statusbar-item', { hasText: 'Debug' }).filter({ hasNotText: 'Layout' }).first();
const sidecarItem = () => page.locator('.statusbar-item', { hasText: /Debug:|debug-sidecar/ }).first();
const statusText = async () => (await sidecarItem().innerText()).replace(/\s+/g, ' ').trim();
const toast = (text) => page.locator('.notification-toast', { hasText: text });

async function waitStatus(re, ms = 20000) {
  return until(`the status bar item to read ${re}`, async () => re.test(await statusText()), ms);
}

/** F1, type the command's title, pick the row with exactly that title. */
async function palette(title) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
  await row.first().waitFor({ timeout: 10000 });
  await row.first().click();
}

/** Type into the open input box and press Enter. */
async function answerInput(text) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(text);
  await input.press('Enter');
}

/**
 * Open the Output panel on `channel` and return the lines it shows, as the person reads them:
 * the rendered lines in screen order, a wrapped line joined again (a continuation does not
 * start the way each of the channel's lines does).
 */
const LINE_START = {
  'Debug Sidecar: Server': /^\d{4}-\d\d-\d\d \d\d:\d\d/,
  'Debug Sidecar: Run Log': /^(#\d+ |── |Your turn|The agent|\d+\. |\(|Still needed|- )/,
};
async function outputText(channel) {
  await palette('Output: Show Output Channels...');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: channel });
  await row.first().waitFor({ timeout: 10000 });
  await row.first().click();
  const editor = page.locator('.part.panel .monaco-editor .view-lines').first();
  await editor.waitFor({ timeout: 10000 });
  await sleep(500);
  const rendered = await editor.evaluate((el) =>
    [...el.querySelectorAll('.view-line')]
      .map((l) => ({ top: parseFloat(l.style.top || '0'), text: (l.textContent || '').replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text),
  );
  const lines = [];
  for (const text of rendered) {
    const starts = (LINE_START[channel] ?? /^/).test(text);
    if (lines.length > 0 && !starts) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines.join('\n');
}

async function waitOutput(channel, re, ms = 15000) {
  let text = '';
  await until(`${channel} to show ${re}`, async () => re.test((text = await outputText(channel))), ms);
  return text;
}

const ledgerPane = () => page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Probe Ledger' }) });
async function openLedger() {
  const pane = ledgerPane();
  const header = pane.locator('.pane-header');
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
}
async function ledgerRows() {
  const rows = ledgerPane().locator('.monaco-list-row');
  const out = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    const label = row.locator('.label-name').first();
    out.push({
      row,
      label: (await label.innerText()).trim(),
      description: ((await row.locator('.label-description').first().innerText().catch(() => '')) || '').trim(),
      // Whether the label is cut off (an ellipsis): wider than the room it has.
      labelCut: await label.evaluate((el) => {
        const box = el.getBoundingClientRect();
        const list = el.closest('.monaco-list-row').getBoundingClientRect();
        return el.scrollWidth > el.clientWidth + 1 || box.right > list.right + 1;
      }),
    });
  }
  return out;
}

const terminalScreen = () => page.locator('.part.panel .terminal-wrapper.active .xterm-screen, .part.panel .xterm-screen').first();

/** Click into the terminal, as a person does before typing, and type `text`. */
async function typeInTerminal(text) {
  await terminalScreen().waitFor({ timeout: 20000 });
  await sleep(1000);
  await terminalScreen().click();
  await page.keyboard.type(text, { delay: 5 });
}

/** The Ports view's text: its rows (port, address, process, origin). */
async function portsView() {
  await palette('Ports: Focus on Ports View');
  await sleep(500);
  return (await page.locator('.part.panel .pane-body').first().innerText()).replace(/\s+/g, ' ');
}

/** A loopback port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = http.createServer().listen(0, '127.0.0.1');
    server.once('error', reject);
    server.once('listening', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// ------------------------------------------------------------------ the session

async function main() {
  fs.writeFileSync(path.join(WS, 'checkout.sh'), CHECKOUT);
  // A fresh profile of its own (the run directory is made anew each run).
  const browser = await chromium.launchPersistentContext(path.join(RUN, 'chromium'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  let agent = null;
  let sidecarPid = null;
  let ingestPort = null;
  try {
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15000);

    await step('1 the binary is missing: the message names PATH and ~/.cargo/bin and says Remote settings', async () => {
      await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(WS)}`);
      await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
      const t = toast('debug-sidecar was not found');
      await t.waitFor({ timeout: 60000 });
      const text = (await t.innerText()).replace(/\s+/g, ' ');
      check(/`debug-sidecar` is not on PATH nor in ~\/\.cargo\/bin/.test(text), text);
      check(/set "debugSidecar\.path" in the Remote settings/.test(text), text);
      await waitStatus(/debug-sidecar not found/);
    });

    await step('1 Open Settings opens the Remote tab at debugSidecar.path; a path set there starts the sidecar', async () => {
      await toast('debug-sidecar was not found').locator('.monaco-button', { hasText: 'Open Settings' }).click();
      const tab = page.locator('.settings-tabs-widget .action-label.checked');
      await tab.waitFor({ timeout: 15000 });
      const tabText = await tab.innerText();
      check(/^Remote/.test(tabText), `the settings open on the "${tabText}" tab`);
      const input = page.locator('.setting-item-contents[data-key="debugSidecar.path"] input');
      await input.waitFor();
      await readmeShot('settings-remote', '.settings-header', '.setting-item-contents[data-key="debugSidecar.path"]');
      await input.fill(BIN);
      await input.press('Enter');
      await waitStatus(/idle \| Debug: off/, 30000);
      const machine = JSON.parse(fs.readFileSync(path.join(RUN, 'data', 'Machine', 'settings.json'), 'utf8'));
      check(machine['debugSidecar.path'] === BIN, `the Remote settings file has ${JSON.stringify(machine)}`);
    });

    await step('1 with the setting cleared, the binary is found in ~/.cargo/bin', async () => {
      fs.mkdirSync(path.join(HOME, '.cargo', 'bin'), { recursive: true });
      fs.symlinkSync(BIN, path.join(HOME, '.cargo', 'bin', 'debug-sidecar'));
      const input = page.locator('.setting-item-contents[data-key="debugSidecar.path"] input');
      await input.fill('');
      await input.press('Enter');
      const machineFile = path.join(RUN, 'data', 'Machine', 'settings.json');
      await until('the Remote settings to drop the path', () => !fs.readFileSync(machineFile, 'utf8').includes(BIN));
      await page.keyboard.press('Escape');
      const cargoBin = path.join(HOME, '.cargo', 'bin', 'debug-sidecar');
      const text = await waitOutput('Debug Sidecar: Server', new RegExp(`starting ${cargoBin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} serve`));
      const pids = [...text.matchAll(/debug-sidecar started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
      sidecarPid = pids.at(-1) ?? null;
      check(sidecarPid !== null, 'the Server channel names the pid');
      await waitStatus(/idle \| Debug: off/);
    });

    await step('4 the Server channel logs the sidecar\'s own stderr and its starts', async () => {
      const text = await outputText('Debug Sidecar: Server');
      check(/INFO debug_sidecar::rpc::server: serving /.test(text), `no stderr line of the sidecar in:\n${text}`);
      check(/restarting debug-sidecar: debugSidecar\.path changed/.test(text), `no restart reason in:\n${text}`);
      check(!/will not be restarted/i.test(text), text);
    });

    await step('5 no debug session: the sidecar listens on no port', async () => {
      check(sidecarPid !== null, 'no sidecar pid');
      const ports = listeningPorts(sidecarPid);
      check(ports.length === 0, `the sidecar listens on ${ports.join(', ')}`);
    });

    await step('Debug Mode: Start from the palette, with the problem typed in', async () => {
      await palette('Debug Mode: Start');
      await answerInput(PROBLEM);
      await toast('Debug Mode started (round 1)').waitFor();
      await waitStatus(/Debug: agent investigating · round 1/);
    });

    await step('5 the session needs the ingest server: it listens now, and the Ports view does not forward it', async () => {
      ingestPort = await until('the ingest port', () => listeningPorts(sidecarPid)[0]);
      // A control, so the check can fail: a server started in the terminal is auto-forwarded.
      const controlPort = await freePort();
      await palette('Terminal: Create New Terminal');
      await typeInTerminal(`python3 -m http.server --bind 127.0.0.1 ${controlPort}\n`);
      const view = await until('the control port auto-forwarded in the Ports view', async () => {
        const text = await portsView();
        return text.includes(`${controlPort} `) && text.includes('Auto Forwarded') ? text : null;
      }, 30000);
      // The ingest port would be found within the same scan (every 2 s or so).
      await sleep(4000);
      const again = await portsView();
      check(!again.includes(String(ingestPort)), `the Ports view lists the ingest port ${ingestPort}: ${again}`);
      check(view.length > 0, view);
      await readmeShot('ports', '.part.panel', { height: 110, top: true });
      await palette('Terminal: Focus Terminal');
      await terminalScreen().click();
      await page.keyboard.press('Control+C');
      await sleep(300);
    });

    agent = await startAgent();
    await step('the agent thinks with a todo list: spinner and progress in the status bar', async () => {
      await agent.notify('turn/event', { kind: 'turnStart', source: 'user' });
      await agent.notify('turn/event', { kind: 'reasoning' });
      await agent.notify('progress/todos', {
        todos: [
          { content: 'Read the checkout code', status: 'completed' },
          { content: 'Add probes', activeForm: 'Adding probes', status: 'in_progress' },
          { content: 'Hand over for reproduction', status: 'pending' },
        ],
      });
      await waitStatus(/thinking… \| Debug: agent investigating · round 1 \| 33% 1\/3 Adding probes/);
      const spin = await sidecarItem().locator('.codicon-sync.codicon-modifier-spin, .codicon-sync~spin, .codicon-modifier-spin').count();
      check(spin > 0, 'no spinner icon');
    });

    await step('a real host\'s subagents show in the Subagents view: asking, ended', async () => {
      // The records pi-subagents' background runs became in a real pi session
      // (lab: pi-subagents: background subagents reach the records, which
      // checks this file against what the host sends), replayed in order.
      const fixture = new URL('./fixtures/pi-subagents.jsonl', import.meta.url);
      const events = fs.readFileSync(fixture, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
      const asked = events.findIndex((e) => e.question);
      check(asked > 0, 'the fixture holds no question');
      for (const event of events.slice(0, asked + 1)) await agent.notify('agents/event', event);
      const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Subagents' }) });
      const header = pane.locator('.pane-header');
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      const rows = async () => {
        const found = pane.locator('.monaco-list-row');
        const out = [];
        for (let i = 0; i < (await found.count()); i++) {
          const row = found.nth(i);
          out.push(`${(await row.locator('.label-name').first().innerText()).trim()}: ${((await row.locator('.label-description').first().innerText().catch(() => '')) || '').trim()}`);
        }
        return out;
      };
      // Named by their tasks (their ids are run uuids), each with its state and work.
      const shows = (seen, expected) =>
        seen.length === expected.length && expected.every((re) => seen.some((row) => re.test(row)));
      const work = ' · delegate(?: · \\d+ tools?)? · \\d+ turns?$';
      const ended = [
        new RegExp(`^CHILDS sum the prices: completed${work}`),
        new RegExp(`^CHILDA count the items: completed${work}`),
        new RegExp(`^CHILDB read the config: error${work}`),
      ];
      let seen = [];
      await until('three ended and one asking', async () => {
        seen = await rows();
        return shows(seen, [...ended, new RegExp(`^CHILDQ check the discount: asks a question${work}`)]);
      });
      check(await pane.locator('.codicon-error').count() === 1, `no error icon on CHILDB's row alone: ${seen}`);
      check(await pane.locator('.codicon-question').count() === 1, `no question icon on CHILDQ's row alone: ${seen}`);
      await screenshot('subagents-asking');
      for (const event of events.slice(asked + 1)) await agent.notify('agents/event', event);
      await until('all four ended', async () => {
        seen = await rows();
        return shows(seen, [...ended, new RegExp(`^CHILDQ check the discount: completed${work}`)]);
      });
      await screenshot('subagents-ended');
    });

    let p1 = '';
    await step('3 the probe in the ledger: file and line first, not cut off; a click opens the file at the probe', async () => {
      await agent.request('debug/recordHypotheses', {
        hypotheses: [
          { id: 'H1', statement: 'The discount check uses -gt instead of -ge.', status: 'open' },
          { id: 'H2', statement: 'The item count is off by one.', status: 'open' },
        ],
      });
      const placed = await agent.request('debug/probeSnippet', { file: 'checkout.sh', hypothesisId: 'H1', message: 'count before the discount check', variables: ['count'] });
      p1 = placed.probe.id;
      insertBefore(path.join(WS, 'checkout.sh'), 6, placed.snippet);
      await agent.notify('turn/event', { kind: 'toolCall', tool: 'Edit' });
      await openLedger();
      const rows = await until('the probe row', async () => {
        const r = await ledgerRows();
        return r.length === 1 && r[0].label === 'checkout.sh:6' ? r : null;
      });
      check(rows[0].description.startsWith(`${p1} · H1`), `description: ${rows[0].description}`);
      check(!rows[0].labelCut, 'the file:line label is cut off');
      await rows[0].row.click();
      let seen = '';
      await until('checkout.sh open at line 6', async () => {
        const tab = await page.locator('.tabs-container .tab.active').first().innerText().catch((e) => String(e));
        const pos = await page.locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ }).first().innerText().catch((e) => String(e));
        seen = `tab ${tab}, cursor ${pos}`;
        return tab.replace(/\s+/g, '').includes('checkout.sh') && /Ln 6, Col 1/.test(pos);
      }).catch((e) => {
        throw new Error(`${e.message} (${seen})`);
      });
      const line6 = fs.readFileSync(path.join(WS, 'checkout.sh'), 'utf8').split('\n')[5];
      check(line6.includes(`#region debug-probe ${p1}`), `line 6 is ${line6}`);
      await readmeShot('ledger', '.part.sidebar', '.part.editor .tabs-and-actions-container', '.part.editor .monaco-editor .view-lines', { width: 680 });
    });

    await step('2 the hand-off: a notification with Proceed and Mark fixed, and a highlighted status item', async () => {
      await agent.request('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1000 2000 3000` in the terminal.', 'Check the printed total.'] });
      await agent.notify('turn/event', { kind: 'turnEnd' });
      const t = toast('Your turn: reproduce the problem (round 1)');
      await t.waitFor();
      const buttons = await t.locator('.monaco-button').allInnerTexts();
      check(JSON.stringify(buttons.map((b) => b.trim())) === JSON.stringify(['Proceed', 'Mark fixed']), `buttons: ${buttons}`);
      await waitStatus(/idle \| Debug: your turn · round 1/);
      await sleep(800); // the toast slides in
      await readmeShot('handoff', '.notification-toast', '.part.statusbar');
    });

    await step('2 after the notification hides itself, the highlighted item is still there and opens the choice', async () => {
      await until('the notification to hide', async () => (await toast('Your turn: reproduce').count()) === 0, 30000);
      const bg = await sidecarItem().evaluate((el) => getComputedStyle(el).backgroundColor);
      const warning = await page.evaluate(() => getComputedStyle(document.querySelector('.monaco-workbench')).getPropertyValue('--vscode-statusBarItem-warningBackground').trim());
      check(warning !== '', 'no warning colour in the theme');
      const probe = await page.evaluate((c) => {
        const d = document.createElement('div');
        d.style.backgroundColor = c;
        document.body.appendChild(d);
        const v = getComputedStyle(d).backgroundColor;
        d.remove();
        return v;
      }, warning);
      check(bg === probe, `the item's background is ${bg}, the warning background ${probe}`);
      await sidecarItem().click();
      const rows = page.locator('.quick-input-list .monaco-list-row');
      await rows.first().waitFor();
      const labels = (await rows.allInnerTexts()).map((r) => r.replace(/\s+/g, ' ').trim());
      check(/^Proceed ?I reproduced it ?1\. Run `sh checkout\.sh 1000 2000 3000` in the terminal\. 2\. Check the printed total\./.test(labels[0] ?? ''), `first row: ${labels[0]}`);
      check(/^Mark Fixed/.test(labels[1] ?? '') && /^Abort/.test(labels[2] ?? ''), labels.join(' | '));
      await sleep(500); // the quick pick fades in
      await readmeShot('your-turn', '.quick-input-widget');
      await page.keyboard.press('Escape');
    });

    await step('the person runs the steps in the terminal; the probe line shows in the Run Log channel', async () => {
      await palette('Terminal: Focus Terminal');
      await typeInTerminal('sh checkout.sh 1000 2000 3000\n');
      const text = await waitOutput('Debug Sidecar: Run Log', new RegExp(`${p1} \\[H1\\] checkout\\.sh count before the discount check \\{"count":"3"\\}`), 30000);
      check(/── run r1-/.test(text), text);
      await readmeShot('run-log', '.part.panel');
    });

    await step('Proceed from the highlighted status item; the highlight goes', async () => {
      await sidecarItem().click();
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Proceed' }).first().click();
      await answerInput('It printed 6000.');
      await waitStatus(/Debug: agent investigating · round 2/);
      const bg = await sidecarItem().evaluate((el) => getComputedStyle(el).backgroundColor);
      check(bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent', `background still ${bg}`);
    });

    await step('Mark fixed from the round-2 notification\'s button', async () => {
      const file = path.join(WS, 'checkout.sh');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"$count" -gt 3', '"$count" -ge 3'));
      await agent.request('debug/recordHypotheses', {
        hypotheses: [{ id: 'H1', statement: 'The discount check uses -gt instead of -ge.', status: 'confirmed', evidence: [`${p1}: count=3`] }],
      });
      await agent.request('debug/handOff', { mode: 'reproduce', steps: ['Run `sh checkout.sh 1000 2000 3000` again; it should print 5400.'] });
      const t = toast('Your turn: reproduce the problem (round 2)');
      await t.waitFor();
      await t.locator('.monaco-button', { hasText: 'Mark fixed' }).click();
      await toast('Marked fixed').waitFor();
      await waitStatus(/Debug: cleaning up · round 2/);
    });

    await step('the agent removes its probe; Check for Leftover Probes says none', async () => {
      const file = path.join(WS, 'checkout.sh');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^.*#region debug-probe[\s\S]*?#endregion debug-probe \S+\n/m, ''));
      const stop = await agent.request('debug/stop', {});
      check(stop.decision === 'allow', JSON.stringify(stop));
      await waitStatus(/idle \| Debug: off/);
      await palette('Debug Mode: Check for Leftover Probes');
      await toast('No leftover probes').waitFor();
    });

    await step('6 .debug-sidecar/ is in the workspace but not in the Explorer nor in search', async () => {
      check(fs.existsSync(path.join(WS, '.debug-sidecar')), 'no state directory on disk');
      await palette('View: Show Explorer');
      const names = await page.locator('.explorer-folders-view .monaco-list-row .label-name').allInnerTexts();
      check(names.includes('checkout.sh'), `explorer rows: ${names}`);
      check(!names.some((n) => n.includes('.debug-sidecar')), `explorer rows: ${names}`);
      // The problem text is in the session's state file, and nowhere else.
      await palette('Search: Find in Files');
      const box = page.locator('.search-view .search-widget textarea, .search-view .search-widget input').first();
      await box.waitFor();
      await box.fill('3-item discount');
      await box.press('Enter');
      const message = await until('the search to finish', async () => {
        const t = (await page.locator('.search-view .messages, .search-view .result-messages').first().innerText().catch(() => '')).trim();
        return t || null;
      });
      check(/No results found/i.test(message), `search says: ${message}`);
      await palette('View: Show Explorer');
    });

    await step('4 a SIGKILLed sidecar: the message and the Server channel say how it ended and that Restart starts it', async () => {
      process.kill(sidecarPid, 'SIGKILL');
      const t = toast('debug-sidecar stopped (killed by SIGKILL)');
      await t.waitFor();
      await waitStatus(/debug-sidecar stopped/);
      const text = await waitOutput('Debug Sidecar: Server', new RegExp(`debug-sidecar \\(pid ${sidecarPid}\\) stopped unexpectedly \\(killed by SIGKILL\\)`));
      check(/It is not restarted automatically: press Restart/.test(text), text);
      check(!/Server will not be restarted/.test(text), text);
      await sleep(800);
      await readmeShot('crash', '.notification-toast', '.part.statusbar');
      await toast('debug-sidecar stopped (killed by SIGKILL)').locator('.monaco-button', { hasText: 'Restart' }).click();
      await waitStatus(/idle \| Debug: off/);
      const after = await waitOutput('Debug Sidecar: Server', /restarting debug-sidecar: Restart was pressed[\s\S]*debug-sidecar started \(pid \d+\)/);
      const pids = [...after.matchAll(/debug-sidecar started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
      sidecarPid = pids.at(-1);
      check(sidecarPid && fs.existsSync(`/proc/${sidecarPid}`), 'the restarted sidecar is not running');
      await readmeShot('server-channel', '.part.panel', { height: 200 });
    });

    await step('6 a new debug session starts with an empty Run Log', async () => {
      const before = await outputText('Debug Sidecar: Run Log');
      check(before.includes('count before the discount check'), `the Run Log had: ${before}`);
      await palette('Debug Mode: Start');
      await answerInput('The total is wrong for 4 items.');
      await toast('Debug Mode started (round 1)').waitFor();
      const after = await outputText('Debug Sidecar: Run Log');
      check(!after.includes('count before the discount check') && !/── run r[12]-/.test(after.replace(/── run r1-\S+ ──$/, '')), `the Run Log still has: ${after}`);
    });

    await step('3 foreign and half-removed rows show file and line first, not cut off', async () => {
      fs.writeFileSync(path.join(WS, 'app.js'), "// #region agent log\nfetch('http://127.0.0.1:7242/ingest/abc', {});\n// #endregion\n");
      const sessionId = JSON.parse(JSON.stringify(await agent.request('debug/status', {}))).sessionId;
      fs.writeFileSync(path.join(WS, 'half.sh'), `echo hi\n# #region debug-probe p77 ${sessionId}\necho there\n`);
      await palette('Debug Mode: Show Probe Ledger');
      await openLedger();
      const rows = await until('the foreign and half-removed rows', async () => {
        const r = await ledgerRows();
        return r.some((x) => x.label === 'app.js:1') && r.some((x) => x.label === 'half.sh:2' && x.description.startsWith('HALF-REMOVED')) ? r : null;
      });
      const foreign = rows.find((x) => x.label === 'app.js:1');
      const half = rows.find((x) => x.label === 'half.sh:2' && x.description.startsWith('HALF-REMOVED'));
      check(foreign && half, `rows: ${rows.map((r) => `${r.label} | ${r.description}`).join('; ')}`);
      check(/^FOREIGN · Cursor's agent log block/.test(foreign.description), foreign.description);
      check(/^HALF-REMOVED · p77/.test(half.description), half.description);
      check(!foreign.labelCut && !half.labelCut, 'a label is cut off');
      await readmeShot('ledger-foreign', '.part.sidebar');
    });

    await step('Debug Mode: Abort asks first, then ends the session', async () => {
      await palette('Debug Mode: Abort');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      await dialog.locator('.monaco-button', { hasText: /^Abort$/ }).click();
      await waitStatus(/idle \| Debug: off/);
    });
  } finally {
    if (agent) agent.stop();
    await browser.close().catch(() => undefined);
  }
}

main()
  .catch((e) => {
    results.push({ name: 'the driver itself', ok: false, error: e });
    console.log(`FAIL the driver: ${e instanceof Error ? e.stack : String(e)}`);
  })
  .finally(() => {
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  });
