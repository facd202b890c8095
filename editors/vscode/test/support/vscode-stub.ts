// A stand-in for the `vscode` module, enough to run extension.ts and the real
// LanguageClient under node (VS Code itself cannot be downloaded here). What the extension
// shows is recorded; message buttons and input boxes are answered from scripted queues.
import * as path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...ds: Array<{ dispose(): unknown }>): Disposable {
    return new Disposable(() => ds.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (l: Listener<T>): Disposable => {
    this.listeners.add(l);
    return new Disposable(() => this.listeners.delete(l));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
    private readonly href: string,
  ) {}
  get path(): string {
    return this.fsPath;
  }
  static file(p: string): Uri {
    return new Uri('file', p, pathToFileURL(p).href);
  }
  static parse(s: string): Uri {
    return s.startsWith('file:') ? Uri.file(fileURLToPath(s)) : new Uri(s.split(':')[0] ?? '', s, s);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return Uri.file(path.join(base.fsPath, ...parts));
  }
  toString(): string {
    return this.href;
  }
  with(): Uri {
    return this;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}
export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  constructor(
    readonly start: Position,
    readonly end: Position,
  ) {}
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  iconPath?: unknown;
  command?: { command: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState?: number,
  ) {}
}
export class CancellationError extends Error {}
export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export const StatusBarAlignment = { Left: 1, Right: 2 };
export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 };
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };
export class TabInputText {}
export class TabInputTextDiff {}
export class TabInputNotebook {}
export class TabInputCustom {}
export const version = '1.91.0';

// ------------------------------------------------------------------ recorded UI

export interface Shown {
  severity: 'info' | 'warning' | 'error';
  text: string;
  buttons: string[];
}

export const recorded = {
  status: { text: '', tooltip: '' as unknown, command: '' as unknown, visible: false },
  shown: [] as Shown[],
  output: new Map<string, string[]>(),
  tree: null as null | { getChildren(): unknown[]; getTreeItem(n: unknown): TreeItem },
  /** Every tree view by its id (`recorded.tree` is the Probe Ledger's). */
  trees: new Map<string, { getChildren(): unknown[]; getTreeItem(n: unknown): TreeItem }>(),
  executed: [] as string[],
  /** Answers for message buttons: a function of the message, or undefined (dismissed). */
  answer: (_m: Shown): string | undefined => undefined,
  inputs: [] as Array<string | undefined>,
  /** Context keys set with `setContext` (for `when` clauses). */
  context: new Map<string, unknown>(),
};

const commands = new Map<string, (...args: unknown[]) => unknown>();
const config = new Map<string, unknown>();
const configEmitter = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
const noopEvent = (): Disposable => new Disposable();

export function setConfig(key: string, value: unknown): void {
  config.set(key, value);
  configEmitter.fire({ affectsConfiguration: (s: string) => key === s || key.startsWith(`${s}.`) });
}

function outputChannel(name: string) {
  const lines: string[] = [];
  recorded.output.set(name, lines);
  let partial = '';
  const log = (level: string) => (msg: string) => lines.push(`[${level}] ${msg}`);
  return {
    name,
    logLevel: 2,
    onDidChangeLogLevel: noopEvent,
    append: (s: string) => {
      partial += s;
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    },
    appendLine: (s: string) => lines.push(s),
    replace: () => undefined,
    clear: () => lines.splice(0),
    show: () => undefined,
    hide: () => undefined,
    dispose: () => undefined,
    trace: log('trace'),
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: (m: unknown) => lines.push(`[error] ${String(m)}`),
  };
}

function show(severity: Shown['severity']) {
  return (text: string, ...rest: unknown[]): Promise<string | undefined> => {
    const buttons = rest.filter((x): x is string => typeof x === 'string');
    const m = { severity, text, buttons };
    recorded.shown.push(m);
    const a = recorded.answer(m);
    return Promise.resolve(a !== undefined && buttons.includes(a) ? a : undefined);
  };
}

