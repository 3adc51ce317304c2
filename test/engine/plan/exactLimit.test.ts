// The native engine's planner (src/engine/plan/filtered.ts) at a small per-request width: a set small
// enough that scanning it costs less than any walk is scanned exactly whatever the width (recall 1 against
// an exact scan), and a set far above that floor is still walked.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CollectionStore, METRIC_OPS } from '../../../src/engine/index.ts';
import { clustered, definition, makeRecord, mulberry32 } from '../helpers.ts';

const DIM = 48;
const N = 20_000;
/** Per-request ef_search 4–9: hnswlib widths 10–23, where 40 × the width is under 1,000 records. */
const NARROW = [4, 6, 8, 9];

describe('planner with the native engine: small sets at a small width', async () => {
  const data = clustered(N, DIM, 51);
  const rand = mulberry32(52);
  const bucket = Array.from({ length: N }, () => Math.floor(rand() * N));
  const records = data.vectors.map((v, i) => makeRecord(i, v, { bucket: bucket[i]! }));
  // As stored (binary16-rounded), so the exact answers computed here are the store's exact answers.
  const vectors = records.map((r) => Float32Array.from(r.vector));
  const store = new CollectionStore('floor', definition(DIM, { bucket: 'i32' }));
  await store.apply({ remove: [], upsert: records });
  const queries = clustered(12, DIM, 53).vectors;
  const distance = METRIC_OPS.cosine.distance;

  function exactTop(q: Float32Array, k: number, limit: number): number[] {
    const d: [number, number][] = [];
    for (let i = 0; i < N; i++) if (bucket[i]! < limit) d.push([distance(q, vectors[i]!), i]);
    d.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return d.slice(0, k).map((x) => x[1]);
  }

  test('a random set of ~1,500 records is scanned exactly at every width from 10 to 23', () => {
    const limit = 1500;
    const passing = bucket.filter((b) => b < limit).length;
    assert.ok(passing > 1200 && passing < 1800, `${passing} records in the set`);
    for (const q of queries) {
      const truth = exactTop(q, 10, limit);
      const kth = distance(q, vectors[truth.at(-1)!]!) + 1e-6;
      for (const efSearch of NARROW) {
        const res = store.search({ vector: q, k: 10, where: `bucket < ${limit}`, efSearch });
        assert.equal(res.search_mode, 'exact', `ef_search ${efSearch}: ${passing} allowed records walked`);
        const found = res.results.filter((h) => distance(q, vectors[Number(h.record.id.slice(3))]!) <= kth);
        assert.equal(found.length, truth.length, `ef_search ${efSearch}: recall ${found.length / truth.length}`);
      }
    }
  });

  test('a random set of half the records is still walked at those widths', () => {
    const limit = N / 2;
    for (const q of queries)
      for (const efSearch of NARROW) {
        const res = store.search({ vector: q, k: 10, where: `bucket < ${limit}`, efSearch });
        assert.equal(res.search_mode, 'hnsw', `ef_search ${efSearch}: half the records scanned exactly`);
        assert.equal(res.results.length, 10);
      }
  });
});
