// QPS at equal recall@10: each system's QPS at a target recall, interpolated log-linearly between the two
// swept widths that bracket it (ARCHITECTURE.md §10.6), and the ratios the issue's targets are stated in.

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
 * `exact`: interpolated between two swept points; `at_least`: the narrowest width swept already
 * exceeds the target, so the system's QPS there is a lower bound; `not_reached`: the widest width
 * swept stays below the target.
 */
export type AtRecall = { qps: number | null; kind: 'interpolated' | 'at_least' | 'not_reached'; ef_range: number[] };

export type Comparison = {
  targets: number[];
  systems: Partial<Record<SystemName, Record<string, AtRecall>>>;
  ratios: Array<{
    recall: number;
    base: SystemName;
    peer: SystemName;
    target: number;
    ratio: number | null;
    /** Set when either side is a bound: the ratio is then a bound too, not a measurement. */
    approximate: boolean;
    met: boolean | null;
  }>;
};

/**
 * @param points one system's rows, any order
 * @param recall the target recall@10
 * @returns its QPS at that recall
 * @example qpsAtRecall(rows, 0.95) // { qps: 2796, kind: 'interpolated', ef_range: [64, 100] }
 */
export function qpsAtRecall(points: Row[], recall: number): AtRecall {
  const s = points.filter((p) => p.ef !== null).sort((a, b) => a.ef! - b.ef!);
  const i = s.findIndex((p) => p.recall_at_10 >= recall);
  if (i < 0) return { qps: null, kind: 'not_reached', ef_range: [] };
  const hi = s[i]!;
  if (i === 0) return { qps: hi.qps, kind: 'at_least', ef_range: [hi.ef!] };
  const lo = s[i - 1]!;
  const t = (recall - lo.recall_at_10) / (hi.recall_at_10 - lo.recall_at_10);
  return {
    qps: Math.exp(Math.log(lo.qps) + t * (Math.log(hi.qps) - Math.log(lo.qps))),
    kind: 'interpolated',
    ef_range: [lo.ef!, hi.ef!],
  };
}

/** A row's system as the tables name it: `system[:variant][#run]` (plain `system` for a first, single-way run). */
export function labelOf(r: Row): string {
  return `${r.system}${r.variant ? `:${r.variant}` : ''}${r.run !== undefined && r.run > 1 ? `#${r.run}` : ''}`;
}

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
      ratios.push({
        recall,
        base,
        peer,
        target,
        ratio,
        approximate: ark.kind !== 'interpolated' || other.kind !== 'interpolated',
        met: ratio === null ? null : ratio >= target,
      });
    }
  }
  return { targets: [...TARGET_RECALLS], systems, ratios };
}

/** The comparison as a text table for stdout. */
export function formatComparison(c: Comparison): string {
  const pad = (s: string, w: number): string => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));
  const cell = (a: AtRecall | undefined): string => {
    if (a === undefined || a.qps === null) return a?.kind === 'not_reached' ? 'not reached' : '-';
    return `${a.kind === 'at_least' ? '≥ ' : ''}${Math.round(a.qps)} (ef ${a.ef_range.join('–')})`;
  };
  const lines = ['QPS at equal recall@10 (log-linear between the bracketing ef):'];
  lines.push(pad('system', 18) + c.targets.map((t) => pad(`@${t}`, 24)).join(''));
  for (const [name, at] of Object.entries(c.systems)) {
    lines.push(pad(name, 18) + c.targets.map((t) => pad(cell(at?.[String(t)]), 24)).join(''));
  }
  lines.push('');
  for (const r of c.ratios) {
    const value = r.ratio === null ? 'n/a' : `${r.approximate ? '~' : ''}${r.ratio.toFixed(2)}×`;
    const verdict = r.met === null ? '' : r.met ? 'met' : 'NOT met';
    lines.push(
      `${pad(r.base, 18)}÷ ${pad(r.peer, 16)} @${r.recall}: ${pad(value, 9)} (target ≥ ${r.target}×) ${verdict}`,
    );
  }
  return lines.join('\n');
}