export const window = {
  createOutputChannel: (name: string) => outputChannel(name),
  createStatusBarItem: () => {
    const item = {
      name: '',
      backgroundColor: undefined as unknown,
      show: () => {
        recorded.status.visible = true;
      },
      hide: () => {
        recorded.status.visible = false;
      },
      dispose: () => undefined,
    };
    return Object.defineProperties(item, {
      text: { get: () => recorded.status.text, set: (v: string) => (recorded.status.text = v) },
      tooltip: { get: () => recorded.status.tooltip, set: (v: unknown) => (recorded.status.tooltip = v) },
      command: { get: () => recorded.status.command, set: (v: unknown) => (recorded.status.command = v) },
    });
  },
  createTreeView: (id: string, opts: { treeDataProvider: NonNullable<typeof recorded.tree> }) => {
    recorded.trees.set(id, opts.treeDataProvider);
    if (id === 'debugSidecar.ledger') recorded.tree = opts.treeDataProvider;
    return { badge: undefined as unknown, dispose: () => undefined };
  },
  showInformationMessage: show('info'),
  showWarningMessage: show('warning'),
  showErrorMessage: show('error'),
  showInputBox: async () => recorded.inputs.shift(),
  showQuickPick: async () => undefined,
  showTextDocument: async () => undefined,
  withProgress: async (_o: unknown, task: (p: unknown) => Promise<unknown>) => task({ report: () => undefined }),
  activeTextEditor: undefined,
  visibleTextEditors: [],
  onDidChangeActiveTextEditor: noopEvent,
  onDidChangeVisibleTextEditors: noopEvent,
  tabGroups: { all: [], onDidChangeTabs: noopEvent, onDidChangeTabGroups: noopEvent },
};

export const workspace = {
  workspaceFolders: undefined as undefined | Array<{ uri: Uri; name: string; index: number }>,
  textDocuments: [],
  notebookDocuments: [],
  getConfiguration: (section?: string) => ({
    get: <T>(key: string, dflt?: T): T | undefined => {
      const full = section ? `${section}.${key}` : key;
      return config.has(full) ? (config.get(full) as T) : dflt;
    },
    has: (key: string) => config.has(section ? `${section}.${key}` : key),
    update: async () => undefined,
  }),
  onDidChangeConfiguration: configEmitter.event,
  onDidOpenTextDocument: noopEvent,
  onDidCloseTextDocument: noopEvent,
  onDidChangeTextDocument: noopEvent,
  onWillSaveTextDocument: noopEvent,
  onDidSaveTextDocument: noopEvent,
  onDidChangeWorkspaceFolders: noopEvent,
  createFileSystemWatcher: () => ({ onDidCreate: noopEvent, onDidChange: noopEvent, onDidDelete: noopEvent, dispose: () => undefined }),
  applyEdit: async () => true,
};

export const commandsApi = {
  registerCommand: (id: string, fn: (...args: unknown[]) => unknown): Disposable => {
    if (commands.has(id)) throw new Error(`command ${id} already registered`);
    commands.set(id, fn);
    return new Disposable(() => commands.delete(id));
  },
  executeCommand: async (id: string, ...args: unknown[]): Promise<unknown> => {
    recorded.executed.push(id);
    if (id === 'setContext') {
      recorded.context.set(String(args[0]), args[1]);
      return undefined;
    }
    const fn = commands.get(id);
    return fn ? fn(...args) : undefined;
  },
};
export { commandsApi as commands };

export const languages = new Proxy(
  { match: () => 0, createDiagnosticCollection: () => ({ set: () => undefined, delete: () => undefined, clear: () => undefined, dispose: () => undefined }) } as Record<string, unknown>,
  { get: (t, k: string) => (k in t ? t[k] : () => new Disposable()) },
);

export const env = { appName: 'stub', language: 'en', openExternal: async () => true, machineId: 'stub', sessionId: 'stub' };
