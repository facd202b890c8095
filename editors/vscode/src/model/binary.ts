// Where the sidecar binary is: `debugSidecar.path` (default `debug-sidecar` on PATH, then in
// cargo's bin directory: `cargo install` puts it there, and a remote VS Code server gives the
// extension host the PATH of a login shell, which often lacks ~/.cargo/bin).
import * as path from 'node:path';

export type Resolution =
  | { ok: true; path: string }
  | { ok: false; reason: 'missing' | 'notExecutable'; path: string };

export interface FileProbe {
  /** 'file' when it exists as a regular file, 'other' for a directory etc., null when absent. */
  kind(p: string): 'file' | 'other' | null;
  executable(p: string): boolean;
}

/**
 * Resolve `setting` as the OS would for spawn: a path with a separator is taken as is
 * (relative to `cwd`); a bare name is looked up in `PATH` (with `PATHEXT` on Windows), then
 * in cargo's bin directory (`$CARGO_HOME/bin`, else `~/.cargo/bin`).
 */
export function resolveBinary(
  setting: string,
  env: { PATH?: string; PATHEXT?: string; HOME?: string; CARGO_HOME?: string },
  cwd: string,
  fs: FileProbe,
  platform: string = process.platform,
): Resolution {
  const raw = setting.trim() === '' ? 'debug-sidecar' : setting.trim();
  const name = raw.startsWith('~/') && env.HOME ? path.join(env.HOME, raw.slice(2)) : raw;
  const win = platform === 'win32';
  const exts = win ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean)] : [''];
  const check = (candidate: string): Resolution | null => {
    for (const ext of exts) {
      const p = candidate + ext;
      const kind = fs.kind(p);
      if (kind === 'file') {
        return fs.executable(p) ? { ok: true, path: p } : { ok: false, reason: 'notExecutable', path: p };
      }
    }
    return null;
  };
  const hasSep = name.includes('/') || (win && name.includes('\\'));
  if (hasSep || path.isAbsolute(name)) {
    const abs = path.resolve(cwd, name);
    return check(abs) ?? { ok: false, reason: 'missing', path: abs };
  }
  const dirs = (env.PATH ?? '').split(win ? ';' : ':').filter((d) => d.length > 0);
  const cargoBin = cargoBinDir(env);
  if (cargoBin !== null && !dirs.includes(cargoBin)) dirs.push(cargoBin);
  let notExec: Resolution | null = null;
  for (const dir of dirs) {
    const r = check(path.join(dir, name));
    if (r?.ok) return r;
    if (r && !notExec) notExec = r;
  }
  return notExec ?? { ok: false, reason: 'missing', path: name };
}

/** Where `cargo install` puts binaries, or null when neither CARGO_HOME nor HOME is set. */
export function cargoBinDir(env: { HOME?: string; CARGO_HOME?: string }): string | null {
  if (env.CARGO_HOME) return path.join(env.CARGO_HOME, 'bin');
  if (env.HOME) return path.join(env.HOME, '.cargo', 'bin');
  return null;
}

/** A FileProbe over node:fs. */
export function nodeFileProbe(fs: typeof import('node:fs')): FileProbe {
  return {
    kind(p) {
      try {
        return fs.statSync(p).isFile() ? 'file' : 'other';
      } catch {
        return null;
      }
    },
    executable(p) {
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}
