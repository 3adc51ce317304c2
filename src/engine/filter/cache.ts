// Compiled filters kept per store by their text (filterCacheKey), so a repeated `where` is compiled once
// and is the same Cond each time (the planner's enumeration memo is keyed by it).

import type { CollectionDefinition } from '../../collections/index.ts';
import { filterCacheKey } from './cacheKey.ts';
import { compileFilter } from './compile.ts';
import type { Cond } from './types.ts';

/** Compiled filters kept per store; the oldest goes first beyond. */
const FILTER_CACHE_SIZE = 256;

export class FilterCache {
  readonly #cache = new Map<string, Cond | undefined>();

  /**
   * The compiled filter of `params` under `definition`, undefined for no filter.
   * @throws InvalidFilterError
   */
  compile(params: { where?: string; filter?: unknown }, definition: CollectionDefinition): Cond | undefined {
    if (params.where === undefined && (params.filter === undefined || params.filter === null)) return undefined;
    const key = filterCacheKey(params);
    if (key === undefined) return compileFilter(params, definition);
    const hit = this.#cache.get(key);
    if (hit !== undefined || this.#cache.has(key)) return hit;
    const cond = compileFilter(params, definition);
    if (this.#cache.size >= FILTER_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(key, cond);
    return cond;
  }

  /** Forgets every filter (the definition changed). */
  clear(): void {
    this.#cache.clear();
  }
}
