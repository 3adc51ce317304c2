// QPS at equal recall@10: each system's QPS at a target recall, interpolated log-linearly between the two
// swept widths that bracket it (ARCHITECTURE.md §10.6), and the ratios the targets are stated in.

import type { Row, SystemName } from './common.ts';

export const TARGET_RECALLS = [0.95, 0.99] as const;

/** arkivector ÷ peer QPS at equal recall, with the target each ratio is held to (issue 11). */
export const RATIO_TARGETS: ReadonlyArray<{ peer: SystemName; target: number }> = [
  { peer: 'pgvector', target: 3 },
  { peer: 'pglite-pgvector', target: 10 },
  { peer: 'hnswlib-node', target: 0.9 },
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

export function compare(rows: Row[]): Comparison {
  const bySystem = new Map<SystemName, Row[]>();
  for (const r of rows) if (r.ef !== null) bySystem.set(r.system, [...(bySystem.get(r.system) ?? []), r]);
  const systems: Comparison['systems'] = {};
  for (const [name, pts] of bySystem) {
    systems[name] = Object.fromEntries(TARGET_RECALLS.map((t) => [String(t), qpsAtRecall(pts, t)]));
  }
  const ratios: Comparison['ratios'] = [];
  for (const recall of TARGET_RECALLS) {
    const ark = systems.arkivector?.[String(recall)];
    for (const { peer, target } of RATIO_TARGETS) {
      const other = systems[peer]?.[String(recall)];
      if (ark === undefined || other === undefined) continue;
      const ratio = ark.qps !== null && other.qps !== null ? ark.qps / other.qps : null;
      ratios.push({
        recall,
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
    lines.push(`arkivector ÷ ${pad(r.peer, 16)} @${r.recall}: ${pad(value, 9)} (target ≥ ${r.target}×) ${verdict}`);
  }
  return lines.join('\n');
}
