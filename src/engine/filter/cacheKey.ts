// The text under which a store caches a request's compiled filter (collectionStore.ts): the `where` as
// given, or the `where` and the JSON `filter` together. Equal keys must mean equal filters, so a `filter`
// gets a key only when it is plain JSON data that JSON text spells exactly (what the MCP and REST layers
// hand over). Anything else is compiled on every request, as before there was a cache.

/** A `filter` whose JSON text is longer than this is compiled each time rather than kept as a key. */
export const FILTER_KEY_MAX = 16_384;

class NotPlain extends Error {}

/**
 * JSON.stringify's replacer, refusing what JSON text would not give back as it was: non-finite numbers
 * and −0 (written as null and 0), undefined, functions, symbols and bigints (left out or thrown), objects
 * other than arrays and plain objects (a Date's toJSON, a class instance's prototype). It reads the
 * holder's own value, since JSON.stringify hands the replacer what toJSON returned.
 */
function plainOnly(this: unknown, key: string, value: unknown): unknown {
  const raw = (this as Record<string, unknown>)[key];
  switch (typeof raw) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(raw) || Object.is(raw, -0)) throw new NotPlain();
      return value;
    case 'object': {
      if (raw === null || Array.isArray(raw)) return value;
      if (Object.getPrototypeOf(raw) !== Object.prototype) throw new NotPlain();
      return value;
    }
    default:
      throw new NotPlain();
  }
}

/**
 * The cache key of a request's filter.
 * @param params `{ where?, filter? }` as the request gave them
 * @returns the key, or undefined when the filter is not to be cached
 * @example filterCacheKey({ where: 'stars > 3' }) // 'w' + 'stars > 3'
 */
export function filterCacheKey(params: { where?: unknown; filter?: unknown }): string | undefined {
  const { where, filter } = params;
  if (where !== undefined && typeof where !== 'string') return undefined;
  if (filter === undefined || filter === null) return where === undefined ? undefined : `w${where}`;
  let json: string;
  try {
    json = JSON.stringify([where ?? null, filter], plainOnly);
  } catch (err) {
    if (err instanceof NotPlain || err instanceof TypeError || err instanceof RangeError) return undefined;
    throw err;
  }
  return json.length <= FILTER_KEY_MAX ? `f${json}` : undefined;
}
