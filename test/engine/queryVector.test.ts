// The store checks a query vector with one sum of squares and only walks it value by value when that sum
// is not finite or large (collectionStore.ts #queryVector): every search entry must still refuse exactly
// what the check of each value refused, with the same error (class, code, message), and accept the rest.
// The oracle is that check as it was: a range test per value, in order, before copying the value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DimensionMismatchError, InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore, QUERY_VALUE_MAX } from '../../src/engine/index.ts';
import { definition, makeRecord } from './helpers.ts';

const DIM = 8;

/** What the per-value check threw for a query (undefined: accepted). */
function expectedError(vector: ArrayLike<unknown>): Error | undefined {
  if (vector.length !== DIM) return new DimensionMismatchError({ expected: DIM, got: vector.length });
  const q = new Float32Array(DIM);
  try {
    for (let i = 0; i < DIM; i++) {
      const x = vector[i] as number;
      if (!(x >= -QUERY_VALUE_MAX && x <= QUERY_VALUE_MAX))
        return new InvalidArgumentError(
          `vector[${i}]: ${x} is not a finite number within ±${QUERY_VALUE_MAX.toExponential()}`,
        );
      q[i] = x;
    }
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

/** The fields a caller sees of an error. */
function shown(e: unknown): { name: string; message: string; code: unknown } {
  const err = e as Error & { code?: unknown };
  return { name: err.constructor.name, message: err.message, code: err.code };
}

const boundary = fc.constantFrom(
  QUERY_VALUE_MAX,
  -QUERY_VALUE_MAX,
  QUERY_VALUE_MAX * (1 + Number.EPSILON),
  -QUERY_VALUE_MAX * (1 + Number.EPSILON),
  // Squares that overflow to Infinity, and the largest finite values.
  1e155,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  // Beyond binary16 (65504) and float32 (3.4e38): the store's check, not the codecs', decides.
  65520,
  1e20,
  3.5e38,
  -0,
  Number.MIN_VALUE,
);
const value = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1, max: 1, noNaN: true }) },
  // Large values in range: their squares sum past the fast check's bound, and nothing may be refused.
  { weight: 3, arbitrary: fc.double({ min: -QUERY_VALUE_MAX, max: QUERY_VALUE_MAX, noNaN: true }) },
  { weight: 3, arbitrary: boundary },
  { weight: 2, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.anything() },
  // Objects: one that converts to NaN, two whose conversion throws (no toString, a toString not callable),
  // so that a refused value before a throwing one decides the error.
  { weight: 1, arbitrary: fc.constantFrom({}, Object.create(null), { toString: '' }) },
);
const query = fc.oneof(
  { weight: 6, arbitrary: fc.array(value, { minLength: DIM, maxLength: DIM }) },
  { weight: 2, arbitrary: fc.array(value, { maxLength: DIM + 2 }) },
  // Sparse: a hole reads as undefined.
  { weight: 1, arbitrary: fc.constant(Object.assign(new Array<number>(DIM).fill(0.5), { 3: undefined })) },
);

describe('query vector checks', () => {
  test('property: search, searchPinned and hybridSearch refuse exactly what the per-value check refused, with its error', async () => {
    const store = new CollectionStore('queries', definition(DIM));
    const records = Array.from({ length: 20 }, (_, i) =>
      makeRecord(
        i,
        Array.from({ length: DIM }, (_, j) => Math.sin(i * 1.3 + j)),
        {},
        { document: `doc ${i}` },
      ),
    );
    await store.apply({ remove: [], upsert: records });
    await fc.assert(
      fc.asyncProperty(query, async (vector) => {
        const want = expectedError(vector);
        const v = vector as number[];
        const calls: [string, () => unknown][] = [
          ['search', () => store.search({ vector: v, k: 3 })],
          ['searchPinned', () => store.searchPinned({ vector: v, k: 3 })],
          ['hybridSearch', () => store.hybridSearch({ vector: v, text: 'doc', k: 3 })],
        ];
        for (const [name, call] of calls) {
          let got: unknown;
          try {
            await call();
          } catch (e) {
            got = e;
          }
          if (want === undefined) assert.equal(got, undefined, `${name} refused an accepted query: ${String(got)}`);
          else {
            assert.notEqual(got, undefined, `${name} accepted a refused query`);
            assert.deepEqual(shown(got), shown(want), name);
          }
        }
        if (want === undefined) {
          // Accepted: the same answer on the main thread and on one of the addon's.
          const ids = (a: { results: { record: { id: string } }[] } | undefined) => a?.results.map((r) => r.record.id);
          assert.deepEqual(ids(await store.searchPinned({ vector: v, k: 3 })), ids(store.search({ vector: v, k: 3 })));
        }
      }),
      // The counterexample a CI run found: a value refused before one whose conversion throws.
      { numRuns: 3000, examples: [[[{}, 0, 0, 0, 0, 0, { toString: '' }, 0] as unknown as number[]]] },
    );
  });
});
