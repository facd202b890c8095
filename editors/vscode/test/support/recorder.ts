// A Ui that records what the person would see, for assertions and the README capture.
import type { UserMessage } from '../../src/model/errors';
import type { AgentNode } from '../../src/model/agents';
import { ledgerText, type LedgerNode } from '../../src/model/ledger';
import type { UserTurnPrompt } from '../../src/model/notification';
import type { StatusView } from '../../src/model/status';
import type { CommandState, Ui } from '../../src/session';

export type Event =
  | { kind: 'status'; view: StatusView }
  | { kind: 'userTurn'; prompt: UserTurnPrompt }
  | { kind: 'ledger'; nodes: LedgerNode[] }
  | { kind: 'agents'; nodes: AgentNode[] }
  | { kind: 'log'; lines: string[] }
  | { kind: 'clearLog' }
  | { kind: 'message'; message: UserMessage }
  | { kind: 'commands'; state: CommandState };

export class RecordingUi {
  readonly events: Event[] = [];
  status: StatusView | null = null;
  prompts: UserTurnPrompt[] = [];
  messages: UserMessage[] = [];
  ledgerNodes: LedgerNode[] = [];
  agentNodes: AgentNode[] = [];
  output: string[] = [];
  commands: CommandState = { running: false, legal: [] };
  private waiters: Array<() => void> = [];

  private push(e: Event): void {
    this.events.push(e);
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  // Ui
  readonly ui: Ui = {
    status: (view) => {
      this.status = view;
      this.push({ kind: 'status', view });
    },
    userTurn: (prompt) => {
      this.prompts.push(prompt);
      this.push({ kind: 'userTurn', prompt });
    },
    ledger: (nodes) => {
      this.ledgerNodes = nodes;
      this.push({ kind: 'ledger', nodes });
    },
    agents: (nodes) => {
      this.agentNodes = nodes;
      this.push({ kind: 'agents', nodes });
    },
    log: (lines) => {
      this.output.push(...lines);
      this.push({ kind: 'log', lines });
    },
    clearLog: () => {
      this.output = [];
      this.push({ kind: 'clearLog' });
    },
    message: (message) => {
      this.messages.push(message);
      this.push({ kind: 'message', message });
    },
    commands: (state) => {
      this.commands = state;
      this.push({ kind: 'commands', state });
    },
  };

  /** Wait until `pred` holds (checked after every UI event), or fail after `ms`. */
  async until(what: string, pred: () => boolean, ms = 8000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; last status: ${this.status?.text ?? '(none)'}; messages: ${JSON.stringify(this.messages.map((m) => m.text))}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  ledgerText(): string {
    return ledgerText(this.ledgerNodes);
  }
}
