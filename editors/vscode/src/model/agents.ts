// The "Subagents" tree: one row per subagent record of the session (`agents/list`, kept
// current by `agents/changed`), in the order they first appeared. The label is its name
// (see `label`); the description its status and work; the tooltip its id, task, result,
// error or question.
import type { AgentRecord } from './protocol';

export interface AgentNode {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** A codicon name for the row. */
  icon: string;
  /** Whether the row asks for attention (an error, a pending question). */
  alert: boolean;
}

const ICON: Record<string, string> = {
  queued: 'clock',
  running: 'sync~spin',
  completed: 'pass',
  steered: 'arrow-right',
  aborted: 'circle-slash',
  error: 'error',
  stopped: 'debug-stop',
};

/** At most this much of a result, error or question in a tooltip. */
const TIP = 600;

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** An id up to this long is a name a person reads (oh-my-pi's `Alpha`); a longer one is
 * machine-made (pi-subagents' `<run uuid>:<index>`), and the row is named by its task. */
const NAME = 24;
/** At most this much of a task as a row's label. */
const LABEL = 60;

function label(r: AgentRecord): string {
  const task = r.description?.replace(/\s+/g, ' ').trim();
  return r.id.length <= NAME || !task ? r.id : cut(task, LABEL);
}

export function agentNodes(records: AgentRecord[]): AgentNode[] {
  return records.map((r) => {
    // Only a subagent still at work can be waiting for an answer.
    const live = r.status === 'queued' || r.status === 'running';
    const asking = live && r.pendingQuestion ? 'asks a question' : null;
    const work = [
      r.toolUses ? `${r.toolUses} tool${r.toolUses === 1 ? '' : 's'}` : null,
      r.turns ? `${r.turns} turn${r.turns === 1 ? '' : 's'}` : null,
    ].filter((x): x is string => x !== null);
    const description = [asking ?? r.status, r.type ?? null, ...work].filter((x) => x).join(' · ');
    const tips = [`Subagent ${r.id}${r.type ? ` (${r.type})` : ''}: ${r.status}`];
    if (r.description) tips.push(cut(r.description, TIP));
    if (asking) tips.push(`Asks: ${cut(r.pendingQuestion ?? '', TIP)}`);
    if (r.result) tips.push(`Result: ${cut(r.result, TIP)}`);
    if (r.error) tips.push(`Error: ${cut(r.error, TIP)}`);
    if (r.usage && r.usage.input + r.usage.output > 0) tips.push(`Tokens: ${r.usage.input} in, ${r.usage.output} out`);
    return {
      id: r.id,
      label: label(r),
      description,
      tooltip: tips.join('\n'),
      // A question waits on the person's agent, not on the subagent's work.
      icon: asking ? 'question' : ICON[r.status] ?? 'circle-outline',
      alert: r.status === 'error' || asking !== null,
    };
  });
}

/** `records` with `changed` in place of the record of its id (or added at the end). */
export function withRecord(records: AgentRecord[], changed: AgentRecord): AgentRecord[] {
  const at = records.findIndex((r) => r.id === changed.id);
  if (at < 0) return [...records, changed];
  const next = records.slice();
  next[at] = changed;
  return next;
}
