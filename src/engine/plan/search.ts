// The search planner's entry: chooses, per query, between the exact scan and the graph, and guarantees
// that k results come back whenever k live records pass the filter. Its choice is reported as
// `search_mode`. The plan depends only on the store and the query (no memo of earlier answers), so
// replicas at the same block answer alike; the tie order by entity key is the store's (ties.ts).

import type { Cond } from '../filter/types.ts';
import { exactScan } from './exact.ts';
import { filteredPlan } from './filtered.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';
import { unfilteredPlan } from './unfiltered.ts';

/**
 * The plan of k nearest live records passing a filter.
 * @param query float32 query (length = dim)
 * @param k results wanted (≥ 1)
 * @param ef the search width (effectiveEf)
 * @param cond compiled filter, or undefined
 * @returns the plan: slots and pgvector distances, nearest first, and the mode used
 * @example runHere(ctx, plannedSearch(ctx, q, 10, 100, compileWhere('stars > 3', attrs)))
 */
export function plannedSearch(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  ef: number,
  cond: Cond | undefined,
): Plan<PlannedResult> {
  return cond === undefined || cond.t === 'all'
    ? unfilteredPlan(ctx, query, k, ef)
    : filteredPlan(ctx, query, k, ef, cond);
}

/** The exact k nearest live records: the reference the recall estimate compares the planned search with. */
export function exactSearch(ctx: PlannerContext, query: Float32Array, k: number): Plan<PlannedResult> {
  return exactScan(ctx, query, undefined, k);
}
