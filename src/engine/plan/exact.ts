// The exact scan, in the graph's own kernels over the vectors it keeps (binary16 in SIMD; the store keeps
// no other copy): over every committed label, or over the allowed slots' labels. Small collections and
// small allowed sets are answered by it, and every plan falls back to it rather than under-fill.

import { toSlots } from './slots.ts';
import type { GraphCall, Plan, PlannedResult, PlannerContext } from './types.ts';

/**
 * The exact k nearest among the allowed slots, or among every live record.
 * @param allowed the allowed slots (undefined: every live record)
 */
export function* exactScan(
  ctx: PlannerContext,
  query: Float32Array,
  allowed: Int32Array | undefined,
  k: number,
): Plan<PlannedResult> {
  const hits = yield exactCall(ctx, query, allowed, k);
  return toSlots(ctx, hits.labels, hits.distances, 'exact');
}

/**
 * The graph call of an exact scan (what `exactScan` yields; plans yield it themselves, one generator
 * fewer on the hot path, and map its hits with toSlots as `exact`).
 */
export function exactCall(
  ctx: PlannerContext,
  query: Float32Array,
  allowed: Int32Array | undefined,
  k: number,
): GraphCall {
  let candidates: Uint32Array | undefined;
  const slotLabel = ctx.slotLabel;
  if (allowed !== undefined) {
    candidates = new Uint32Array(allowed.length);
    for (let i = 0; i < allowed.length; i++) candidates[i] = slotLabel[allowed[i]!]!;
  } else if (ctx.pending) {
    // A staged block's labels are in the graph: scan the committed slots' labels only.
    const labels: number[] = [];
    ctx.forEachLive((s) => labels.push(slotLabel[s]!));
    candidates = Uint32Array.from(labels);
  }
  return { kind: 'exact', query, k, candidates };
}
