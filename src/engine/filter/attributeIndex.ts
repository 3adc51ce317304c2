// Per-attribute posting lists over record slots, for exact leaf counts (the planner's cardinality
// estimate) and for enumerating the slots a narrow filter allows. One AttributeIndex per declared
// attribute and per meta attribute, owned by CollectionStore and updated at each block's commit.
//
// A posting is the bare slot number while its key has one slot: unique values (`$key`, ids, ranks,
// timestamps) are most keys of most indexes, and a Set would cost about 100 bytes of heap where a
// small integer in the map's entry costs nothing more. From its second slot a key holds a Bag, the
// slots unordered in an Int32Array, removed by swapping in the last one, which finds its place
// through `#pos` (slot → index in its bag): 8 bytes a slot where a Set costs 20 to 40, for the
// low-cardinality values ($owner, categories) that every record has. A slot holds at most one key
// of an attribute (AttributeColumns keeps one value per slot), so one `#pos` serves every bag.
//
// An index whose keys are strings the caller keeps per slot (the `$key` column) can leave its
// single-slot keys out of the Map: a SlotHash finds them by reading each slot's key back, 6 to 12 bytes
// a key where a Map entry costs 28 to 56 and holds the string again. Bags stay in the Map.

import { compareBytewise } from '../../query/index.ts';
import { ARRAY_GROWTH, grownLength } from '../arrayGrowth.ts';
import { SlotHash } from '../slotHash.ts';
import type { Key } from './types.ts';

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareBytewise(String(a), String(b));
}

/** The slots of a key that has two or more, in no order. */
class Bag {
  slots: Int32Array;
  n: number;
  constructor(a: number, b: number) {
    this.slots = Int32Array.of(a, b, 0, 0);
    this.n = 2;
  }
}

function markBag(bag: Bag, words: Uint32Array): void {
  const slots = bag.slots;
  for (let i = 0; i < bag.n; i++) {
    const s = slots[i]!;
    words[s >>> 5]! |= 1 << (s & 31);
  }
}

/** One key's slots: a single slot, or a Bag of two or more. */
type Posting = number | Bag;

/** Smallest bag array kept when a bag shrinks. */
const BAG_MIN = 4;

export class AttributeIndex {
  /** Every key's posting; only the bags when `#singles` holds the keys with one slot. */
  readonly #postings = new Map<Key, Posting>();
  readonly #singles: SlotHash | undefined;
  readonly #keyOf: ((slot: number) => string) | undefined;
  /** Slots that have the attribute. */
  total = 0;
  /** Above every slot ever added (a bitset over the slots of this index fits in this many bits). */
  slotBound = 0;
  // Sorted distinct keys and prefix sums of their posting sizes, rebuilt lazily after a change:
  // range counts then cost two binary searches.
  #sorted: Key[] | undefined;
  #prefix: Float64Array | undefined;

  /** Where each slot sits in its key's bag (valid only while it is in one); grown on demand. */
  #pos = new Int32Array(0);

  /**
   * @param keyOf for an index of string keys the caller keeps: the key a slot was added under, read
   * back until the slot is removed (the keys with one slot are then kept in a SlotHash, not the Map)
   */
  constructor(keyOf?: (slot: number) => string) {
    this.#keyOf = keyOf;
    this.#singles = keyOf === undefined ? undefined : new SlotHash(keyOf);
  }

  #get(key: Key): Posting | undefined {
    const p = this.#postings.get(key);
    if (p !== undefined || this.#singles === undefined || typeof key !== 'string') return p;
    return this.#singles.get(key);
  }

  /** Makes `slot` the only slot of `key`, replacing a bag if it had one. */
  #setSingle(key: Key, slot: number): void {
    if (this.#singles === undefined) this.#postings.set(key, slot);
    else {
      this.#postings.delete(key);
      this.#singles.set(key as string, slot);
    }
  }

