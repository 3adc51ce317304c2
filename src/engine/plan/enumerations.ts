// A filter's allowed set, enumerated from the attribute indexes (filter/plan.ts) only when a plan needs
// it, as the ordered slots the exact scan reads or the bitset the walk reads, and kept in the store's
// memo (AllowedMemo) so a filter repeated while nothing changes is enumerated once.

import {
  allowedBits as enumerateBits,
  allowedSlots as enumerateSlots,
  estimate,
  type IndexSource,
  leafCount,
} from '../filter/plan.ts';
import { buildPredicate } from '../filter/predicate.ts';
import type { Cond } from '../filter/types.ts';
import { slotBits } from './slots.ts';
import type { AllowedMemo, PlannerContext } from './types.ts';

/** Enumerations a memo keeps per kind: the oldest goes first beyond. */
export const ENUMERATIONS_KEPT = 8;

/**
 * `make()` once per condition in `memo` (when there is one). What it makes is shared by every query that
 * asks while the memo lasts: readers never write into it.
 */
function once<V>(memo: Map<Cond, V> | undefined, cond: Cond, make: () => V): V {
  if (memo === undefined) return make();
  let value = memo.get(cond);
  if (value === undefined) {
    value = make();
    if (memo.size >= ENUMERATIONS_KEPT) memo.delete(memo.keys().next().value!);
    memo.set(cond, value);
  }
  return value;
}

/**
 * How many slots a filter allows, from the ordered list a search of this block enumerated, else
 * enumerated into the memo (a count is often followed by a search with the same filter).
 * @param cond a filter that is neither a leaf (leafCount answers those) nor everything
 * @returns the exact count
 */
export function allowedCount(cond: Cond, src: IndexSource & AllowedMemo, predicate: (slot: number) => boolean): number {
  return once(src.allowedMemo, cond, () => enumerateSlots(cond, src, predicate)).length;
}

/**
 * Exactly how many live records pass a filter: a leaf from its index, an AND or OR through the memo's
 * enumeration when at most half may pass, else by checking every live record.
 */
export function countPassing(ctx: PlannerContext, cond: Cond | undefined): number {
  if (cond === undefined || cond.t === 'all') return ctx.liveCount;
  if (cond.t !== 'and' && cond.t !== 'or') return leafCount(cond, ctx.index(cond.field));
  const predicate = buildPredicate(cond, ctx.rows);
  if (estimate(cond, ctx) <= ctx.liveCount / 2) return allowedCount(cond, ctx, predicate);
  let n = 0;
  ctx.forEachLive((s) => {
    if (predicate(s)) n++;
  });
  return n;
}

/** One query's view of a filter's allowed set: each form made once, when first asked for. */
export class AllowedSet {
  readonly #ctx: PlannerContext;
  readonly #cond: Cond;
  readonly predicate: (slot: number) => boolean;
  #slots: Int32Array | undefined;
  #bits: Uint8Array | undefined;
  #bitCount: number | undefined;

  constructor(ctx: PlannerContext, cond: Cond, predicate: (slot: number) => boolean) {
    this.#ctx = ctx;
    this.#cond = cond;
    this.predicate = predicate;
  }

  /** The allowed slots in order (what the exact scan reads). */
  slots(): Int32Array {
    this.#slots ??= once(this.#ctx.allowedMemo, this.#cond, () =>
      enumerateSlots(this.#cond, this.#ctx, this.predicate),
    );
    return this.#slots;
  }

  /** Whether the ordered slots were enumerated already. */
  get enumerated(): boolean {
    return this.#slots !== undefined;
  }

  /**
   * The allowed slots as a bitset over slots (what the walk reads): from the ordered slots when they were
   * enumerated, else straight from the indexes (the ordered list is made only if the scan needs it).
   */
  bits(): Uint8Array {
    if (this.#bits !== undefined) return this.#bits;
    if (this.#slots !== undefined) {
      this.#bits = slotBits(this.#slots, this.#ctx.slotCount);
    } else {
      const ctx = this.#ctx;
      const made = once(ctx.bitsMemo, this.#cond, () => enumerateBits(this.#cond, ctx, this.predicate, ctx.slotCount));
      this.#bits = made.bits;
      this.#bitCount = made.count;
    }
    return this.#bits;
  }

  /** The true count: the bitset's, or the ordered slots'. */
  count(): number {
    if (this.#slots === undefined) this.bits();
    return this.#bitCount ?? this.slots().length;
  }
}
