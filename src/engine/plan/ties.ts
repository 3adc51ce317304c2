// The order of equal distances: by entity key, not by slot (which depends on each node's history), so
// every node answers alike. A search fetches one more than k to see whether a tie runs past the k-th
// place and, while it might, twice as many (bounded by the live count: duplicates of one vector can tie
// across the whole collection).

import type { Cond } from '../filter/types.ts';
import { plannedSearch } from './search.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';

/**
 * The plan of k nearest live records passing a filter, equal distances ordered by entity key.
 * @param k results wanted, at most the live count (below 1: none)
 * @param widthOf the search width for a fetch of that many (effectiveEf)
 * @param keyOf a live slot's entity key
 */
export function* searchInKeyOrder(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  cond: Cond | undefined,
  widthOf: (fetch: number) => number,
  keyOf: (slot: number) => string,
): Plan<PlannedResult> {
  if (!(k >= 1)) return { slots: [], distances: [], mode: 'exact' };
  for (let fetch = Math.min(k + 1, ctx.liveCount); ; fetch = Math.min(fetch * 2, ctx.liveCount)) {
    const res = yield* plannedSearch(ctx, query, fetch, widthOf(fetch), cond);
    const n = res.slots.length;
    const boundary = res.distances[k - 1];
    if (n < fetch || fetch >= ctx.liveCount || n <= k || res.distances[n - 1] !== boundary)
      return byDistanceThenKey(res, k, keyOf);
  }
}

function byDistanceThenKey(res: PlannedResult, k: number, keyOf: (slot: number) => string): PlannedResult {
  // Nearly every answer arrives strictly ascending with no tie at the k-th place: keep its first k
  // as they are, without building and sorting a keyed copy.
  const d = res.distances;
  const n = Math.min(d.length, k + 1);
  let i = 1;
  while (i < n && d[i - 1]! < d[i]!) i++;
  if (i >= n) {
    // Usually one past k (the tie check's): pop, not a length set (a call into the runtime).
    if (d.length === k + 1) {
      res.slots.pop();
      d.pop();
    } else if (d.length > k) {
      res.slots.length = k;
      d.length = k;
    }
    return res;
  }
  const order = res.slots.map((slot, i) => ({ slot, distance: res.distances[i]!, key: keyOf(slot) }));
  order.sort((a, b) => a.distance - b.distance || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const top = order.slice(0, k);
  return { slots: top.map((o) => o.slot), distances: top.map((o) => o.distance), mode: res.mode };
}
