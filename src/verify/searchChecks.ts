// A search answer's numbers against the chain: each reported distance (and score) recomputed from the
// chain's vector and the request's query vector, the order (distance, then key; score for the modes
// without one), and completeness: the exact top k at the block, read whole when the collection is within
// the bound.
import type { Metric } from '../collections/index.ts';
import { METRIC_OPS } from '../engine/metrics.ts';
import type { Winner } from './collectionAt.ts';
import { DISTANCE_TOLERANCE } from './limits.ts';
import type { Check } from './types.ts';

export interface ShownResult {
  key: string;
  id: string;
  distance?: number | undefined;
  score: number;
  subject: string;
}

const close = (a: number, b: number) => Math.abs(a - b) <= DISTANCE_TOLERANCE * Math.max(1, Math.abs(b));

/** The distance of a chain record from the query, as the node defines it for the metric. */
export function chainDistance(metric: Metric, query: readonly number[], winner: Winner): number {
  const ops = METRIC_OPS[metric];
  return ops.clamp(ops.distance(query, winner.record.vector));
}

export function distanceCheck(shown: ShownResult, winner: Winner, metric: Metric, query: readonly number[]): Check {
  const d = chainDistance(metric, query, winner);
  const score = METRIC_OPS[metric].score(d);
  const base = { check: 'distance', subject: shown.subject };
  if (typeof shown.distance !== 'number' || !close(shown.distance, d))
    return {
      ...base,
      verdict: 'refuted',
      evidence: `distance: the answer says ${shown.distance}, the chain's vector gives ${d}`,
    };
  if (!close(shown.score, score))
    return { ...base, verdict: 'refuted', evidence: `score: the answer says ${shown.score}, the chain gives ${score}` };
  return { ...base, verdict: 'verified' };
}

/** Results ordered by distance ascending (or score descending), ties by entity key; no entity twice. */
export function orderCheck(results: readonly ShownResult[], byDistance: boolean): Check {
  const seen = new Set<string>();
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as ShownResult;
    if (seen.has(r.key))
      return { check: 'order', verdict: 'refuted', evidence: `${r.subject} repeats entity ${r.key}` };
    seen.add(r.key);
    const prev = results[i - 1];
    if (!prev) continue;
    const a = byDistance ? (prev.distance ?? Number.NaN) : -prev.score;
    const b = byDistance ? (r.distance ?? Number.NaN) : -r.score;
    if (!(a < b || (a === b && prev.key < r.key)))
      return {
        check: 'order',
        verdict: 'refuted',
        evidence: `${r.subject} (${byDistance ? `distance ${r.distance}` : `score ${r.score}`}, key ${r.key}) comes after ${prev.subject} (${byDistance ? `distance ${prev.distance}` : `score ${prev.score}`}, key ${prev.key})`,
      };
  }
  return { check: 'order', verdict: 'verified' };
}

/**
 * Completeness of a vector search: every entity passing the filter at the block, ranked exactly. An exact
 * answer must be the exact top k (within the distance tolerance at the boundary) and never under-fill k;
 * an HNSW answer's recall against the exact top k is measured and reported.
 */
export function completenessCheck(params: {
  results: readonly ShownResult[];
  searchMode: unknown;
  k: number;
  passing: readonly Winner[];
  metric: Metric;
  query: readonly number[];
}): Check {
  const { results, k, metric, query } = params;
  const ranked = params.passing
    .map((w) => ({ w, d: chainDistance(metric, query, w) }))
    .sort((a, b) => a.d - b.d || (a.w.entity.key < b.w.entity.key ? -1 : 1));
  const exact = ranked.slice(0, k);
  const shownKeys = new Set(results.map((r) => r.key.toLowerCase()));
  const expected = Math.min(k, ranked.length);
  const detail = { passing: ranked.length, k };
  if (results.length < expected)
    return {
      check: 'completeness',
      verdict: 'refuted',
      detail,
      evidence: `${ranked.length} entities pass the filter at this block, so k = ${k} asks for ${expected}; the answer has ${results.length}`,
    };
  const kth = exact.at(-1)?.d ?? Number.POSITIVE_INFINITY;
  const missed = exact.filter(({ w, d }) => !shownKeys.has(w.entity.key) && !close(d, kth));
  if (params.searchMode === 'hnsw') {
    const recall = expected === 0 ? 1 : (expected - missed.length) / expected;
    return {
      check: 'recall',
      verdict: 'verified',
      detail: {
        ...detail,
        recall,
        missed: missed.map(({ w, d }) => ({ id: w.record.id, key: w.entity.key, distance: d })),
      },
    };
  }
  const left = missed[0];
  if (left) {
    const worst = results.at(-1);
    return {
      check: 'completeness',
      verdict: 'refuted',
      detail,
      evidence: `entity ${left.w.entity.key} (id ${JSON.stringify(left.w.record.id)}) at distance ${left.d} passes the filter and is closer than the answer's last result (distance ${worst?.distance}), and it is left out`,
    };
  }
  return { check: 'completeness', verdict: 'verified', detail };
}
