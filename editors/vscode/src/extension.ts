// VS Code glue: a LanguageClient per sidecar process, commands, the status bar item, the
// "Probe Ledger" tree, the run log output channel and notifications. All decisions live in
// session.ts and model/*; this file only maps them onto the VS Code API.
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { nodeFileProbe, resolveBinary } from './model/binary';
import { RESTART_TITLE, SETTINGS_COMMAND, type SettingsTab, type UserMessage } from './model/errors';
import type { AgentNode } from './model/agents';
import type { LedgerLocation, LedgerNode } from './model/ledger';
import type { UserTurnPrompt } from './model/notification';
import { statusMenu, type StatusView } from './model/status';
import { SidecarController, type CloseInfo, type Disposable, type Launcher, type SidecarConnection, type Ui, type CommandState } from './session';

let controller: SidecarController | null = null;

/** Context keys for the palette's `when` clauses (package.json), by the protocol command they follow. */
const LEGAL_KEYS: Record<string, string> = {
  'debugSidecar.canStart': 'start',
  'debugSidecar.canProceed': 'proceed',
  'debugSidecar.canMarkFixed': 'done',
  'debugSidecar.canAbort': 'abort',
};

/**
 * Where `debugSidecar.path` (scope `machine-overridable`) is read: in a remote window
 * (code-server, Remote-SSH, WSL, containers) the User settings of the local machine do not
 * apply to the server's extension host, so the Remote settings are the ones to open.
 */
function settingsTab(): SettingsTab {
  return vscode.env.remoteName ? 'Remote' : 'User';
}

function configuredPath(scope?: vscode.Uri): string {
  return vscode.workspace.getConfiguration('debugSidecar', scope).get<string>('path', 'debug-sidecar') || 'debug-sidecar';
}

function spawnError(message: string, code: string, p: string): Error {
  return Object.assign(new Error(message), { code, path: p });
}

/** The level of one line of the sidecar's stderr (`tracing`'s format: time, level, target). */
function stderrLevel(line: string): 'error' | 'warn' | 'info' | 'debug' | 'trace' {
  const m = /^\S+\s+(ERROR|WARN|INFO|DEBUG|TRACE)\s/.exec(line);
  const level = m?.[1]?.toLowerCase();
  return level === 'error' || level === 'warn' || level === 'info' || level === 'debug' || level === 'trace' ? level : 'error';
}

