import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeError, stoppedMessage, RESTART_COMMAND } from '../src/model/errors';
import { resolveBinary, type FileProbe } from '../src/model/binary';

test('an illegal command shows the server message as is', () => {
  const message = 'Cannot proceed: the agent holds the turn; Proceed becomes available once it hands the round to you. Possible now: hand off, mark fixed, abort.';
  const m = describeError({ code: -32050, message, data: { command: 'proceed', stage: 'investigating', legal: ['done'] } }, 'proceed');
  assert.deepEqual(m, { severity: 'warning', text: message, actions: [] });
});

test('bad params, workspace I/O and unknown methods say what failed', () => {
  assert.equal(describeError({ code: -32602, message: 'invalid params: `problem`' }, 'start a debug session').text, 'debug-sidecar refused start a debug session: invalid params: `problem`');
  assert.match(describeError({ code: -32051, message: 'read-only: /ws/.debug-sidecar' }, 'proceed').text, /could not proceed: read-only/);
  assert.match(describeError({ code: -32601, message: 'Method not found' }, 'read the run log').text, /does not support read the run log/);
});

test('a missing or non-executable binary names the path and offers settings and restart', () => {
  const m = describeError(Object.assign(new Error('spawn x ENOENT'), { code: 'ENOENT' }), 'start', '/opt/nope/debug-sidecar');
  assert.equal(m.severity, 'error');
  assert.match(m.text, /^debug-sidecar was not found \(`\/opt\/nope\/debug-sidecar`\)\. Install it/);
  assert.match(m.text, /"debugSidecar\.path"/);
  const bare = describeError({ code: 'ENOENT' }, 'start', 'debug-sidecar', 'Remote');
  assert.match(bare.text, /not on PATH nor in ~\/\.cargo\/bin/);
  assert.match(bare.text, /set "debugSidecar\.path" in the Remote settings/);
  assert.deepEqual(m.actions.map((a) => a.title), ['Open Settings', 'Restart']);
  assert.match(describeError({ code: 'EACCES' }, 'start', '/x').text, /is not executable/);
});

test('a stopped sidecar says how it ended and offers Restart', () => {
  const m = stoppedMessage({ code: null, signal: 'SIGKILL' });
  assert.equal(m.text, 'debug-sidecar stopped (killed by SIGKILL). The debug session is saved in the workspace; run Debug Mode: Restart Sidecar to pick it up again.');
  assert.deepEqual(m.actions, [{ title: 'Restart', command: RESTART_COMMAND }]);
  assert.match(stoppedMessage({ code: 101 }).text, /\(exit code 101\)/);
});

test('binary resolution: PATH lookup, explicit paths, ~ and non-executable files', () => {
  const files: Record<string, boolean> = { '/usr/bin/debug-sidecar': true, '/opt/ds': false, '/home/me/bin/ds': true };
  const fs: FileProbe = { kind: (p) => (p in files ? 'file' : p === '/opt' ? 'other' : null), executable: (p) => files[p] === true };
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/bin:/usr/bin' }, '/ws', fs, 'linux'), { ok: true, path: '/usr/bin/debug-sidecar' });
  assert.deepEqual(resolveBinary('', { PATH: '/usr/bin' }, '/ws', fs, 'linux'), { ok: true, path: '/usr/bin/debug-sidecar' });
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/bin' }, '/ws', fs, 'linux'), { ok: false, reason: 'missing', path: 'debug-sidecar' });
  assert.deepEqual(resolveBinary('/opt/ds', {}, '/ws', fs, 'linux'), { ok: false, reason: 'notExecutable', path: '/opt/ds' });
  assert.deepEqual(resolveBinary('~/bin/ds', { HOME: '/home/me' }, '/ws', fs, 'linux'), { ok: true, path: '/home/me/bin/ds' });
  assert.deepEqual(resolveBinary('./tools/ds', {}, '/ws', fs, 'linux'), { ok: false, reason: 'missing', path: '/ws/tools/ds' });
  assert.deepEqual(resolveBinary('/opt', {}, '/ws', fs, 'linux'), { ok: false, reason: 'missing', path: '/opt' });
});

test('binary resolution: a bare name not on PATH is found where cargo install puts it', () => {
  const files: Record<string, boolean> = { '/home/me/.cargo/bin/debug-sidecar': true, '/opt/cargo/bin/debug-sidecar': true, '/usr/bin/debug-sidecar': true };
  const fs: FileProbe = { kind: (p) => (p in files ? 'file' : null), executable: (p) => files[p] === true };
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/bin', HOME: '/home/me' }, '/ws', fs, 'linux'), { ok: true, path: '/home/me/.cargo/bin/debug-sidecar' });
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/bin', HOME: '/home/me', CARGO_HOME: '/opt/cargo' }, '/ws', fs, 'linux'), { ok: true, path: '/opt/cargo/bin/debug-sidecar' });
  // PATH comes first; an explicit path is never looked up elsewhere.
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/usr/bin', HOME: '/home/me' }, '/ws', fs, 'linux'), { ok: true, path: '/usr/bin/debug-sidecar' });
  assert.deepEqual(resolveBinary('./debug-sidecar', { HOME: '/home/me' }, '/ws', fs, 'linux'), { ok: false, reason: 'missing', path: '/ws/debug-sidecar' });
  assert.deepEqual(resolveBinary('debug-sidecar', { PATH: '/bin', HOME: '/nobody' }, '/ws', fs, 'linux'), { ok: false, reason: 'missing', path: 'debug-sidecar' });
});
