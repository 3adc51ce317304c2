// A graph grown by inserts from empty, as a store grows it (reserve a block, then insert it), through many
// capacity steps: past the 16 MiB where level 0 goes onto huge pages and past the first reservation of
// address space (native/src/level0.h), where the written pages move to a larger one. Every vector reads
// back as inserted and the walk finds what an exact scan finds. And an element holds its links and its
// vector only: its label is kept once, outside it (native/src/labelMirror.h).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floatToHalfBits } from '../../../src/collections/index.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { nativeAddon } from '../../../src/engine/hnsw/nativeAddon.ts';
import { METRIC_OPS } from '../../../src/engine/metrics.ts';
import { mulberry32 } from '../helpers.ts';

// 8,400 elements of 4,000 dimensions: about 67 MiB of level 0, past the first 64 MiB reservation.
const DIM = 4000;
const N = 8400;
const BLOCK = 100;
const PARAMS = { m: 8, efConstruction: 32 };

test('an element holds its links, its inverse norm and its binary16 values, no label', () => {
  const { HalfIndex } = nativeAddon();
  for (const [dim, m] of [
    [384, 16],
    [7, 5],
  ] as const) {
    const index = new HalfIndex({ metric: 'cosine', dim, maxElements: 16, m, efConstruction: 32, seed: 1 });
    assert.equal(index.info().elementBytes, 4 + 2 * m * 4 + 4 + 2 * dim);
  }
});

test('a graph grown block by block past several capacity steps keeps every vector and answers as an exact scan', () => {
  const random = mulberry32(11);
  // Vectors on a 6-dimensional subspace around a few centres: nearest neighbours mean something at this
  // dimension, and a small graph finds them.
  const basis = Array.from({ length: 6 }, () => Float32Array.from({ length: DIM }, () => random() - 0.5));
  const centres = Array.from({ length: 4 }, () => Float32Array.from({ length: DIM }, () => random() - 0.5));
  const vector = (i: number) => {
    const v = Float32Array.from(centres[i % centres.length]!);
    for (const b of basis) {
      const z = random() - 0.5;
      for (let d = 0; d < DIM; d++) v[d]! += z * b[d]!;
    }
    return v;
  };
  const g = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS);
  const capacities = new Set<number>();
  const kept = new Map<number, Float32Array>();
  for (let i = 0; i < N; i++) {
    if (i % BLOCK === 0) {
      g.reserve(BLOCK);
      capacities.add(g.capacity);
    }
    const v = vector(i);
    g.add(v, i);
    if (i % 97 === 0) kept.set(i, v);
  }
  assert.equal(g.elementCount, N);
  assert.ok(capacities.size >= 10, `grew ${capacities.size} times`);
  for (const [label, v] of kept)
    assert.deepEqual(
      [...g.halves(label)],
      Array.from(v, (x) => floatToHalfBits(x)),
      `label ${label} reads back as inserted`,
    );
  let found = 0;
  const queries = 20;
  for (let q = 0; q < queries; q++) {
    const query = vector(q * 13 + 5);
    const truth = new Set(g.exact(query, 10).labels);
    for (const label of g.search(query, 10, 64).labels) if (truth.has(label)) found++;
  }
  const recall = found / (queries * 10);
  assert.ok(recall >= 0.9, `recall@10 ${recall}`);
});
