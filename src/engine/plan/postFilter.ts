// The post-filter: one unfiltered walk of the nearest `oversample` records, filtered afterwards. It costs
// what an unfiltered search costs, with no bitset to build, so the filtered plan takes it for sets broad
// enough that ~POST_OVERSAMPLE × k of the search's width should pass. Still `hnsw`: the graph answered,
// the filter only picked its results.

import { widthGrowth } from '../hnsw/params.ts';
import { toSlots } from './slots.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';

/** The post-filter oversamples so that this many times k of its neighbours should pass. */
export const POST_OVERSAMPLE = 2;

/**
 * The width of the post-filter's walk, which must find its `oversample` nearest, not only the k the
 * default width is tuned for. Up to WIDTH_GROWTH_FROM that default holds; above, the default grows with
 * the collection (widthGrowth) but the depth of `oversample` neighbours needs more: the width gains
 * oversample × (1 − 1 / widthGrowth(live)). A function of the live count and the allowed count, so
 * replicas answer alike.
 * @param ef the search's width
 * @param oversample neighbours the post-filter takes
 * @param live the collection's live records
 * @returns the width, from ef to ef + oversample
 */
export function postFilterWidth(ef: number, oversample: number, live: number): number {
  return Math.max(ef, Math.ceil(ef + oversample * (1 - 1 / widthGrowth(live))));
}

/**
 * The first k allowed slots among an unfiltered walk's `oversample` nearest (fewer when fewer pass).
 * @param ef the search's width (widened by postFilterWidth)
 */
export function* postFiltered(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  oversample: number,
  ef: number,
  allowed: (slot: number) => boolean,
): Plan<PlannedResult> {
  const width = postFilterWidth(ef, oversample, ctx.liveCount);
  const hits = yield { kind: 'walk', query, k: oversample, ef: width };
  return toSlots(ctx, hits.labels, hits.distances, 'hnsw', k, allowed);
}