/** One system's standing at a target recall in one case: swept (interpolated) or a single exact-scan point. */
export type Standing = AtRecall & { recall?: number };

export type FullComparison = {
  targets: number[];
  /** case ('unfiltered', 'random', 'clustered') → label → target → standing */
  cases: Record<string, Record<string, Record<string, Standing>>>;
  /** best recall each label reached per case (what a sweep that never got to 0.99 ended at) */
  best: Record<string, Record<string, { recall: number; qps: number; ef: number | null }>>;
  /** `base` (arkivector, arkivector-native) ÷ every other label, per case and target. */
  ratios: Array<{
    case: string;
    recall: number;
    base: string;
    peer: string;
    ratio: number | null;
    approximate: boolean;
  }>;
};

/** The labels ratios are taken of: arkivector's first run with each engine. */
export const OURS = ['arkivector', 'arkivector-native'] as const;

/**
 * Every system (label) at equal recall in every case, and each of {@link OURS} present ÷ each other label.
 * A single-point system (an exact scan, ef null) stands at its one QPS for every target its recall meets.
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
      const swept = pts.filter((p) => p.ef !== null);
      const at: Record<string, Standing> = {};
      for (const t of TARGET_RECALLS) {
        if (swept.length > 0) at[String(t)] = qpsAtRecall(swept, t);
        else {
          const p = pts[0]!;
          at[String(t)] =
            p.recall_at_10 >= t
              ? { qps: p.qps, kind: 'at_least', ef_range: [], recall: p.recall_at_10 }
              : { qps: null, kind: 'not_reached', ef_range: [], recall: p.recall_at_10 };
        }
      }
      cases[c]![label] = at;
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
          const ratio = a.qps !== null && p.qps !== null ? a.qps / p.qps : null;
          ratios.push({
            case: c,
            recall: t,
            base,
            peer,
            ratio,
            approximate: a.kind !== 'interpolated' || p.kind !== 'interpolated',
          });
        }
      }
    }
  }
  return { targets: [...TARGET_RECALLS], cases, best, ratios };
}

/** compareAll as text: one table per case, then arkivector ÷ each peer. */
export function formatFull(c: FullComparison): string {
  const pad = (s: string, w: number): string => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));
  const cell = (a: Standing | undefined): string => {
    if (a === undefined) return '-';
    if (a.qps === null) return a.recall !== undefined ? `below (${a.recall.toFixed(3)})` : 'not reached';
    const where = a.ef_range.length > 0 ? ` (ef ${a.ef_range.join('–')})` : ' (scan)';
    return `${a.kind === 'at_least' && a.ef_range.length > 0 ? '≥ ' : ''}${a.qps >= 100 ? Math.round(a.qps) : a.qps.toFixed(1)}${where}`;
  };
  const lines: string[] = [];
  for (const [name, byLabel] of Object.entries(c.cases)) {
    lines.push(`QPS at equal recall@10, ${name}:`);
    lines.push(`${pad('system', 26)}${c.targets.map((t) => pad(`@${t}`, 24)).join('')}best recall (QPS there)`);
    for (const [label, at] of Object.entries(byLabel)) {
      const b = c.best[name]![label]!;
      const bestCell = `${b.recall.toFixed(3)} (${b.qps >= 100 ? Math.round(b.qps) : b.qps.toFixed(1)}${b.ef === null ? '' : ` @ ef ${b.ef}`})`;
      lines.push(`${pad(label, 26)}${c.targets.map((t) => pad(cell(at[String(t)]), 24)).join('')}${bestCell}`);
    }
    lines.push('');
  }
  lines.push('arkivector ÷ peer, QPS at equal recall (~: a bound, not interpolated):');
  for (const r of c.ratios) {
    const value = r.ratio === null ? 'n/a' : `${r.approximate ? '~' : ''}${r.ratio.toFixed(2)}×`;
    lines.push(`  ${pad(r.case, 13)} @${r.recall}  ${pad(r.base, 18)}÷ ${pad(r.peer, 26)} ${value}`);
  }
  return lines.join('\n');
}