/** Starts `debug-sidecar serve` for `folder` under a LanguageClient. */
function makeLauncher(folder: vscode.WorkspaceFolder, serverLog: vscode.LogOutputChannel): Launcher {
  return async (): Promise<SidecarConnection> => {
    const setting = configuredPath(folder.uri);
    const resolved = resolveBinary(setting, process.env, folder.uri.fsPath, nodeFileProbe(fs));
    if (!resolved.ok) {
      const code = resolved.reason === 'missing' ? 'ENOENT' : 'EACCES';
      serverLog.error(`debug-sidecar not started: ${resolved.reason === 'missing' ? 'not found' : 'not executable'}: ${resolved.path}`);
      throw spawnError(`${code}: ${resolved.path}`, code, setting);
    }
    let exited: Promise<CloseInfo> = new Promise<CloseInfo>(() => undefined);
    let stopping = false;
    // The process ended by itself: the client has already cleaned up (DoNotRestart).
    let closedByServer = false;
    const closeHandlers = new Set<(info: CloseInfo) => void>();

    const serverOptions: ServerOptions = () =>
      new Promise<cp.ChildProcess>((resolve, reject) => {
        serverLog.info(`starting ${resolved.path} serve in ${folder.uri.fsPath}`);
        // Its info lines (the workspace served, the ingest address) belong in this channel;
        // a person's own RUST_LOG wins.
        const env = { ...process.env, RUST_LOG: process.env['RUST_LOG'] || 'info' };
        const child = cp.spawn(resolved.path, ['serve'], { cwd: folder.uri.fsPath, stdio: 'pipe', env });
        child.once('error', (err) => {
          serverLog.error(`could not start ${resolved.path}: ${err.message}`);
          reject(err);
        });
        child.once('spawn', () => {
          serverLog.info(`debug-sidecar started (pid ${child.pid})`);
          resolve(child);
        });
        exited = new Promise<CloseInfo>((done) =>
          child.once('exit', (code, signal) => {
            const how = signal ? `killed by ${signal}` : `exit code ${code}`;
            if (stopping) serverLog.info(`debug-sidecar (pid ${child.pid}) stopped on request (${how})`);
            else serverLog.error(`debug-sidecar (pid ${child.pid}) stopped unexpectedly (${how})`);
            done({ code, signal });
          }),
        );
      });

    const sessionId = vscode.workspace.getConfiguration('debugSidecar', folder.uri).get<string>('sessionId', '');
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      workspaceFolder: folder,
      // `host`: texts name the buttons here, whatever this build of VS Code calls itself.
      initializationOptions: sessionId ? { sessionId, host: 'vscode' } : { host: 'vscode' },
      outputChannel: serverLog,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The sidecar's stderr, line by line at the level it was logged at (the client's
      // default files every line under "error").
      stdioOptions: {
        stdout: () => undefined,
        stderr: (input, channel) => {
          readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (line) => {
            channel[stderrLevel(line)](line);
          });
        },
      },
      // The controller reports a failed start itself (missing binary, crash at start).
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (_error, _message, count) =>
          (count ?? 0) <= 3 ? { action: ErrorAction.Continue, handled: true } : { action: ErrorAction.Shutdown, handled: true },
        closed: async () => {
          if (stopping) return { action: CloseAction.DoNotRestart, handled: true };
          // Report with the child's exit status when it comes (the pipe may close first).
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<CloseInfo>((done) => (timer = setTimeout(() => done({}), 2000)));
          const info = await Promise.race([exited, late]);
          clearTimeout(timer);
          closedByServer = true;
          // After the client has finished with the close (stopping it from inside its own
          // close handling fails with "Connection is disposed").
          setTimeout(() => {
            for (const h of closeHandlers) h(info);
          }, 0);
          // What the client logs: the person restarts it (Restart), nothing does it behind their back.
          return {
            action: CloseAction.DoNotRestart,
            handled: true,
            message: `The connection to debug-sidecar closed. It is not restarted automatically: press Restart in the message or run ${RESTART_TITLE}; the debug session is saved in the workspace.`,
          };
        },
      },
    };
    const client = new LanguageClient('debugSidecar', 'Debug Sidecar', serverOptions, clientOptions);
    try {
      await client.start();
    } catch (err) {
      stopping = true;
      await client.dispose(2000).catch(() => undefined);
      throw err;
    }
    return {
      sendRequest: <R>(method: string, params: object): Promise<R> => client.sendRequest<R>(method, params),
      onNotification: (method: string, handler: (params: unknown) => void): Disposable =>
        client.onNotification(method, (params: unknown) => handler(params)),
      onClose: (handler: (info: CloseInfo) => void): Disposable => {
        closeHandlers.add(handler);
        return { dispose: () => closeHandlers.delete(handler) };
      },
      stop: async (): Promise<void> => {
        stopping = true;
        if (!closedByServer) await client.dispose(2000);
      },
    };
  };
}

