import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const CHECKOUT = [
  '#!/bin/sh',
  '# Sums the prices given as arguments; 3 items or more get 10% off.',
  'count=$#',
  'total=0',
  'for p in "$@"; do total=$((total + p)); done',
  'if [ "$count" -gt 3 ]; then total=$((total * 9 / 10)); fi',
  'echo "$total"',
  '',
].join('\n');

export function binary(): string {
  const bin = process.env['DEBUG_SIDECAR_BIN'];
  if (!bin || !path.isAbsolute(bin)) throw new Error('set DEBUG_SIDECAR_BIN to the absolute path of the debug-sidecar binary');
  if (!fs.existsSync(bin)) throw new Error(`DEBUG_SIDECAR_BIN=${bin} does not exist`);
  return bin;
}

export function makeWorkspace(): { dir: string; file: (rel: string) => string; cleanup: () => void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ds-vscode-')));
  fs.writeFileSync(path.join(dir, 'checkout.sh'), CHECKOUT);
  return {
    dir,
    file: (rel) => path.join(dir, rel),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Insert `snippet` before line `before` (1-based) of `file`. */
export function insertBefore(file: string, before: number, snippet: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.splice(before - 1, 0, ...snippet.replace(/\n$/, '').split('\n'));
  fs.writeFileSync(file, lines.join('\n'));
}
