// Runs a plan with its graph calls on the graph's threads (Graph.searchAsync, exactAsync, filteredAsync),
// so the main thread serves other requests meanwhile; the plan, its choices and the filter's allowed set
// stay on the main thread. Each answer is for the graph as it was when the call was made: when the store
// changed before it came back (a block staged, committed or rolled back, a rebuilt graph swapped in, a
// definition update), the plan is dropped and the caller asks again against a fresh view.

import type { GraphHits } from '../hnsw/graph.ts';
import { answerHere } from './run.ts';
import { labelBits } from './slots.ts';
import type { GraphCall, Plan, PlannerContext } from './types.ts';

/**
 * Graph calls one search makes on threads (a plan makes at most three per fetch; a tie at the k-th place
 * doubles the fetch): beyond, the rest is answered on the main thread.
 */
const THREAD_CALLS_MAX = 24;

/**
 * An exact scan of fewer candidates × dimensions than this runs on the main thread: about what the hop
 * to a thread and back costs in CPU.
 */
const THREAD_SCAN_MIN = 262_144;

/** A call's answer on a thread, or undefined for one answered here (small, or a filter that only hides labels). */
function onThread(ctx: PlannerContext, call: GraphCall, made: number): Promise<GraphHits> | undefined {
  const graph = ctx.graph;
  if (made >= THREAD_CALLS_MAX) return undefined;
  if (call.kind === 'exact') {
    const small = call.candidates !== undefined && call.candidates.length * call.query.length < THREAD_SCAN_MIN;
    return small ? undefined : graph.exactAsync(call.query, call.k, call.candidates);
  }
  const { query, k, ef, filter } = call;
  if (filter === undefined) return graph.searchAsync(query, k, ef);
  const allowed = filter.allowed;
  if (allowed === undefined) return undefined;
  const bits = labelBits(allowed.bits(), ctx.slotLabel, filter.labelSlot.length);
  return graph.filteredAsync(query, k, ef, bits, allowed);
}

/**
 * A plan's result, its graph calls answered on threads.
 * @param unchanged whether nothing the plan reads changed since it started (checked after each answer)
 * @returns the plan's result for the store as it was when called, or undefined (it changed meanwhile)
 */
export async function runOnThreads<T>(
  ctx: PlannerContext,
  plan: Plan<T>,
  unchanged: () => boolean,
): Promise<T | undefined> {
  let made = 0;
  let step = plan.next();
  while (!step.done) {
    const call = step.value;
    const answer = onThread(ctx, call, made++);
    let hits: GraphHits;
    if (answer === undefined) hits = answerHere(ctx, call);
    else {
      hits = await answer;
      if (!unchanged()) {
        plan.return(undefined as T);
        return undefined;
      }
    }
    step = plan.next(hits);
  }
  return step.value;
}
