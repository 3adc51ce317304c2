// Answers every node agrees on: two stores holding the same records, reached through
// different histories (insertion order, records that came and went, so different slots and a different
// keyword index history), give identical exact, keyword and hybrid answers, scores included, with many
// exact ties (duplicate vectors, duplicate documents) and ties straddling the k-th place.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CollectionStore } from '../../../src/engine/index.ts';
import { definition, keyOf, makeRecord, mulberry32 } from '../helpers.ts';

const DIM = 4;
const POOL = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
  [0.5, 0.5, 0, 0],
  [0, 0, 1, 1],
];
const DOCS = ['cats purr', 'dogs bark loudly', 'cats and dogs', 'ferns like shade and cats'];

type Answer = { key: string; score: number; distance?: number }[];
const keysAndScores = (results: { record: { key: string }; score: number; distance?: number }[]): Answer =>
  results.map((r) => ({
    key: r.record.key,
    score: r.score,
    ...(r.distance !== undefined ? { distance: r.distance } : {}),
  }));

async function build(n: number, seed: number, churn: number, metric: 'cosine' | 'l2' | 'ip') {
  const rand = mulberry32(seed);
  const store = new CollectionStore('ties', definition(DIM, { g: 'i32' }, metric));
  const records = Array.from({ length: n }, (_, i) =>
    makeRecord(i + 1, POOL[i % POOL.length]!, { g: i % 3 }, { document: DOCS[(i * 7) % DOCS.length] }),
  );
  const order = records.map((_, i) => i).sort(() => rand() - 0.5);
  // Records that come and go first, so slots and keyword history differ between the two stores.
  const transient = Array.from({ length: churn }, (_, i) =>
    makeRecord(10_000 + i, POOL[i % POOL.length]!, { g: 1 }, { document: DOCS[i % DOCS.length] }),
  );
  if (churn) {
    await store.apply({ remove: [], upsert: transient });
    await store.apply({ remove: [], upsert: order.slice(0, n >> 1).map((i) => records[i]!) });
    await store.apply({ remove: transient.map((r) => r.key), upsert: [] });
    await store.apply({ remove: [], upsert: order.slice(n >> 1).map((i) => records[i]!) });
  } else {
    for (const i of order) await store.apply({ remove: [], upsert: [records[i]!] });
  }
  return store;
}

describe('ties: equal scores are ordered by entity key, whatever the history', () => {
  test('exact, keyword and hybrid answers are identical across histories (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        fc.integer(),
        fc.constantFrom('cosine' as const, 'l2' as const, 'ip' as const),
        fc.integer({ min: 1, max: 50 }),
        fc.constantFrom(...POOL),
        fc.constantFrom('cats', 'dogs', 'cats dogs', 'shade'),
        fc.option(fc.constantFrom('g = 0', 'g != 1', 'g >= 1'), { nil: undefined }),
        async (n, seedA, seedB, metric, k, vector, text, where) => {
          const a = await build(n, seedA, 0, metric);
          const b = await build(n, seedB, 7, metric);
          const searchA = keysAndScores(a.search({ vector, k, where }).results);
          assert.deepEqual(keysAndScores(b.search({ vector, k, where }).results), searchA);
          assert.equal(searchA.length, Math.min(k, a.count({ where })), 'k stays exact');
          assert.deepEqual(
            keysAndScores(b.keywordSearch({ text, k, where }).results),
            keysAndScores(a.keywordSearch({ text, k, where }).results),
          );
          assert.deepEqual(
            keysAndScores(b.hybridSearch({ vector, text, k, where }).results),
            keysAndScores(a.hybridSearch({ vector, text, k, where }).results),
          );
        },
      ),
      { numRuns: 60, seed: 8010 },
    );
  });

  test('a tie straddling the k-th place is cut by entity key, in every mode', async () => {
    const store = new CollectionStore('t', definition(DIM));
    // Ten identical vectors and documents, inserted in descending key order so slots run against keys.
    const records = Array.from({ length: 10 }, (_, i) =>
      makeRecord(10 - i, [1, 0, 0, 0], {}, { document: 'same text' }),
    );
    for (const r of records) await store.apply({ remove: [], upsert: [r] });
    const wanted = [keyOf(1), keyOf(2), keyOf(3)];
    assert.deepEqual(
      store.search({ vector: [1, 0, 0, 0], k: 3 }).results.map((r) => r.record.key),
      wanted,
    );
    assert.deepEqual(
      store.keywordSearch({ text: 'same', k: 3 }).results.map((r) => r.record.key),
      wanted,
    );
    assert.deepEqual(
      store.hybridSearch({ vector: [1, 0, 0, 0], text: 'same', k: 3 }).results.map((r) => r.record.key),
      wanted,
    );
  });
});
