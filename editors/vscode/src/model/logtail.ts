// The run log shown in the output channel: entries of the current run, each line once,
// whether it arrived through `debug/logAppended` or a "Show Run Logs" read.
import type { LogEntry } from './protocol';

function time(ts: unknown): string {
  if (typeof ts !== 'number' || !Number.isFinite(ts)) return '--:--:--.---';
  const d = new Date(ts);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}

/** One log entry as a line: `#3 12:00:01.250 p1 [H1] checkout.sh:7 count before check {"count":"3"}`. */
export function formatEntry(e: LogEntry): string {
  const entry = e.entry;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return `#${e.line} ${JSON.stringify(entry)}`;
  }
  const o = entry as Record<string, unknown>;
  const parts = [`#${e.line}`, time(o['timestamp'])];
  const probe = str(o['probeId']);
  if (probe) parts.push(probe);
  const hyp = str(o['hypothesisId']);
  if (hyp) parts.push(`[${hyp}]`);
  const loc = str(o['location']);
  if (loc) parts.push(loc);
  const msg = str(o['message']);
  if (msg) parts.push(msg);
  if (o['data'] !== undefined) parts.push(JSON.stringify(o['data']));
  const known = new Set(['timestamp', 'probeId', 'hypothesisId', 'location', 'message', 'data', 'sessionId', 'runId']);
  const rest = Object.keys(o).filter((k) => !known.has(k));
  if (rest.length > 0) parts.push(JSON.stringify(Object.fromEntries(rest.map((k) => [k, o[k]]))));
  return parts.join(' ');
}

export class LogTail {
  private run: string | null = null;
  private shown = new Set<number>();

  get currentRun(): string | null {
    return this.run;
  }

  get count(): number {
    return this.shown.size;
  }

  /**
   * Entries of `run` as output lines, skipping lines already shown. A new run starts
   * with a header line; the lines of an older run than the current one are not mixed in.
   */
  accept(run: string | null, entries: LogEntry[]): string[] {
    const out: string[] = [];
    if (run !== this.run) {
      this.run = run;
      this.shown = new Set();
      out.push(`── run ${run ?? '(none)'} ──`);
    }
    const fresh = entries.filter((e) => !this.shown.has(e.line)).sort((a, b) => a.line - b.line);
    for (const e of fresh) {
      this.shown.add(e.line);
      out.push(formatEntry(e));
    }
    return out;
  }

  /** Forget what was shown (the output was emptied). */
  reset(): void {
    this.run = null;
    this.shown = new Set();
  }

  /** Whether the tail already shows every line up to `lines`. */
  hasAll(run: string, lines: number): boolean {
    if (run !== this.run) return lines === 0;
    for (let i = 1; i <= lines; i++) if (!this.shown.has(i)) return false;
    return true;
  }
}
