// The conversions between the graph's labels and the store's slots a plan needs: hits back to slots, and
// the allowed set as a bitset over slots (the synchronous walk's) or over labels (a thread's).

import type { PlannedResult, PlannerContext } from './types.ts';

/**
 * The hits as slots, in place (the graph's arrays are the plan's), the invisible labels dropped.
 * @param keep at most this many (the post-filter's k), passing `allowed` when given
 */
export function toSlots(
  ctx: PlannerContext,
  labels: number[],
  distances: number[],
  mode: PlannedResult['mode'],
  keep = Number.POSITIVE_INFINITY,
  allowed?: (slot: number) => boolean,
): PlannedResult {
  const labelSlot = ctx.labelSlot;
  let m = 0;
  for (let i = 0; i < labels.length && m < keep; i++) {
    const label = labels[i]!;
    const s = label < labelSlot.length ? labelSlot[label]! : -1;
    if (s < 0 || (allowed !== undefined && !allowed(s))) continue;
    labels[m] = s;
    distances[m++] = distances[i]!;
  }
  // Only when a label was dropped: setting an array's length is a call into the runtime.
  if (m < labels.length) {
    labels.length = m;
    distances.length = m;
  }
  return { slots: labels, distances, mode };
}

/** A bitset over slots 0 … slotCount − 1 with the given slots set. */
export function slotBits(slots: Int32Array, slotCount: number): Uint8Array {
  const bits = new Uint8Array((slotCount + 7) >>> 3);
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    bits[s >>> 3]! |= 1 << (s & 7);
  }
  return bits;
}

/** The bitset over labels of the slots set in `slots` (what a thread's filtered walk takes). */
export function labelBits(slots: Uint8Array, slotLabel: Int32Array, labelCount: number): Uint8Array {
  const out = new Uint8Array((labelCount + 7) >>> 3);
  for (let byte = 0; byte < slots.length; byte++) {
    for (let b = slots[byte]!; b !== 0; b &= b - 1) {
      const label = slotLabel[(byte << 3) | (31 - Math.clz32(b & -b))]!;
      if (label >= 0 && label < labelCount) out[label >>> 3]! |= 1 << (label & 7);
    }
  }
  return out;
}
