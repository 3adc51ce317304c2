// QPS at equal recall@10: each system's fastest measured point whose recall reaches a target (ARCHITECTURE.md
// §10.6), with its width, recall and plan, and the ratios the issue's targets are stated in. No figure is
// drawn between two points: a store's plan can change from one width to the next (a graph walk, then an
// exact scan), so a value between two points describes no search that ran.

import type { Row, SystemName } from './common.ts';

export const TARGET_RECALLS = [0.95, 0.99] as const;

/**
 * arkivector ÷ peer QPS at equal recall (unfiltered), with the target each ratio is held to: the hnswlib-node
 * store engine's, and for the native one ≥ 1.5× raw hnswlib-node as npm builds it.
 */
export const RATIO_TARGETS: ReadonlyArray<{ base: SystemName; peer: SystemName; target: number }> = [
  { base: 'arkivector', peer: 'pgvector', target: 3 },
  { base: 'arkivector', peer: 'pglite-pgvector', target: 10 },
  { base: 'arkivector', peer: 'hnswlib-node', target: 0.9 },
  { base: 'arkivector-native', peer: 'hnswlib-node', target: 1.5 },
];

/**
 * A system at a target recall: `measured`, the fastest point measured at or above it (its QPS, width,
 * recall and, for a store, the plans its searches took); `not_reached`, no point got there (the best
 * recall measured instead). A scan has no width (ef null).
 */
export type AtRecall = {
  qps: number | null;
  kind: 'measured' | 'not_reached';
  ef: number | null;
  recall: number | null;
  /** How the point's searches were answered (search_modes), when the system reports it. */
  plan?: string;
  /** not_reached: the highest recall any point measured. */
  best_recall?: number;
};

/**
 * A point's plan from its search modes: the one mode, or every mode with its share, most used first.
 * @example planOf({ search_modes: { exact: 15, hnsw: 485 } }) // 'hnsw 97 % / exact 3 %'
 */
export function planOf(r: Pick<Row, 'search_modes'>): string | undefined {
  const modes = Object.entries(r.search_modes ?? {}).filter(([, n]) => n > 0);
  if (modes.length === 0) return undefined;
  if (modes.length === 1) return modes[0]![0];
  const total = modes.reduce((s, [, n]) => s + n, 0);
  return modes
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([mode, n]) => `${mode} ${Math.round((100 * n) / total)} %`)
    .join(' / ');
}

/**
 * @param points one system's rows in one case, any order (swept widths, or a scan's one point)
 * @param recall the target recall@10
 * @returns the fastest point at or above it (ties: higher recall, then narrower width), or not_reached
 * @example qpsAtRecall(rows, 0.95) // { qps: 12416, kind: 'measured', ef: 32, recall: 1, plan: 'exact' }
 */
export function qpsAtRecall(points: Row[], recall: number): AtRecall {
  let best: Row | undefined;
  for (const p of points) {
    if (p.recall_at_10 < recall) continue;
    if (
      best === undefined ||
      p.qps > best.qps ||
      (p.qps === best.qps &&
        (p.recall_at_10 > best.recall_at_10 ||
          (p.recall_at_10 === best.recall_at_10 && (p.ef ?? -1) < (best.ef ?? -1))))
    )
      best = p;
  }
  if (best === undefined) {
    const top = points.reduce((m, p) => Math.max(m, p.recall_at_10), 0);
    return { qps: null, kind: 'not_reached', ef: null, recall: null, best_recall: top };
  }
  const plan = planOf(best);
  return {
    qps: best.qps,
    kind: 'measured',
    ef: best.ef,
    recall: best.recall_at_10,
    ...(plan === undefined ? {} : { plan }),
  };
}

/** A measured standing as text: `QPS (ef W | scan, recall[, plan])`; not reached: the best recall instead. */
export function standingText(a: AtRecall | undefined): string {
  if (a === undefined) return '-';
  if (a.qps === null) return `not reached (best ${(a.best_recall ?? 0).toFixed(3)})`;
  const qps = a.qps >= 100 ? String(Math.round(a.qps)) : a.qps.toFixed(1);
  const where = a.ef === null ? 'scan' : `ef ${a.ef}`;
  return `${qps} (${where}, ${a.recall!.toFixed(3)}${a.plan === undefined ? '' : `, ${a.plan}`})`;
}

/** A row's system as the tables name it: `system[:variant][#run]` (plain `system` for a first, single-way run). */
export function labelOf(r: Row): string {
  return `${r.system}${r.variant ? `:${r.variant}` : ''}${r.run !== undefined && r.run > 1 ? `#${r.run}` : ''}`;
}

export type Comparison = {
  targets: number[];
  systems: Partial<Record<SystemName, Record<string, AtRecall>>>;
  ratios: Array<{
    recall: number;
    base: SystemName;
    peer: SystemName;
    target: number;
    /** base ÷ peer, each at its fastest measured point at or above `recall`; null when either has none. */
    ratio: number | null;
    met: boolean | null;
  }>;
};

export function compare(rows: Row[]): Comparison {
  const bySystem = new Map<SystemName, Row[]>();
  for (const r of rows) {
    if (r.ef === null || r.case !== undefined) continue;
    const key = labelOf(r) as SystemName;
    bySystem.set(key, [...(bySystem.get(key) ?? []), r]);
  }
  const systems: Comparison['systems'] = {};
  for (const [name, pts] of bySystem) {
    systems[name] = Object.fromEntries(TARGET_RECALLS.map((t) => [String(t), qpsAtRecall(pts, t)]));
  }
  const ratios: Comparison['ratios'] = [];
  for (const recall of TARGET_RECALLS) {
    for (const { base, peer, target } of RATIO_TARGETS) {
      const ark = systems[base]?.[String(recall)];
      const other = systems[peer]?.[String(recall)];
      if (ark === undefined || other === undefined) continue;
      const ratio = ark.qps !== null && other.qps !== null ? ark.qps / other.qps : null;
      ratios.push({ recall, base, peer, target, ratio, met: ratio === null ? null : ratio >= target });
    }
  }
  return { targets: [...TARGET_RECALLS], systems, ratios };
}

