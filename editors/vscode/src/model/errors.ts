// What the person reads when something goes wrong: the server's own message for a refused
// command, a clear line for a missing binary or a stopped sidecar.
import { ErrorCodes } from './protocol';

export type MessageAction = { title: string; command: string };

export interface UserMessage {
  severity: 'info' | 'warning' | 'error';
  text: string;
  actions: MessageAction[];
}

export const RESTART_COMMAND = 'debugSidecar.restart';
export const RESTART_TITLE = 'Debug Mode: Restart Sidecar';
export const SETTINGS_COMMAND = 'debugSidecar.openSettings';

interface RpcErrorLike {
  code: number;
  message: string;
  data?: unknown;
}

function isRpcError(e: unknown): e is RpcErrorLike {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as { code?: unknown }).code === 'number' &&
    typeof (e as { message?: unknown }).message === 'string'
  );
}

function errnoCode(e: unknown): string | null {
  if (typeof e === 'object' && e !== null) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return null;
}

/** Which settings tab `debugSidecar.path` is read from here: `Remote` in a remote window. */
export type SettingsTab = 'User' | 'Remote';

export function missingBinaryMessage(path: string, tab: SettingsTab = 'User'): UserMessage {
  const bare = !path.includes('/') && !path.includes('\\');
  const where = bare ? `\`${path}\` is not on PATH nor in ~/.cargo/bin` : `\`${path}\``;
  return {
    severity: 'error',
    text:
      `debug-sidecar was not found (${where}). Install it (\`cargo install --path .\` in the debug-sidecar ` +
      `repository) or set "debugSidecar.path" in the ${tab} settings to its absolute path, then run ${RESTART_TITLE}.`,
    actions: [
      { title: 'Open Settings', command: SETTINGS_COMMAND },
      { title: 'Restart', command: RESTART_COMMAND },
    ],
  };
}

export function notExecutableMessage(path: string, tab: SettingsTab = 'User'): UserMessage {
  return {
    severity: 'error',
    text: `debug-sidecar at \`${path}\` is not executable. Fix its permissions or "debugSidecar.path" in the ${tab} settings, then run ${RESTART_TITLE}.`,
    actions: [
      { title: 'Open Settings', command: SETTINGS_COMMAND },
      { title: 'Restart', command: RESTART_COMMAND },
    ],
  };
}

export function stoppedMessage(detail: { code?: number | null; signal?: string | null } = {}): UserMessage {
  let how = '';
  if (detail.signal) how = ` (killed by ${detail.signal})`;
  else if (typeof detail.code === 'number') how = ` (exit code ${detail.code})`;
  return {
    severity: 'error',
    text: `debug-sidecar stopped${how}. The debug session is saved in the workspace; run ${RESTART_TITLE} to pick it up again.`,
    actions: [{ title: 'Restart', command: RESTART_COMMAND }],
  };
}

/** The message for a failed request or start. `what` names the attempted action. */
export function describeError(err: unknown, what: string, binaryPath?: string, tab: SettingsTab = 'User'): UserMessage {
  if (isRpcError(err)) {
    switch (err.code) {
      case ErrorCodes.illegalCommand:
        // The server says why and what is possible now: show it as is.
        return { severity: 'warning', text: err.message, actions: [] };
      case ErrorCodes.invalidParams:
        return { severity: 'error', text: `debug-sidecar refused ${what}: ${err.message}`, actions: [] };
      case ErrorCodes.workspaceIo:
        return { severity: 'error', text: `debug-sidecar could not ${what}: ${err.message}`, actions: [] };
      case ErrorCodes.methodNotFound:
        return {
          severity: 'error',
          text: `This debug-sidecar does not support ${what} (${err.message}). Update debug-sidecar.`,
          actions: [],
        };
      default:
        break;
    }
  }
  const errno = errnoCode(err);
  if (errno === 'ENOENT') return missingBinaryMessage(binaryPath ?? 'debug-sidecar', tab);
  if (errno === 'EACCES') return notExecutableMessage(binaryPath ?? 'debug-sidecar', tab);
  const text = err instanceof Error ? err.message : isRpcError(err) ? err.message : String(err);
  return { severity: 'error', text: `debug-sidecar: ${what} failed: ${text}`, actions: [] };
}
