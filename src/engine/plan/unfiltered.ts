// The plan of a search without a filter: a collection the exact scan reads for no more than the walk
// costs is scanned; a larger one is walked at the search's width, widened ×4 up to HNSW_MAX_WIDEN_EF
// while the walk returns fewer than min(k, live) visible records, then scanned.

import { exactThreshold, HNSW_MAX_WIDEN_EF } from '../hnsw/params.ts';
import { exactCall } from './exact.ts';
import { toSlots } from './slots.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';

export function* unfilteredPlan(ctx: PlannerContext, query: Float32Array, k: number, ef: number): Plan<PlannedResult> {
  const n = ctx.liveCount;
  if (n === 0) return { slots: [], distances: [], mode: 'exact' };
  if (n <= exactThreshold(query.length)) {
    const hits = yield exactCall(ctx, query, undefined, k);
    return toSlots(ctx, hits.labels, hits.distances, 'exact');
  }
  // Only while a block is half-applied does the graph hold labels to hide; otherwise no filter.
  const filter = ctx.pending ? { labelSlot: ctx.labelSlot } : undefined;
  const want = Math.min(k, n);
  for (let width = ef; ; width = Math.min(width * 4, HNSW_MAX_WIDEN_EF)) {
    const hits = yield { kind: 'walk', query, k, ef: Math.max(width, k), filter };
    const res = toSlots(ctx, hits.labels, hits.distances, 'hnsw');
    if (res.slots.length >= want) return res;
    if (width >= HNSW_MAX_WIDEN_EF) break;
  }
  const hits = yield exactCall(ctx, query, undefined, k);
  return toSlots(ctx, hits.labels, hits.distances, 'exact');
}
