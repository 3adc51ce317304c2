// Per-attribute posting lists over record slots, for exact leaf counts (the planner's cardinality
// estimate) and for enumerating the slots a narrow filter allows. One AttributeIndex per declared
// attribute and per meta attribute, owned by CollectionStore and updated at each block's commit.

import { compareBytewise } from '../../query/index.ts';
import type { Key } from './types.ts';

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareBytewise(String(a), String(b));
}

export class AttributeIndex {
  readonly postings = new Map<Key, Set<number>>();
  /** Slots that have the attribute. */
  total = 0;
  // Sorted distinct keys and prefix sums of their posting sizes, rebuilt lazily after a change:
  // range counts then cost two binary searches.
  #sorted: Key[] | undefined;
  #prefix: Float64Array | undefined;

  add(key: Key, slot: number): void {
    let set = this.postings.get(key);
    if (set === undefined) {
      set = new Set();
      this.postings.set(key, set);
      this.#sorted = undefined;
    }
    set.add(slot);
    this.total++;
    this.#prefix = undefined;
  }

  remove(key: Key, slot: number): void {
    const set = this.postings.get(key);
    if (set === undefined || !set.delete(slot)) return;
    this.total--;
    if (set.size === 0) {
      this.postings.delete(key);
      this.#sorted = undefined;
    }
    this.#prefix = undefined;
  }

  countEq(key: Key): number {
    return this.postings.get(key)?.size ?? 0;
  }

  /** Distinct keys in ascending order (bytewise for strings, numeric for numbers). */
  sortedKeys(): Key[] {
    if (this.#sorted === undefined) this.#sorted = [...this.postings.keys()].sort(compareKeys);
    return this.#sorted;
  }

  #prefixSums(): Float64Array {
    if (this.#prefix === undefined) {
      const keys = this.sortedKeys();
      const p = new Float64Array(keys.length + 1);
      for (let i = 0; i < keys.length; i++) p[i + 1] = p[i]! + this.postings.get(keys[i]!)!.size;
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
