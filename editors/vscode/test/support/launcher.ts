// The protocol suite's Launcher: spawns `debug-sidecar serve` and speaks to it with
// vscode-jsonrpc, the library under vscode-languageclient, initializing it as the
// LanguageClient does (workspaceFolders + rootUri, then `initialized`).
import * as cp from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { CloseInfo, Disposable, Launcher, SidecarConnection } from '../../src/session';

export interface Spawned {
  child: cp.ChildProcess;
  connection: MessageConnection;
  exited: Promise<CloseInfo>;
}

export interface LauncherHandle {
  launcher: Launcher;
  /** Every process this launcher started, in order. */
  spawned: Spawned[];
  /** Kill whatever is still running (test cleanup). */
  killAll(): Promise<void>;
}

export function spawnLauncher(binary: string, workspace: string, initializationOptions: object = {}): LauncherHandle {
  const spawned: Spawned[] = [];
  const launcher: Launcher = async () => {
    const child = cp.spawn(binary, ['serve'], { cwd: workspace, stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      if (stderr.length > 65536) stderr = stderr.slice(-32768);
    });
    const exited = new Promise<CloseInfo>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    connection.onError(() => undefined);
    connection.listen();
    spawned.push({ child, connection, exited });

    const uri = pathToFileURL(workspace).href;
    await connection.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'debug-sidecar-vscode-test' },
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'ws' }],
      capabilities: {},
      initializationOptions,
    });
    await connection.sendNotification('initialized', {});

    let stopping = false;
    const closeHandlers = new Set<(info: CloseInfo) => void>();
    void exited.then((info) => {
      connection.dispose();
      if (!stopping) for (const h of closeHandlers) h(info);
    });
    const conn: SidecarConnection = {
      sendRequest: <R>(method: string, params: object) => connection.sendRequest<R>(method, params),
      onNotification: (method: string, handler: (p: unknown) => void): Disposable =>
        connection.onNotification(method, (p: unknown) => handler(p)),
      onClose: (handler) => {
        closeHandlers.add(handler);
        return { dispose: () => closeHandlers.delete(handler) };
      },
      stop: async () => {
        stopping = true;
        if (child.exitCode !== null || child.signalCode !== null) return;
        try {
          await withTimeout(connection.sendRequest('shutdown'), 3000);
          await connection.sendNotification('exit');
        } catch {
          child.kill('SIGKILL');
        }
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        const info = await exited;
        clearTimeout(t);
        if (info.code !== 0) throw new Error(`sidecar exited with ${JSON.stringify(info)} after shutdown/exit; stderr:\n${stderr}`);
      },
    };
    return conn;
  };
  return {
    launcher,
    spawned,
    async killAll() {
      for (const s of spawned) {
        if (s.child.exitCode === null && s.child.signalCode === null) {
          s.child.kill('SIGKILL');
          await s.exited;
        }
        s.connection.dispose();
      }
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
