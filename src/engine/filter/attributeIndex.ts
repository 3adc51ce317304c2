// Per-attribute posting lists over record slots, for exact leaf counts (the planner's cardinality
// estimate) and for enumerating the slots a narrow filter allows. One AttributeIndex per declared
// attribute and per meta attribute, owned by CollectionStore and updated at each block's commit.
//
// A posting is the bare slot number while its key has one slot, and a Set only from the second one:
// unique values (`$key`, ids, ranks, timestamps) are most keys of most indexes, and a Set costs about
// 100 bytes of heap where a small integer in the map's entry costs nothing more.

import { compareBytewise } from '../../query/index.ts';
import type { Key } from './types.ts';

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareBytewise(String(a), String(b));
}

/** One key's slots: a single slot, or a Set of two or more. */
type Posting = number | Set<number>;

export class AttributeIndex {
  readonly #postings = new Map<Key, Posting>();
  /** Slots that have the attribute. */
  total = 0;
  // Sorted distinct keys and prefix sums of their posting sizes, rebuilt lazily after a change:
  // range counts then cost two binary searches.
  #sorted: Key[] | undefined;
  #prefix: Float64Array | undefined;

  add(key: Key, slot: number): void {
    const p = this.#postings.get(key);
    if (p === undefined) {
      this.#postings.set(key, slot);
      this.#sorted = undefined;
    } else if (typeof p === 'number') {
      if (p === slot) return;
      this.#postings.set(key, new Set([p, slot]));
    } else {
      if (p.has(slot)) return;
      p.add(slot);
    }
    this.total++;
    this.#prefix = undefined;
  }

  remove(key: Key, slot: number): void {
    const p = this.#postings.get(key);
    if (p === undefined) return;
    if (typeof p === 'number') {
      if (p !== slot) return;
      this.#postings.delete(key);
      this.#sorted = undefined;
    } else {
      if (!p.delete(slot)) return;
      // Back to a bare slot, so a value that was briefly shared costs no Set for good.
      if (p.size === 1) this.#postings.set(key, p.values().next().value!);
    }
    this.total--;
    this.#prefix = undefined;
  }

  countEq(key: Key): number {
    const p = this.#postings.get(key);
    return p === undefined ? 0 : typeof p === 'number' ? 1 : p.size;
  }

  /** The slot of a key that has exactly one (unique attributes such as `$key`), else undefined. */
  only(key: Key): number | undefined {
    const p = this.#postings.get(key);
    return typeof p === 'number' ? p : undefined;
  }

  /** Appends the slots of `key` to `out`. */
  pushSlots(key: Key, out: number[]): void {
    const p = this.#postings.get(key);
    if (p === undefined) return;
    if (typeof p === 'number') out.push(p);
    else for (const s of p) out.push(s);
  }

  /** Appends the slots of every key `accept` takes to `out`, in no particular order. */
  pushSlotsWhere(accept: (key: Key) => boolean, out: number[]): void {
    for (const [key, p] of this.#postings) {
      if (!accept(key)) continue;
      if (typeof p === 'number') out.push(p);
      else for (const s of p) out.push(s);
    }
  }

  /** Distinct keys in ascending order (bytewise for strings, numeric for numbers). */
  sortedKeys(): Key[] {
    if (this.#sorted === undefined) this.#sorted = [...this.#postings.keys()].sort(compareKeys);
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
