// Cardinality of a compiled filter from the attribute indexes, and enumeration of the slots it may
// allow. The planner uses `estimate` to choose between an exact scan and a filtered graph search, and
// `allowedSlots` to get the exact candidate list for the scan; `count` uses both for exact counts.
// A filter that allows a fair share of the slots is enumerated through bitsets: each branch of an AND
// marks its postings and the branches meet word by word, so `a && b` costs about the postings of both
// rather than a predicate call on every slot of the cheaper one.

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
  const est = estimate(cond, src);
  const bound = slotBound(cond, src);
  if (bound >= 0 && est * BITS_MIN_SHARE >= bound) {
    const { words, count } = matchingWords(cond, src, predicate, (bound + 31) >>> 5);
    return slotsOf(words, count);
  }
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
 * how many: what the filtered walk takes, without the ordered list allowedSlots makes (that list and a
 * bitset made from it cost a sizeable part of a search over a broad set).
 */
export function allowedBits(
  cond: Cond,
  src: IndexSource,
  predicate: SlotPredicate,
  slotCount: number,
): { bits: Uint8Array; count: number } {
  const byteCount = (slotCount + 7) >>> 3;
  if (LITTLE_ENDIAN && slotBound(cond, src) >= 0 && estimate(cond, src) * BITS_MIN_SHARE >= slotCount) {
    // On a little-endian machine the words' bytes are the byte-wise bitset the walk reads.
    const { words, count } = matchingWords(cond, src, predicate, (slotCount + 31) >>> 5);
    return { bits: new Uint8Array(words.buffer, 0, byteCount), count };
  }
  const raw: number[] = [];
  collect(cond, src, raw);
  const exactLeaf = cond.t !== 'and' && cond.t !== 'or';
  const bits = new Uint8Array(byteCount);
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

// ---- through bitsets: an AND of broad branches costs their postings, not a predicate call per slot ----

/**
 * A filter whose bound holds at least 1 / this of the slots is enumerated through bitsets (one word per 32
 * slots per branch, cleared and scanned whole); a narrower one from its cheapest branch's postings, each
 * slot checked by the predicate, which costs less than the bitsets' words below that share.
 */
const BITS_MIN_SHARE = 64;
/**
 * An AND's branch is intersected through its postings while it holds at most this many times the slots of
 * the AND's cheapest branch; a broader one is left to the predicate, called on the intersection's slots
 * only. Measured at 1M slots: marking a posting's slot in a bitset costs 3–7 ns, a predicate call on a slot
 * 12–35 ns (its columns' reads miss the cache).
 */
const AND_MARK_RATIO = 4;

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** Slots up to which the filter's indexes reach, or −1 for a filter that takes every live slot somewhere. */
function slotBound(cond: Cond, src: IndexSource): number {
  switch (cond.t) {
    case 'all':
      return -1;
    case 'and':
    case 'or': {
      let bound = 0;
      for (const c of cond.items) {
        const b = slotBound(c, src);
        if (b < 0) return -1;
        if (b > bound) bound = b;
      }
      return bound;
    }
    default:
      return src.index(cond.field).slotBound;
  }
}

function markLeaf(leaf: Leaf, idx: AttributeIndex, words: Uint32Array): void {
  const keys = idx.sortedKeys();
  switch (leaf.t) {
    case 'cmp': {
      if (leaf.op === '=') {
        idx.markSlots(leaf.key, words);
        return;
      }
      if (leaf.op === '!=') {
        const key = leaf.key;
        idx.markSlotsWhere((k) => k !== key, words);
        return;
      }
      const [from, to] = rangeOf(idx, leaf);
      for (let i = from; i < to; i++) idx.markSlots(keys[i]!, words);
      return;
    }
    case 'in': {
      const set = new Set(leaf.keys);
      if (!leaf.negated) {
        for (const key of set) idx.markSlots(key, words);
        return;
      }
      idx.markSlotsWhere((k) => !set.has(k), words);
      return;
    }
    case 'glob': {
      if (!leaf.negated) {
        const [from, to] = prefixRange(idx, literalPrefix(leaf.pattern));
        for (let i = from; i < to; i++) if (globMatch(leaf.pattern, keys[i] as string)) idx.markSlots(keys[i]!, words);
        return;
      }
      idx.markSlotsWhere((k) => !globMatch(leaf.pattern, k as string), words);
      return;
    }
  }
}

/**
 * The slots a filter (without `all`) may allow, as bits: exactly its slots when `exact`, else a superset
 * (an AND branch too broad to intersect was left out).
 */
function wordsOf(cond: Cond, src: IndexSource, wordCount: number): { words: Uint32Array; exact: boolean } {
  switch (cond.t) {
    case 'and': {
      const items = cond.items.map((c) => ({ c, est: estimate(c, src) })).sort((a, b) => a.est - b.est);
      const first = wordsOf(items[0]!.c, src, wordCount);
      const words = first.words;
      let exact = first.exact;
      const markMax = items[0]!.est * AND_MARK_RATIO;
      for (let i = 1; i < items.length; i++) {
        if (items[i]!.est > markMax) {
          exact = false;
          break;
        }
        const other = wordsOf(items[i]!.c, src, wordCount);
        const b = other.words;
        for (let w = 0; w < wordCount; w++) words[w]! &= b[w]!;
        exact &&= other.exact;
      }
      return { words, exact };
    }
    case 'or': {
      const first = wordsOf(cond.items[0]!, src, wordCount);
      const words = first.words;
      let exact = first.exact;
      for (let i = 1; i < cond.items.length; i++) {
        const other = wordsOf(cond.items[i]!, src, wordCount);
        const b = other.words;
        for (let w = 0; w < wordCount; w++) words[w]! |= b[w]!;
        exact &&= other.exact;
      }
      return { words, exact };
    }
    case 'all':
      throw new Error('wordsOf: `all` takes the slot list path');
    default: {
      const words = new Uint32Array(wordCount);
      markLeaf(cond, src.index(cond.field), words);
      return { words, exact: true };
    }
  }
}

/** Exactly the filter's slots as bits (the superset checked by the predicate), and how many. */
function matchingWords(
  cond: Cond,
  src: IndexSource,
  predicate: SlotPredicate,
  wordCount: number,
): { words: Uint32Array; count: number } {
  const { words, exact } = wordsOf(cond, src, wordCount);
  let count = 0;
  for (let w = 0; w < wordCount; w++) {
    let word = words[w]!;
    if (word === 0) continue;
    if (!exact) {
      for (let rest = word; rest !== 0; rest &= rest - 1) {
        const low = rest & -rest;
        if (!predicate((w << 5) | (31 - Math.clz32(low)))) word ^= low;
      }
      words[w] = word;
    }
    count += popcount(word);
  }
  return { words, count };
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
}

/** The `count` slots set in `words`, ascending. */
function slotsOf(words: Uint32Array, count: number): Int32Array {
  const out = new Int32Array(count);
  let m = 0;
  for (let w = 0; w < words.length; w++) {
    for (let word = words[w]!; word !== 0; word &= word - 1) out[m++] = (w << 5) | (31 - Math.clz32(word & -word));
  }
  return out;
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
