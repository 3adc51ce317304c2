// The plan of a filtered search, guaranteeing k results whenever k live records pass:
//   1. estimate how many records pass from the attribute indexes (exact for single conditions, an upper
//      bound for AND); nothing passes → an empty answer;
//   2. few pass (up to the exact limit at this width, exactLimit.ts) → enumerate them and scan exactly;
//      an AND whose bound is up to AND_ENUMERATE_FACTOR × that is enumerated too (its true count is
//      often far lower);
//   3. a set broad enough that one unfiltered walk of its width should find ~POST_OVERSAMPLE × k allowed
//      records → the post-filter (postFilter.ts), when it fills the answer;
//   4. otherwise the filtered walk (walk.ts); an answer short of min(k, allowed) → the exact scan.

import { estimate } from '../filter/plan.ts';
import { buildPredicate } from '../filter/predicate.ts';
import type { Cond } from '../filter/types.ts';
import { AllowedSet } from './enumerations.ts';
import { exactCall } from './exact.ts';
import { acornExactLimit } from './exactLimit.ts';
import { POST_OVERSAMPLE, postFiltered } from './postFilter.ts';
import { toSlots } from './slots.ts';
import type { Plan, PlannedResult, PlannerContext } from './types.ts';
import { filteredWalk } from './walk.ts';

/**
 * Enumerate an AND whose bound is at most this many times the exact limit: its branches meet through
 * bitsets (filter/plan.ts), and its true count is often far below the bound, so the exact scan it then
 * takes costs less than the post-filter and the walk's landing test it would otherwise go through.
 */
const AND_ENUMERATE_FACTOR = 16;

export function* filteredPlan(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  ef: number,
  cond: Cond,
): Plan<PlannedResult> {
  const n = ctx.liveCount;
  if (n === 0) return { slots: [], distances: [], mode: 'exact' };
  const allowed = new AllowedSet(ctx, cond, buildPredicate(cond, ctx.rows));
  const est = estimate(cond, ctx);
  if (est === 0) return { slots: [], distances: [], mode: 'exact' };
  const limit = acornExactLimit(ef);
  if (est <= limit || (cond.t === 'and' && est <= limit * AND_ENUMERATE_FACTOR)) {
    const slots = allowed.slots();
    if (slots.length <= limit) {
      const hits = yield exactCall(ctx, query, slots, k);
      return toSlots(ctx, hits.labels, hits.distances, 'exact');
    }
  }
  const passing = allowed.enumerated ? allowed.slots().length : est;

  const oversample = Math.ceil((POST_OVERSAMPLE * k * n) / passing);
  if (oversample <= ef) {
    const post = yield* postFiltered(ctx, query, k, oversample, ef, allowed.predicate);
    if (post.slots.length >= Math.min(k, passing)) return post;
  }

  const res = yield* filteredWalk(ctx, query, k, ef, allowed, passing, limit);
  if (res.slots.length >= Math.min(k, allowed.count())) return res;
  const hits = yield exactCall(ctx, query, allowed.slots(), k);
  return toSlots(ctx, hits.labels, hits.distances, 'exact');
}
