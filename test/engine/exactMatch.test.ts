// A vector searched for itself is an exact match: cosine distance 0 and score 1, never a rounding error
// on the wrong side of the metric's range (−2e-8 / 1.00000002), in every path that produces a distance:
// the exact scan, the HNSW graph, and the vector side of a hybrid answer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CollectionStore, METRIC_OPS } from '../../src/engine/index.ts';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { definition, makeRecord } from './helpers.ts';

const DIM = 8;
/** Vectors exactly representable in binary16 (multiples of 1/64 in [-1, 1]), so stored = queried. */
const vectors = Array.from({ length: 200 }, (_, t) =>
  Array.from({ length: DIM }, (_, j) => Math.round(Math.cos(t * 1.3 + j * 0.77) * 64) / 64),
);
/** Its self-distance in the exact scan's arithmetic comes out at −2.3e-8 before clamping. */
const ROUNDS_NEGATIVE = [0.265625, -0.484375, -0.953125, -0.890625, -0.328125, 0.421875, 0.9375, 0.921875];

describe('exact matches answer distance 0 and score 1 (cosine)', () => {
  test('behavior: the exact scan and hybrid search of a stored vector', async () => {
    const store = new CollectionStore('m', definition(DIM));
    await store.apply({ remove: [], upsert: [makeRecord(1, ROUNDS_NEGATIVE, {}, { document: 'cats' })] });
    const hit = store.search({ vector: ROUNDS_NEGATIVE, k: 1 }).results[0]!;
    assert.deepEqual([hit.distance, hit.score], [0, 1]);
    const hybrid = store.hybridSearch({ vector: ROUNDS_NEGATIVE, text: 'dogs', k: 1 }).results[0]!;
    assert.equal(hybrid.distance, 0);
  });

  test('property: no self-match leaves [0, 2] or its score [-1, 1], in the scan and in the graph', async () => {
    let belowZero = 0;
    for (const [i, v] of vectors.entries()) {
      const store = new CollectionStore('m', definition(DIM));
      await store.apply({ remove: [], upsert: [makeRecord(1, v)] });
      const { distance, score } = store.search({ vector: v, k: 1 }).results[0]!;
      assert.ok(distance >= 0 && distance <= 2 && score <= 1 && score >= -1, `scan ${i}: ${distance} / ${score}`);
      const graph = HalfGraph.create(METRIC_OPS.cosine, DIM, { m: 16, efConstruction: 64 });
      graph.add(Float32Array.from(v), 0);
      const found = graph.search(v, 1, 40);
      const d = found.distances[0]!;
      assert.ok(d >= 0 && METRIC_OPS.cosine.score(d) <= 1, `graph ${i}: ${d}`);
      // The unclamped formula shows the case this guards is real for these vectors.
      const dot = v.reduce((s, x) => s + x * x, 0);
      if (1 - dot * (1 / Math.sqrt(dot)) * Math.fround(1 / Math.sqrt(dot)) < 0) belowZero++;
    }
    assert.ok(belowZero > 0, 'some self-distance rounds below zero without the clamp');
    assert.equal(METRIC_OPS.cosine.distance(ROUNDS_NEGATIVE, ROUNDS_NEGATIVE), 0);
  });
});
