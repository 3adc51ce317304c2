// Property test of the planner's graph strategies for filtered search (src/engine/plan/): the
// oversampled unfiltered search filtered afterwards (broad sets) and the filtered walk at a width
// scaled by the share that passes. For random filters (random, clustered and far sets, AND / OR) and
// random k, every answer holds exactly min(k, passing) results, only passing records, nearest first
// with their true distances; over all runs, recall@k against an exact scan stays ≥ 0.9, and the graph
// strategies really ran (some answers are `hnsw`).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CollectionStore, METRIC_OPS } from '../../../src/engine/index.ts';
import { clustered, definition, makeRecord, mulberry32 } from '../helpers.ts';

// dim 128: exact threshold 6000 < 8000 records, so broad filters (> ~1265 passing at ef 100) take the graph.
const DIM = 128;
const N = 8000;

type Filter = { where: string; allows: (bucket: number, cluster: number) => boolean };

const filterArb: fc.Arbitrary<Filter> = fc.oneof(
  // Random sets: every share from 0.1 % to all.
  fc.integer({ min: 1, max: 1000 }).map((l) => ({ where: `bucket < ${l}`, allows: (b: number) => b < l })),
  // Clustered sets: whole clusters of the data (queries near and far from them).
  fc.integer({ min: 1, max: 15 }).map((c) => ({ where: `cluster < ${c}`, allows: (_: number, k: number) => k < c })),
  fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 100, max: 1000 })).map(([c, l]) => ({
    where: `cluster = ${c} && bucket < ${l}`,
    allows: (b: number, k: number) => k === c && b < l,
  })),
  fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 1, max: 600 })).map(([c, l]) => ({
    where: `cluster = ${c} || bucket < ${l}`,
    allows: (b: number, k: number) => k === c || b < l,
  })),
);

describe('filtered search strategies (property)', async () => {
  const { vectors, cluster } = clustered(N, DIM, 21);
  const rand = mulberry32(22);
  const bucket = Array.from({ length: N }, () => Math.floor(rand() * 1000));
  const records = vectors.map((v, i) => makeRecord(i, v, { bucket: bucket[i]!, cluster: cluster[i]! }));
  const store = new CollectionStore('paths', definition(DIM, { bucket: 'i32', cluster: 'i32' }));
  await store.apply({ remove: [], upsert: records });
  const queries = clustered(64, DIM, 23).vectors;
  const distance = METRIC_OPS.cosine.distance;

  test('never under-fills, only passing records, nearest first, true distances, recall ≥ 0.9', () => {
    let recallSum = 0;
    let runs = 0;
    let graph = 0;
    fc.assert(
      fc.property(
        filterArb,
        fc.integer({ min: 0, max: queries.length - 1 }),
        fc.integer({ min: 1, max: 50 }),
        (f, qi, k) => {
          const q = queries[qi]!;
          const passing = records.filter((_, i) => f.allows(bucket[i]!, cluster[i]!));
          const truth = passing
            .map((r) => distance(q, r.vector))
            .sort((a, b) => a - b)
            .slice(0, k);
          const res = store.search({ vector: q, k, where: f.where });
          assert.equal(res.results.length, Math.min(k, passing.length), `${f.where}, k ${k}`);
          let last = -Infinity;
          for (const hit of res.results) {
            const i = Number(hit.record.id.slice(3));
            assert.ok(f.allows(bucket[i]!, cluster[i]!), `${hit.record.id} does not pass ${f.where}`);
            assert.ok(Math.abs(hit.distance - distance(q, records[i]!.vector)) < 1e-4);
            assert.ok(hit.distance >= last, 'nearest first');
            last = hit.distance;
          }
          if (truth.length === 0) return;
          // Recall by distance (robust to ties): results within the true k-th distance.
          const kth = truth[truth.length - 1]! + 1e-6;
          const found = res.results.filter((h) => h.distance <= kth).length / truth.length;
          if (res.search_mode === 'exact') assert.equal(found, 1, `exact answer for ${f.where}, k ${k}`);
          recallSum += found;
          runs++;
          if (res.search_mode === 'hnsw') graph++;
        },
      ),
      { numRuns: 300, seed: 11 },
    );
    assert.ok(graph >= 30, `graph strategies ran ${graph} times`);
    assert.ok(recallSum / runs >= 0.9, `recall ${recallSum / runs}`);
  });
});
