// Cardinality of a compiled filter from the attribute indexes, and enumeration of the slots it may
// allow. The planner uses `estimate` to choose between an exact scan and a filtered graph search, and
// `allowedSlots` to get the exact candidate list for the scan; `count` uses both for exact counts.

import { globMatch } from '../../query/index.ts';
import { type AttributeIndex, prefixRange } from './attributeIndex.ts';
import type { SlotPredicate } from './predicate.ts';
import type { Cond, Field, Leaf } from './types.ts';

/** What planning reads from the store. */
export type IndexSource = {
  /** Live records. */
  readonly liveCount: number;
  /** The index of a field (declared or meta); an empty one for a declared attribute no record has. */
  index(field: Field): AttributeIndex;
  /** Calls fn for every live slot. */
  forEachLive(fn: (slot: number) => void): void;
};

/** Characters before the first glob meta character: every match starts with them. */
function literalPrefix(pattern: string): string {
  let i = 0;
  while (i < pattern.length && !'*?[\\'.includes(pattern[i]!)) i++;
  return pattern.slice(0, i);
}

/** `[from, to)` of sorted key positions satisfying a range comparison. */
function rangeOf(idx: AttributeIndex, leaf: Leaf & { t: 'cmp' }): [number, number] {
  const n = idx.sortedKeys().length;
  switch (leaf.op) {
    case '<':
      return [0, idx.bound(leaf.key, false)];
    case '<=':
      return [0, idx.bound(leaf.key, true)];
    case '>':
      return [idx.bound(leaf.key, true), n];
    case '>=':
      return [idx.bound(leaf.key, false), n];
    default:
      return [0, n];
  }
}

/**
 * Exactly how many live records a leaf matches.
 * @param leaf a compiled leaf
 * @param idx the index of its field
 * @returns the count
 */
export function leafCount(leaf: Leaf, idx: AttributeIndex): number {
  switch (leaf.t) {
    case 'cmp': {
      if (leaf.op === '=') return idx.countEq(leaf.key);
      if (leaf.op === '!=') return idx.total - idx.countEq(leaf.key);
      const [from, to] = rangeOf(idx, leaf);
      return idx.countRange(from, to);
    }
    case 'in': {
      let sum = 0;
      for (const key of new Set(leaf.keys)) sum += idx.countEq(key);
      return leaf.negated ? idx.total - sum : sum;
    }
    case 'glob': {
      const keys = idx.sortedKeys();
      const [from, to] = prefixRange(idx, literalPrefix(leaf.pattern));
      let sum = 0;
      for (let i = from; i < to; i++) if (globMatch(leaf.pattern, keys[i] as string)) sum += idx.countEq(keys[i]!);
      return leaf.negated ? idx.total - sum : sum;
    }
  }
}

/**
 * Upper bound of the records a filter matches: exact for a leaf, min over AND, sum over OR.
 * @param cond the filter
 * @param src the indexes
 * @returns estimated count (≤ liveCount)
 */
export function estimate(cond: Cond, src: IndexSource): number {
  switch (cond.t) {
    case 'all':
      return src.liveCount;
    case 'and': {
      let best = src.liveCount;
      for (const c of cond.items) best = Math.min(best, estimate(c, src));
      return best;
    }
    case 'or': {
      let sum = 0;
      for (const c of cond.items) sum += estimate(c, src);
      return Math.min(sum, src.liveCount);
    }
    default:
      return leafCount(cond, src.index(cond.field));
  }
}

function leafSlots(leaf: Leaf, idx: AttributeIndex, out: number[]): void {
  const keys = idx.sortedKeys();
  switch (leaf.t) {
    case 'cmp': {
      if (leaf.op === '=') {
        idx.pushSlots(leaf.key, out);
        return;
      }
      if (leaf.op === '!=') {
        const key = leaf.key;
        idx.pushSlotsWhere((k) => k !== key, out);
        return;
      }
      const [from, to] = rangeOf(idx, leaf);
      for (let i = from; i < to; i++) idx.pushSlots(keys[i]!, out);
      return;
    }
    case 'in': {
      const set = new Set(leaf.keys);
      if (!leaf.negated) {
        for (const key of set) idx.pushSlots(key, out);
        return;
      }
      idx.pushSlotsWhere((k) => !set.has(k), out);
      return;
    }
    case 'glob': {
      if (!leaf.negated) {
        const [from, to] = prefixRange(idx, literalPrefix(leaf.pattern));
        for (let i = from; i < to; i++) if (globMatch(leaf.pattern, keys[i] as string)) idx.pushSlots(keys[i]!, out);
        return;
      }
      idx.pushSlotsWhere((k) => !globMatch(leaf.pattern, k as string), out);
      return;
    }
  }
}

