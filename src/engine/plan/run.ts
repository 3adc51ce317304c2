// Runs a plan with every graph call answered on the spot, on this thread: `search`, recall probes, and
// a pinned search whose store has a block staged.

import type { GraphHits } from '../hnsw/graph.ts';
import type { GraphCall, Plan, PlannerContext } from './types.ts';

/** One graph call, answered synchronously. */
export function answerHere(ctx: PlannerContext, call: GraphCall): GraphHits {
  return call.kind === 'walk'
    ? ctx.graph.search(call.query, call.k, call.ef, call.filter)
    : ctx.graph.exact(call.query, call.k, call.candidates);
}

/**
 * A plan's result, its graph calls answered here.
 * @example runHere(ctx, plannedSearch(ctx, q, 10, 100, undefined))
 */
export function runHere<T>(ctx: PlannerContext, plan: Plan<T>): T {
  let step = plan.next();
  while (!step.done) step = plan.next(answerHere(ctx, step.value));
  return step.value;
}