const pad = (s: string, w: number): string => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));

/** The comparison as a text table for stdout. */
export function formatComparison(c: Comparison): string {
  const lines = ['QPS at equal recall@10 (the fastest measured point at or above it: ef, recall, plan):'];
  lines.push(pad('system', 18) + c.targets.map((t) => pad(`@${t}`, 36)).join(''));
  for (const [name, at] of Object.entries(c.systems)) {
    lines.push(pad(name, 18) + c.targets.map((t) => pad(standingText(at?.[String(t)]), 36)).join(''));
  }
  lines.push('');
  for (const r of c.ratios) {
    const value = r.ratio === null ? 'n/a' : `${r.ratio.toFixed(2)}×`;
    const verdict = r.met === null ? '' : r.met ? 'met' : 'NOT met';
    lines.push(
      `${pad(r.base, 18)}÷ ${pad(r.peer, 16)} @${r.recall}: ${pad(value, 9)} (target ≥ ${r.target}×) ${verdict}`,
    );
  }
  return lines.join('\n');
}

export type FullComparison = {
  targets: number[];
  /** case ('unfiltered', 'random-1', …) → label → target → standing */
  cases: Record<string, Record<string, Record<string, AtRecall>>>;
  /** best recall each label reached per case (what a sweep that never got to 0.99 ended at) */
  best: Record<string, Record<string, { recall: number; qps: number; ef: number | null }>>;
  /** `base` (arkivector, arkivector-native) ÷ every other label, per case and target, measured point ÷ point. */
  ratios: Array<{
    case: string;
    recall: number;
    base: string;
    peer: string;
    ratio: number | null;
  }>;
};

/** The labels ratios are taken of: arkivector's first run with each engine. */
export const OURS = ['arkivector', 'arkivector-native'] as const;

/**
 * Every system (label) at equal recall in every case, and each of {@link OURS} present ÷ each other label.
 * A scan (one point, ef null) stands at its one QPS for every target its recall meets.
 */
export function compareAll(rows: Row[]): FullComparison {
  const cases: FullComparison['cases'] = {};
  const best: FullComparison['best'] = {};
  const groups = new Map<string, Map<string, Row[]>>();
  for (const r of rows) {
    const c = r.case ?? 'unfiltered';
    const byLabel = groups.get(c) ?? new Map<string, Row[]>();
    groups.set(c, byLabel);
    byLabel.set(labelOf(r), [...(byLabel.get(labelOf(r)) ?? []), r]);
  }
  for (const [c, byLabel] of groups) {
    cases[c] = {};
    best[c] = {};
    for (const [label, pts] of byLabel) {
      cases[c]![label] = Object.fromEntries(TARGET_RECALLS.map((t) => [String(t), qpsAtRecall(pts, t)]));
      const top = [...pts].sort((a, b) => b.recall_at_10 - a.recall_at_10 || b.qps - a.qps)[0]!;
      best[c]![label] = { recall: top.recall_at_10, qps: top.qps, ef: top.ef };
    }
  }
  const ratios: FullComparison['ratios'] = [];
  for (const [c, byLabel] of Object.entries(cases)) {
    for (const base of OURS) {
      const ours = byLabel[base];
      if (ours === undefined) continue;
      for (const [peer, at] of Object.entries(byLabel)) {
        if (peer === base) continue;
        for (const t of TARGET_RECALLS) {
          const a = ours[String(t)]!;
          const p = at[String(t)]!;
          ratios.push({
            case: c,
            recall: t,
            base,
            peer,
            ratio: a.qps !== null && p.qps !== null ? a.qps / p.qps : null,
          });
        }
      }
    }
  }
  return { targets: [...TARGET_RECALLS], cases, best, ratios };
}

/** compareAll as text: one table per case, then arkivector ÷ each peer. */
export function formatFull(c: FullComparison): string {
  const lines: string[] = [];
  for (const [name, byLabel] of Object.entries(c.cases)) {
    lines.push(`QPS at equal recall@10, ${name} (the fastest measured point at or above it: ef, recall, plan):`);
    lines.push(`${pad('system', 32)}${c.targets.map((t) => pad(`@${t}`, 40)).join('')}best recall (QPS there)`);
    for (const [label, at] of Object.entries(byLabel)) {
      const b = c.best[name]![label]!;
      const bestCell = `${b.recall.toFixed(3)} (${b.qps >= 100 ? Math.round(b.qps) : b.qps.toFixed(1)}${b.ef === null ? '' : ` @ ef ${b.ef}`})`;
      lines.push(`${pad(label, 32)}${c.targets.map((t) => pad(standingText(at[String(t)]), 40)).join('')}${bestCell}`);
    }
    lines.push('');
  }
  lines.push('arkivector ÷ peer, QPS at equal recall (measured point ÷ measured point):');
  for (const r of c.ratios) {
    const value = r.ratio === null ? 'n/a' : `${r.ratio.toFixed(2)}×`;
    lines.push(`  ${pad(r.case, 13)} @${r.recall}  ${pad(r.base, 18)}÷ ${pad(r.peer, 32)} ${value}`);
  }
  return lines.join('\n');
}