/** A superset of the matching slots (duplicates possible under OR), driven by the cheapest branch. */
function collect(cond: Cond, src: IndexSource, out: number[]): void {
  switch (cond.t) {
    case 'all':
      src.forEachLive((s) => out.push(s));
      return;
    case 'and': {
      let best = cond.items[0]!;
      let bestCount = Infinity;
      for (const c of cond.items) {
        const e = estimate(c, src);
        if (e < bestCount) {
          best = c;
          bestCount = e;
        }
      }
      collect(best, src, out);
      return;
    }
    case 'or':
      for (const c of cond.items) collect(c, src, out);
      return;
    default:
      leafSlots(cond, src.index(cond.field), out);
  }
}

/**
 * Exactly the live slots a filter allows, ascending.
 * @param cond the filter
 * @param src the indexes
 * @param predicate the filter's slot predicate (verifies what the driving branch over-includes)
 * @returns matching slots
 */
export function allowedSlots(cond: Cond, src: IndexSource, predicate: SlotPredicate): Int32Array {
  const raw: number[] = [];
  collect(cond, src, raw);
  const exactLeaf = cond.t !== 'and' && cond.t !== 'or';
  const out = new Int32Array(raw.length);
  let n = 0;
  let top = 0;
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i]!;
    if (exactLeaf || predicate(s)) {
      out[n++] = s;
      if (s > top) top = s;
    }
  }
  // A set that is a fair share of the slots is put in order through a bitset (linear, and distinct at
  // once): sorting 10,000 slots cost more than the filtered walk that then uses them.
  if (n * SORT_BY_BITSET_SHARE > top) return inOrder(out, n, top);
  const res = out.subarray(0, n).sort();
  if (cond.t !== 'or' && !containsOr(cond)) return res;
  // OR branches can yield a slot twice; the list is sorted, so drop neighbours.
  let m = 0;
  for (let i = 0; i < res.length; i++) if (i === 0 || res[i] !== res[i - 1]) res[m++] = res[i]!;
  return res.subarray(0, m);
}

/**
 * The live slots a filter allows as a bitset over slots 0 … slotCount − 1 (bit s & 7 of byte s >> 3), and
 * how many: what the filtered walk takes, without the ordered list allowedSlots makes (at a random 10 %
 * set of 100k, that list and a bitset made from it cost a third of the search).
 */
export function allowedBits(
  cond: Cond,
  src: IndexSource,
  predicate: SlotPredicate,
  slotCount: number,
): { bits: Uint8Array; count: number } {
  const raw: number[] = [];
  collect(cond, src, raw);
  const exactLeaf = cond.t !== 'and' && cond.t !== 'or';
  const bits = new Uint8Array((slotCount + 7) >>> 3);
  let count = 0;
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i]!;
    if (!exactLeaf && !predicate(s)) continue;
    const bit = 1 << (s & 7);
    if ((bits[s >>> 3]! & bit) === 0) {
      bits[s >>> 3]! |= bit;
      count++;
    }
  }
  return { bits, count };
}

/** allowedSlots orders a set through a bitset when it holds more than 1 / this of the slots up to its largest. */
const SORT_BY_BITSET_SHARE = 32;

/** The distinct values of out[0 … n − 1] (slots, all ≤ top), ascending, in `out`'s front. */
function inOrder(out: Int32Array, n: number, top: number): Int32Array {
  const bits = new Uint32Array((top >>> 5) + 1);
  for (let i = 0; i < n; i++) {
    const s = out[i]!;
    bits[s >>> 5]! |= 1 << (s & 31);
  }
  let m = 0;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const low = word & -word;
      out[m++] = (w << 5) | (31 - Math.clz32(low));
      word ^= low;
    }
  }
  return out.subarray(0, m);
}

function containsOr(cond: Cond): boolean {
  if (cond.t === 'or') return true;
  if (cond.t === 'and') return cond.items.some(containsOr);
  return false;
}
