// The native engine's own unfiltered walk of level 0 (native/src/unfilteredWalk.h) against hnswlib's
// (searchKnn, which the addon runs for a search given the label → slot map): the same answer, label for
// label and distance for distance. Both are hnswlib's non-bare walk once an element is deleted, so every
// graph here has deletions; a map that hides no label makes hnswlib's walk the unfiltered one.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS, type MetricOps } from '../../../src/engine/metrics.ts';
import { clustered, mulberry32 } from '../helpers.ts';

const PARAMS = { m: 8, efConstruction: 48 };
const DIM = 40;
const N = 1500;
const data = clustered(N, DIM, 3, { latent: 12 }).vectors;
const queries = clustered(60, DIM, 4, { latent: 12 }).vectors;
const visible = Int32Array.from({ length: N }, (_, i) => i);

/** A graph of the data with a share of its labels deleted (chosen by `seed`). */
function graphWithDeletions(ops: MetricOps, share: number, seed: number): HalfGraph {
  const g = HalfGraph.create(ops, DIM, PARAMS, N);
  for (let i = 0; i < N; i++) g.add(data[i]!, i);
  const rand = mulberry32(seed);
  for (let i = 0; i < N; i++) if (rand() < share) g.remove(i);
  return g;
}

describe('native unfiltered walk', () => {
  const graphs = [
    graphWithDeletions(METRIC_OPS.cosine, 0.02, 1),
    graphWithDeletions(METRIC_OPS.cosine, 0.4, 2),
    graphWithDeletions(METRIC_OPS.l2, 0.1, 3),
    graphWithDeletions(METRIC_OPS.ip, 0.1, 4),
  ];

  test('answers as hnswlib’s own walk does: same labels, same distances, same order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: graphs.length - 1 }),
        fc.integer({ min: 0, max: queries.length - 1 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 300 }),
        (g, qi, k, ef) => {
          const graph = graphs[g]!;
          const q = queries[qi]!;
          const ours = graph.search(q, k, ef);
          const hnswlib = graph.search(q, k, ef, { labelSlot: visible });
          assert.deepEqual(ours.labels, hnswlib.labels);
          assert.deepEqual(ours.distances, hnswlib.distances);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('on a thread too (searchAsync), the same answer', async () => {
    const graph = graphs[1]!;
    for (const [i, q] of queries.entries()) {
      const k = 1 + (i % 25);
      const ef = 10 + 7 * i;
      const hnswlib = graph.search(q, k, ef, { labelSlot: visible });
      const onThread = await graph.searchAsync(q, k, ef);
      assert.deepEqual(onThread.labels, hnswlib.labels);
      assert.deepEqual(onThread.distances, hnswlib.distances);
    }
  });
});