/** A flat tree view of rows, each drawn by `item`. */
class ListTree<T> implements vscode.TreeDataProvider<T> {
  private nodes: T[] = [];
  private readonly changed = new vscode.EventEmitter<T | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly item: (node: T) => vscode.TreeItem) {}

  set(nodes: T[]): void {
    this.nodes = nodes;
    this.changed.fire(undefined);
  }

  getChildren(element?: T): T[] {
    return element ? [] : this.nodes;
  }

  getTreeItem(node: T): vscode.TreeItem {
    return this.item(node);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function ledgerItem(node: LedgerNode): vscode.TreeItem {
  const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
  item.id = node.id;
  item.description = node.description;
  item.tooltip = node.tooltip;
  const color =
    node.marker === 'missing' || node.marker === 'foreign'
      ? new vscode.ThemeColor('list.warningForeground')
      : node.marker === 'halfRemoved'
        ? new vscode.ThemeColor('list.errorForeground')
        : undefined;
  item.iconPath = new vscode.ThemeIcon(node.icon, color);
  if (node.location) {
    item.command = { command: 'debugSidecar.openLocation', title: 'Open', arguments: [node.location] };
  }
  return item;
}

function agentItem(node: AgentNode): vscode.TreeItem {
  const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
  item.id = `agent:${node.id}`;
  item.description = node.description;
  item.tooltip = node.tooltip;
  item.iconPath = new vscode.ThemeIcon(node.icon, node.alert ? new vscode.ThemeColor('list.warningForeground') : undefined);
  return item;
}

export function activate(context: vscode.ExtensionContext): void {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const runLog = vscode.window.createOutputChannel('Debug Sidecar: Run Log');
  const serverLog = vscode.window.createOutputChannel('Debug Sidecar: Server', { log: true });
  const item = vscode.window.createStatusBarItem('debugSidecar.status', vscode.StatusBarAlignment.Left, 100);
  item.name = 'Debug Sidecar';
  const tree = new ListTree<LedgerNode>(ledgerItem);
  const view = vscode.window.createTreeView('debugSidecar.ledger', { treeDataProvider: tree });
  const agentsTree = new ListTree<AgentNode>(agentItem);
  const agentsView = vscode.window.createTreeView('debugSidecar.agents', { treeDataProvider: agentsTree });
  context.subscriptions.push(runLog, serverLog, item, tree, view, agentsTree, agentsView);

  const showMessage = async (m: UserMessage): Promise<void> => {
    const titles = m.actions.map((a) => a.title);
    const show =
      m.severity === 'error'
        ? vscode.window.showErrorMessage
        : m.severity === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const picked = await show(m.text, ...titles);
    const action = m.actions.find((a) => a.title === picked);
    if (action) await vscode.commands.executeCommand(action.command);
  };

  const ui: Ui = {
    status(v: StatusView) {
      item.text = v.text;
      item.tooltip = v.tooltip;
      item.command = v.command;
      item.backgroundColor =
        v.severity === 'error'
          ? new vscode.ThemeColor('statusBarItem.errorBackground')
          : v.severity === 'warning'
            ? new vscode.ThemeColor('statusBarItem.warningBackground')
            : undefined;
      item.show();
    },
    userTurn(prompt: UserTurnPrompt) {
      runLog.appendLine(prompt.detail);
      void vscode.window.showInformationMessage(prompt.message, ...prompt.buttons.map((b) => b.title)).then((picked) => {
        const button = prompt.buttons.find((b) => b.title === picked);
        if (button && controller) void controller.runAction(button.action);
      });
    },
    ledger(nodes: LedgerNode[]) {
      tree.set(nodes);
      view.badge = nodes.some((n) => n.marker !== 'live' && n.marker !== 'issued')
        ? { value: nodes.filter((n) => n.marker !== 'live' && n.marker !== 'issued').length, tooltip: 'missing or foreign probes' }
        : undefined;
    },
    agents(nodes: AgentNode[]) {
      agentsTree.set(nodes);
      const asking = nodes.filter((n) => n.alert).length;
      agentsView.badge = asking ? { value: asking, tooltip: 'subagents that failed or ask a question' } : undefined;
    },
    log(lines: string[]) {
      for (const line of lines) runLog.appendLine(line);
    },
    clearLog() {
      runLog.clear();
    },
    message(m: UserMessage) {
      void showMessage(m);
    },
    commands(state: CommandState) {
      // For the `when` clauses of the command palette (package.json).
      void vscode.commands.executeCommand('setContext', 'debugSidecar.running', state.running);
      for (const [key, command] of Object.entries(LEGAL_KEYS)) {
        void vscode.commands.executeCommand('setContext', key, state.legal.includes(command));
      }
    },
  };

  const noFolder = (): void => {
    void vscode.window.showWarningMessage('Debug Mode needs an open folder: open the project folder first.');
  };

  if (folder) {
    controller = new SidecarController(makeLauncher(folder, serverLog), ui, {
      binaryPath: () => configuredPath(folder.uri),
      settingsTab,
    });
    void controller.startServer();
  }

  // A command waits for a start in flight; a stopped or missing sidecar is reported with
  // its Restart button (the person restarts it; a command never restarts it silently).
  const ready = async (): Promise<SidecarController | null> => {
    if (!controller) {
      noFolder();
      return null;
    }
    await controller.settled();
    return controller.ensureRunning() ? controller : null;
  };

  const register = (id: string, fn: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };

  register('debugSidecar.start', async () => {
    const c = await ready();
    if (!c) return;
    const problem = await vscode.window.showInputBox({
      title: 'Debug Mode: Start',
      prompt: 'What goes wrong? The agent will test hypotheses with runtime probes.',
      placeHolder: 'Checkout total ignores the 3-item discount.',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'Describe the problem.' : undefined),
    });
    if (problem !== undefined) await c.start(problem);
  });
  register('debugSidecar.proceed', async () => {
    const c = await ready();
    if (!c) return;
    const note = await vscode.window.showInputBox({
      title: 'Debug Mode: Proceed',
      prompt: 'What did you see? (optional; Enter to skip)',
      ignoreFocusOut: true,
    });
    if (note !== undefined) await c.proceed(note);
  });
  register('debugSidecar.mark', async () => {
    const c = await ready();
    if (!c) return;
    const words = await vscode.window.showInputBox({
      title: 'Debug Mode: Mark This Moment',
      prompt: 'What just happened? (optional; Enter to mark without words)',
      ignoreFocusOut: true,
    });
    if (words !== undefined) await c.mark(words);
  });
  register('debugSidecar.markFixed', async () => {
    const c = await ready();
    if (c) await c.markFixed();
  });
  register('debugSidecar.abort', async () => {
    const c = await ready();
    if (!c) return;
    const ok = await vscode.window.showWarningMessage(
      'Abort the debug session? Probes in your files are not removed.',
      { modal: true },
      'Abort',
    );
    if (ok === 'Abort') await c.abort();
  });
  register('debugSidecar.showLedger', async () => {
    const c = await ready();
    if (!c) return;
    await vscode.commands.executeCommand('debugSidecar.ledger.focus');
    await c.refreshLedger(true);
  });
  register('debugSidecar.showLogs', async () => {
    const c = await ready();
    if (!c) return;
    runLog.show(true);
    await c.showLogs();
  });
  register('debugSidecar.checkLeftovers', async () => {
    const c = await ready();
    if (c) await c.checkLeftovers();
  });
  register('debugSidecar.restart', async () => {
    if (!controller) return noFolder();
    serverLog.info('restarting debug-sidecar: Restart was pressed');
    await controller.restart();
  });
  register('debugSidecar.statusMenu', async () => {
    if (!controller) return noFolder();
    const snap = controller.snapshot;
    const title =
      snap?.active && snap.stage === 'user_turn'
        ? `Your turn (round ${snap.round ?? '?'}): reproduce, then Proceed or Mark fixed`
        : (controller.currentStatus().tooltip.split('\n')[0] ?? 'Debug Mode');
    const picked = await vscode.window.showQuickPick(statusMenu(controller.server, snap), { title, matchOnDetail: true });
    if (picked) await vscode.commands.executeCommand(picked.command);
  });
  register('debugSidecar.openLocation', async (arg: unknown) => {
    const loc = arg as LedgerLocation | undefined;
    if (!loc || !folder) return;
    const uri = path.isAbsolute(loc.file) ? vscode.Uri.file(loc.file) : vscode.Uri.joinPath(folder.uri, ...loc.file.split('/'));
    const line = Math.max(0, (loc.line ?? 1) - 1);
    const pos = new vscode.Position(line, 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), preview: true });
  });
  // The tab the setting is read from: Remote in a remote window, where the User tab shows
  // "No Settings Found" for a machine-overridable setting.
  register(SETTINGS_COMMAND, () =>
    settingsTab() === 'Remote'
      ? vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: 'debugSidecar.path' })
      : vscode.commands.executeCommand('workbench.action.openSettings', 'debugSidecar.path'),
  );

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      const changed = ['debugSidecar.path', 'debugSidecar.sessionId'].filter((key) => e.affectsConfiguration(key));
      if (controller && changed.length > 0) {
        serverLog.info(`restarting debug-sidecar: ${changed.join(' and ')} changed`);
        void controller.restart();
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  const c = controller;
  controller = null;
  if (c) await c.dispose();
}