  #setBag(key: Key, single: number, bag: Bag): void {
    this.#singles?.delete(key as string, single);
    this.#postings.set(key, bag);
  }

  #deleteSingle(key: Key, slot: number): void {
    if (this.#singles === undefined) this.#postings.delete(key);
    else this.#singles.delete(key as string, slot);
  }

  /** Every key with its posting, in no order. */
  #forEach(fn: (key: Key, p: Posting) => void): void {
    for (const [key, p] of this.#postings) fn(key, p);
    const keyOf = this.#keyOf;
    if (keyOf !== undefined) this.#singles?.forEachSlot((slot) => fn(keyOf(slot), slot));
  }

  #setPos(slot: number, i: number): void {
    if (slot >= this.#pos.length) {
      const pos = new Int32Array(grownLength(this.#pos.length, slot + 1));
      pos.set(this.#pos);
      this.#pos = pos;
    }
    this.#pos[slot] = i;
  }

  #inBag(bag: Bag, slot: number): boolean {
    const i = slot < this.#pos.length ? this.#pos[slot]! : -1;
    return i >= 0 && i < bag.n && bag.slots[i] === slot;
  }

  /** Adds a slot under a key; the slot must hold no other key of this attribute. */
  add(key: Key, slot: number): void {
    const p = this.#get(key);
    if (p === undefined) {
      this.#setSingle(key, slot);
      this.#sorted = undefined;
    } else if (typeof p === 'number') {
      if (p === slot) return;
      this.#setBag(key, p, new Bag(p, slot));
      this.#setPos(p, 0);
      this.#setPos(slot, 1);
    } else {
      if (this.#inBag(p, slot)) return;
      if (p.n === p.slots.length) {
        const slots = new Int32Array(Math.max(p.n + 1, Math.ceil(p.n * ARRAY_GROWTH)));
        slots.set(p.slots);
        p.slots = slots;
      }
      this.#setPos(slot, p.n);
      p.slots[p.n++] = slot;
    }
    if (slot >= this.slotBound) this.slotBound = slot + 1;
    this.total++;
    this.#prefix = undefined;
  }

  remove(key: Key, slot: number): void {
    const p = this.#get(key);
    if (p === undefined) return;
    if (typeof p === 'number') {
      if (p !== slot) return;
      this.#deleteSingle(key, slot);
      this.#sorted = undefined;
    } else {
      if (!this.#inBag(p, slot)) return;
      const i = this.#pos[slot]!;
      const last = p.slots[--p.n]!;
      p.slots[i] = last;
      this.#pos[last] = i;
      // Back to a bare slot, so a value that was briefly shared costs no bag for good.
      if (p.n === 1) this.#setSingle(key, p.slots[0]!);
      else if (p.n <= p.slots.length >>> 2 && p.slots.length > BAG_MIN)
        p.slots = p.slots.slice(0, p.slots.length >>> 1);
    }
    this.total--;
    this.#prefix = undefined;
  }

  countEq(key: Key): number {
    const p = this.#get(key);
    return p === undefined ? 0 : typeof p === 'number' ? 1 : p.n;
  }

  /** The slot of a key that has exactly one (unique attributes such as `$key`), else undefined. */
  only(key: Key): number | undefined {
    const p = this.#get(key);
    return typeof p === 'number' ? p : undefined;
  }

  /** Some slot holding `key`, or undefined when none does. */
  anySlot(key: Key): number | undefined {
    const p = this.#get(key);
    return p === undefined ? undefined : typeof p === 'number' ? p : p.slots[0];
  }

  /** Appends the slots of `key` to `out`. */
  pushSlots(key: Key, out: number[]): void {
    const p = this.#get(key);
    if (p === undefined) return;
    if (typeof p === 'number') out.push(p);
    else for (let i = 0; i < p.n; i++) out.push(p.slots[i]!);
  }

  /** Appends the slots of every key `accept` takes to `out`, in no particular order. */
  pushSlotsWhere(accept: (key: Key) => boolean, out: number[]): void {
    this.#forEach((key, p) => {
      if (!accept(key)) return;
      if (typeof p === 'number') out.push(p);
      else for (let i = 0; i < p.n; i++) out.push(p.slots[i]!);
    });
  }

  /** Sets bit `s & 31` of `words[s >>> 5]` for each slot s of `key`: an AND's branches meet in such bitsets. */
  markSlots(key: Key, words: Uint32Array): void {
    const p = this.#get(key);
    if (p === undefined) return;
    if (typeof p === 'number') words[p >>> 5]! |= 1 << (p & 31);
    else markBag(p, words);
  }

  /** markSlots for every key `accept` takes. */
  markSlotsWhere(accept: (key: Key) => boolean, words: Uint32Array): void {
    this.#forEach((key, p) => {
      if (!accept(key)) return;
      if (typeof p === 'number') words[p >>> 5]! |= 1 << (p & 31);
      else markBag(p, words);
    });
  }

  /** Distinct keys in ascending order (bytewise for strings, numeric for numbers). */
  sortedKeys(): Key[] {
    if (this.#sorted === undefined) {
      const keys: Key[] = [];
      this.#forEach((key) => keys.push(key));
      this.#sorted = keys.sort(compareKeys);
    }
    return this.#sorted;
  }

  #prefixSums(): Float64Array {
    if (this.#prefix === undefined) {
      const keys = this.sortedKeys();
      const p = new Float64Array(keys.length + 1);
      for (let i = 0; i < keys.length; i++) p[i + 1] = p[i]! + this.countEq(keys[i]!);
      this.#prefix = p;
    }
    return this.#prefix;
  }

  /** First index whose key is ≥ key (`strict`: > key). */
  bound(key: Key, strict: boolean): number {
    const keys = this.sortedKeys();
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKeys(keys[mid]!, key);
      if (c < 0 || (strict && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Slots whose key lies in sorted positions [from, to). */
  countRange(from: number, to: number): number {
    if (to <= from) return 0;
    const p = this.#prefixSums();
    return p[to]! - p[from]!;
  }
}

/** `[from, to)` of the sorted keys that can start with `prefix` (strings sort bytewise). */
export function prefixRange(index: AttributeIndex, prefix: string): [number, number] {
  if (prefix === '') return [0, index.sortedKeys().length];
  const from = index.bound(prefix, false);
  const keys = index.sortedKeys();
  let to = from;
  while (to < keys.length && String(keys[to]).startsWith(prefix)) to++;
  return [from, to];
}

export { compareKeys };
