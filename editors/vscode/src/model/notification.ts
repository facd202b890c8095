// The notification shown when the round is handed to the person (stage `user_turn`):
// the reproduction steps with Proceed / Mark fixed buttons, once per hand-off.
import type { HandoffMode, Snapshot } from './protocol';

export type UserAction = 'proceed' | 'done' | 'abort';

export interface PromptButton {
  title: string;
  action: UserAction;
}

export interface UserTurnPrompt {
  /** Identifies the hand-off: the same key is never shown twice. */
  key: string;
  /** One-line message (VS Code notifications show one paragraph). */
  message: string;
  /** The same, with one step per line, for a modal or a log. */
  detail: string;
  buttons: PromptButton[];
}

const LEAD: Record<HandoffMode, string> = {
  reproduce: 'Your turn: reproduce the problem',
  capture: 'Your turn: capture what the agent asked for',
  question: 'The agent has a question',
  incomplete: 'The agent stopped without handing over; your turn',
};

function handoffKey(s: Snapshot): string {
  return [s.sessionId, s.runId ?? '', String(s.round ?? ''), s.handoff ?? '', s.steps.join('\u0001')].join('\u0000');
}

/**
 * The prompt to show for `next`, or null when there is none (not `user_turn`, or this
 * hand-off was already shown: `shownKey` is the key of the last prompt shown).
 */
export function userTurnPrompt(next: Snapshot, shownKey: string | null): UserTurnPrompt | null {
  if (!next.active || next.stage !== 'user_turn') return null;
  const key = handoffKey(next);
  if (key === shownKey) return null;

  const lead = `${LEAD[next.handoff ?? 'reproduce'] ?? LEAD.reproduce} (round ${next.round ?? '?'})`;
  const steps = next.steps.map((step, i) => `${i + 1}. ${step}`);
  const pending = next.pendingUserActions
    .filter((r) => r.method === 'user_report' || r.method === 'user_artifact')
    .map((r) => `${r.id}: ${(r.instructions ?? []).join(' ') || r.method}${r.artifactHint ? ` (${r.artifactHint})` : ''}`);

  const message = [
    `${lead}.`,
    steps.length > 0 ? steps.join(' ') : 'No steps were given.',
    pending.length > 0 ? `Still needed: ${pending.join('; ')}.` : '',
    'Then press Proceed, or Mark fixed if the bug is gone.',
  ]
    .filter((x) => x.length > 0)
    .join(' ');

  const detail = [
    `${lead}:`,
    ...(steps.length > 0 ? steps : ['(no steps were given)']),
    ...(pending.length > 0 ? ['Still needed:', ...pending.map((p) => `- ${p}`)] : []),
  ].join('\n');

  const buttons: PromptButton[] = [];
  if (next.userCommands.includes('proceed')) buttons.push({ title: 'Proceed', action: 'proceed' });
  if (next.userCommands.includes('done')) buttons.push({ title: 'Mark fixed', action: 'done' });
  return { key, message, detail, buttons };
}
