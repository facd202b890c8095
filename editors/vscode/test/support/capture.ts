// Prints what the person sees, step by step, from a RecordingUi (for the README).
import { ledgerText } from '../../src/model/ledger';
import type { RecordingUi } from './recorder';

export class Capture {
  private readonly out: string[] = [];
  private seen = 0;
  private lastLedger = '';
  constructor(private readonly rec: RecordingUi) {}

  step(title: string): void {
    this.out.push(`── ${title}`);
    const fresh = this.rec.events.slice(this.seen);
    this.seen = this.rec.events.length;
    for (const e of fresh) {
      if (e.kind === 'message') {
        const buttons = e.message.actions.map((a) => ` [${a.title}]`).join('');
        this.out.push(`  ${e.message.severity.padEnd(7)} ${e.message.text}${buttons}`);
      } else if (e.kind === 'userTurn') {
        this.out.push(`  notify  ${e.prompt.message}${e.prompt.buttons.map((b) => ` [${b.title}]`).join('')}`);
      } else if (e.kind === 'log') {
        for (const l of e.lines) this.out.push(`  output  ${l}`);
      }
    }
    this.out.push(`  status  ${this.rec.status?.text ?? '(none)'}`);
    const ledger = ledgerText(this.rec.ledgerNodes);
    if (ledger !== this.lastLedger) {
      this.lastLedger = ledger;
      this.out.push('  Probe Ledger:');
      for (const l of ledger.split('\n')) this.out.push(`    ${l}`);
    }
  }

  text(): string {
    return this.out.join('\n') + '\n';
  }
}
