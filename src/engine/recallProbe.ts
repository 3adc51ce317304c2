// One leave-one-out probe of a store's recall estimate (recallEstimate.ts): the `sample`-th sampled live
// record's vector as the query, the store's default unfiltered plan against the exact scan, the record
// itself dropped from both answers (its free self-match does not count).

import { runHere } from './plan/run.ts';
import { exactSearch, plannedSearch } from './plan/search.ts';
import type { PlannerContext } from './plan/types.ts';
import type { SearchMode } from './searchTypes.ts';
import type { SlotTable } from './slotTable.ts';

/**
 * @param widthOf the store's default search width for a fetch of that many
 * @returns the exact neighbours the search found, out of how many, and the mode it used; undefined
 *   when k or fewer records are live
 */
export function recallProbe(
  t: SlotTable,
  ctx: PlannerContext,
  widthOf: (fetch: number) => number,
  sample: number,
  k: number,
): { found: number; wanted: number; mode: SearchMode } | undefined {
  if (t.live <= k || t.slotCount === 0) return undefined;
  // Samples spread over the slots by the golden ratio; free slots skip to the next live one.
  let slot = Math.floor(((sample * 0.6180339887498949 + 0.5) % 1) * t.slotCount);
  for (let tries = 0; t.records[slot] === undefined; tries++) {
    if (tries >= t.slotCount) return undefined;
    slot = (slot + 1) % t.slotCount;
  }
  const q = t.copy(slot);
  const fetch = k + 1;
  const got = runHere(ctx, plannedSearch(ctx, q, fetch, widthOf(fetch), undefined));
  const truth = runHere(ctx, exactSearch(ctx, q, fetch));
  const others = (slots: number[]) => slots.filter((s) => s !== slot).slice(0, k);
  const want = new Set(others(truth.slots));
  let found = 0;
  for (const s of others(got.slots)) if (want.has(s)) found++;
  return { found, wanted: want.size, mode: got.mode };
}
