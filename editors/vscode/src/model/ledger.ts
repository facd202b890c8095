// The "Probe Ledger" tree: one row per probe (file:line, then probe and hypothesis), then the
// foreign and half-removed markers the last scan found. Missing and foreign rows are marked.
// The label is the location: a narrow sidebar cuts the end of a row, never where it is.
import type { ForeignKind, Hypothesis, ProbesResult } from './protocol';

export type LedgerMarker = 'live' | 'issued' | 'missing' | 'foreign' | 'halfRemoved';

export interface LedgerLocation {
  /** Workspace-relative path with `/` separators (as the sidecar reports it). */
  file: string;
  /** 1-based line, or null when no scan has located it. */
  line: number | null;
}

export interface LedgerNode {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  marker: LedgerMarker;
  /** A codicon name for the row. */
  icon: string;
  location: LedgerLocation | null;
}

const FOREIGN_TEXT: Record<ForeignKind, string> = {
  cursorAgentLog: "Cursor's agent log block",
  ingestUrl: 'ingest URL outside a probe block',
  otherSession: "another session's probe",
};

const MARKER_TEXT: Record<LedgerMarker, string> = {
  live: 'live',
  issued: 'issued, not on disk yet',
  missing: 'MISSING from disk',
  foreign: 'FOREIGN',
  halfRemoved: 'HALF-REMOVED',
};

const MARKER_ICON: Record<LedgerMarker, string> = {
  live: 'pass',
  issued: 'circle-large-outline',
  missing: 'warning',
  foreign: 'question',
  halfRemoved: 'error',
};

export function where(file: string, line: number | null | undefined): string {
  return typeof line === 'number' ? `${file}:${line}` : file;
}

export function ledgerNodes(result: ProbesResult, hypotheses: Hypothesis[] = []): LedgerNode[] {
  const statement = new Map(hypotheses.map((h) => [h.id, h]));
  const missing = new Set(result.missing);
  const nodes: LedgerNode[] = [];
  for (const p of result.probes) {
    const marker: LedgerMarker = missing.has(p.id) ? 'missing' : p.state;
    const hyp = p.hypothesisId ?? null;
    const h = hyp !== null ? statement.get(hyp) : undefined;
    const tips = [`Probe ${p.id} (round ${p.round}${p.language ? `, ${p.language}` : ''}): ${MARKER_TEXT[marker]}`];
    tips.push(hyp !== null ? `Hypothesis ${hyp}${h ? ` [${h.status}]: ${h.statement}` : ''}` : 'No hypothesis');
    tips.push(where(p.file, p.line));
    nodes.push({
      id: `probe:${p.id}`,
      label: where(p.file, p.line),
      description: `${p.id} · ${hyp ?? 'no hypothesis'}${marker === 'live' ? '' : ` — ${MARKER_TEXT[marker]}`}`,
      tooltip: tips.join('\n'),
      marker,
      icon: MARKER_ICON[marker],
      location: { file: p.file, line: p.line ?? null },
    });
  }
  result.foreign.forEach((f, i) => {
    nodes.push({
      id: `foreign:${i}:${f.file}:${f.line}`,
      label: where(f.file, f.line),
      description: `${MARKER_TEXT.foreign} · ${FOREIGN_TEXT[f.kind] ?? f.kind}`,
      tooltip: `${FOREIGN_TEXT[f.kind] ?? f.kind} at ${where(f.file, f.line)}\n${f.text}`,
      marker: 'foreign',
      icon: MARKER_ICON.foreign,
      location: { file: f.file, line: f.line },
    });
  });
  result.halfRemoved.forEach((h, i) => {
    nodes.push({
      id: `half:${i}:${h.file}:${h.line}`,
      label: where(h.file, h.line),
      description: `${MARKER_TEXT.halfRemoved} · ${h.probeId} marker without its pair`,
      tooltip: `A start marker without its end, or an end without its start, of probe ${h.probeId}. Remove the rest of the block.`,
      marker: 'halfRemoved',
      icon: MARKER_ICON.halfRemoved,
      location: { file: h.file, line: h.line },
    });
  });
  return nodes;
}

/** What the tree shows, as text (for logs, tests and the README capture). */
export function ledgerText(nodes: LedgerNode[]): string {
  if (nodes.length === 0) return '(no probes)';
  return nodes.map((n) => `${n.label}  ${n.description}`).join('\n');
}

export interface LeftoverReport {
  clean: boolean;
  message: string;
}

/** "Check for Leftover Probes": what is still on disk after a rescan. */
export function leftoverReport(result: ProbesResult): LeftoverReport {
  const onDisk = result.probes.filter((p) => p.state === 'live');
  const items = [
    ...onDisk.map((p) => `${p.id} at ${where(p.file, p.line)}`),
    ...result.foreign.map((f) => `${FOREIGN_TEXT[f.kind] ?? f.kind} at ${where(f.file, f.line)}`),
    ...result.halfRemoved.map((h) => `half-removed ${h.probeId} at ${where(h.file, h.line)}`),
  ];
  if (items.length === 0) {
    return { clean: true, message: 'No leftover probes: the workspace scan found no probe markers.' };
  }
  return {
    clean: false,
    message: `${items.length} leftover probe marker(s): ${items.join('; ')}.`,
  };
}
