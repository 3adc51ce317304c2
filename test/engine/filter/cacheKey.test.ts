// Tests filterCacheKey (src/engine/filter/cacheKey.ts), the text a store caches a compiled filter under:
// a key is given only to a filter its JSON text spells exactly, so two requests share a compiled filter
// only when they asked for the same one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { FILTER_KEY_MAX, filterCacheKey } from '../../../src/engine/filter/cacheKey.ts';

describe('filterCacheKey', () => {
  test('property: a key spells its request exactly (JSON.parse gives back the where and the filter)', () => {
    const value = fc.anything({
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withSparseArray: true,
      withTypedArray: true,
      withBigInt: true,
      withObjectString: true,
    });
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), fc.oneof(value, fc.jsonValue()), (where, filter) => {
        const key = filterCacheKey({ where, filter });
        if (key === undefined) return;
        if (filter === undefined || filter === null) {
          assert.equal(key, `w${where}`);
          return;
        }
        assert.equal(key[0], 'f');
        assert.deepStrictEqual(JSON.parse(key.slice(1)), [where ?? null, filter]);
      }),
      { numRuns: 2000 },
    );
  });

  test('behavior: what JSON text would not spell exactly gets no key', () => {
    class Eq {
      eq = { a: 1 };
    }
    for (const [i, filter] of [
      { eq: { a: Number.NaN } },
      { eq: { a: Number.POSITIVE_INFINITY } },
      { eq: { a: -0 } },
      { eq: { a: undefined } },
      { eq: { a: new Date(0) } },
      { eq: { a: 1n } },
      { eq: { a: () => 1 } },
      new Eq(),
      Object.assign(Object.create(null), { eq: { a: 1 } }),
      { in: { a: Object.assign(new Array(3), { 0: 1, 2: 2 }) } },
    ].entries())
      assert.equal(filterCacheKey({ filter }), undefined, `case ${i}`);
    assert.equal(filterCacheKey({ where: 5 as unknown as string }), undefined);
    const long = { in: { a: Array.from({ length: FILTER_KEY_MAX }, (_, i) => i) } };
    assert.equal(filterCacheKey({ filter: long }), undefined);
  });

  test('behavior: the same request parsed twice shares a key; where, filter and both are told apart', () => {
    const text = '{"and": [{"gte": {"stars": 4}}, {"in": {"topic": ["pets", "plants"]}}]}';
    const a = filterCacheKey({ filter: JSON.parse(text) });
    assert.ok(a !== undefined);
    assert.equal(filterCacheKey({ filter: JSON.parse(text) }), a);
    assert.notEqual(filterCacheKey({ where: 'stars >= 4', filter: JSON.parse(text) }), a);
    assert.equal(filterCacheKey({ where: 'stars >= 4' }), 'wstars >= 4');
    assert.equal(filterCacheKey({ where: 'stars >= 4', filter: null }), 'wstars >= 4');
    // A where that reads like a filter's key is still a where.
    assert.notEqual(filterCacheKey({ where: a.slice(1) }), a);
    assert.equal(filterCacheKey({}), undefined);
  });
});
