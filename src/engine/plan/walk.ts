// The filtered walk (native/src/filteredSearch.h, ACORN-style): through allowed elements only, from entry
// points inside the set, told the set as a bitset. It tells by itself whether the set lies around the
// query: its unfiltered descent lands among allowed elements (its two-hop neighbourhood holds a quarter of
// the allowed elements the set's share predicts) or not. Landed (a set spread like the data, or the query
// inside a correlated set), its width follows the allowed share around the landing (× WALK_NEAR_SCALE): a
// sparse set is walked narrow, a dense one at the whole width. Not landed, the set lies away from the
// query, where the walk loses recall even at twice the width: the exact scan answers when within
// WALK_FAR_EXACT_FACTOR × its limit (the walk then stops at its landing test), else the walk goes on at
// ef × WALK_FAR_EF_SCALE. The test depends only on the query and the set (no memo of earlier queries), so
// replicas answer alike.

import type { GraphFilter } from '../hnsw/graph.ts';
import { HNSW_MAX_WIDEN_EF } from '../hnsw/params.ts';
import type { AllowedSet } from './enumerations.ts';
import { toSlots } from './slots.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';

/** A set away from the query is scanned exactly up to this many times the exact limit, else walked. */
export const WALK_FAR_EXACT_FACTOR = 16;
/** The walk's width for a set away from the query that the exact scan cannot afford, × ef. */
const WALK_FAR_EF_SCALE = 1.5;
/** Where the walk lands among allowed elements, its width is ef × the allowed share there × this (at least 2k). */
const WALK_NEAR_SCALE = 2.5;

/**
 * The filtered walk's answer as slots; fewer than min(k, allowed) when it did not land (a set the exact
 * scan should answer) or the graph could not reach enough of the set.
 * @param passing the allowed count (exact, or an upper bound when not enumerated)
 * @param exactLimit the largest set the exact scan answers at this width (exactLimit.ts)
 */
export function* filteredWalk(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  ef: number,
  allowed: AllowedSet,
  passing: number,
  exactLimit: number,
): Plan<PlannedResult> {
  const farEf = passing <= exactLimit * WALK_FAR_EXACT_FACTOR ? 0 : Math.ceil(ef * WALK_FAR_EF_SCALE);
  const filter: GraphFilter = {
    labelSlot: ctx.labelSlot,
    allowed: {
      bits: () => allowed.bits(),
      count: passing,
      farEf: farEf === 0 ? 0 : Math.min(HNSW_MAX_WIDEN_EF, Math.max(k, farEf)),
      nearScale: WALK_NEAR_SCALE,
    },
  };
  const hits = yield { kind: 'walk', query, k, ef: Math.max(k, ef), filter };
  return toSlots(ctx, hits.labels, hits.distances, 'hnsw');
}
