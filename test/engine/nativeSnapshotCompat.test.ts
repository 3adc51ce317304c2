// Graph files written before the graph kept its labels outside the elements still load: the fixture
// (test/engine/fixtures/native-graph-main, hnsw.bin and expected.json) was written by the addon as built
// from main before that change, over 630 inserts with 40 deletes and 30 of their slots reused, and its
// answers recorded then. The file format is hnswlib's, unchanged: written again, the file is the same
// bytes but for the capacity in its header.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS } from '../../src/engine/metrics.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'native-graph-main');
type Expected = {
  dim: number;
  m: number;
  efConstruction: number;
  count: number;
  deleted: number;
  nextLabel: number;
  queries: number[][];
  answers: { labels: number[]; distances: number[] }[];
  exact: number[][];
  halves: Record<string, number[]>;
};
const expected = JSON.parse(await readFile(join(FIXTURE, 'expected.json'), 'utf8')) as Expected;
const params = { m: expected.m, efConstruction: expected.efConstruction };
const load = () => HalfGraph.read(METRIC_OPS.cosine, expected.dim, params, join(FIXTURE, 'hnsw.bin'));

test('a graph written by the previous layout loads and answers as it did', async () => {
  const g = await load();
  assert.equal(g.elementCount, expected.count);
  expected.queries.forEach((q, i) => {
    const hits = g.search(Float32Array.from(q), 10, 64);
    assert.deepEqual(hits.labels, expected.answers[i]!.labels);
    for (const [j, d] of hits.distances.entries()) assert.ok(Math.abs(d - expected.answers[i]!.distances[j]!) < 1e-6);
    assert.deepEqual(g.exact(Float32Array.from(q), 10).labels, expected.exact[i]);
  });
  for (const [label, values] of Object.entries(expected.halves)) assert.deepEqual([...g.halves(Number(label))], values);
  // Deleted labels stay deleted: the first 120 labels, every third one, less none (their slots were reused
  // by new labels, not by them).
  assert.throws(() => g.halves(0), /label not found/);
  assert.throws(() => g.halves(117), /label not found/);
});

test('written again, the file is the same bytes but for the capacity', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-graph-file-'));
  try {
    const g = await load();
    const path = join(dir, 'hnsw.bin');
    await g.write(path);
    const before = await readFile(join(FIXTURE, 'hnsw.bin'));
    const after = await readFile(path);
    assert.equal(after.length, before.length);
    // Header: offsetLevel0 (8 bytes), then the capacity (8), then the rest.
    assert.ok(after.subarray(0, 8).equals(before.subarray(0, 8)));
    assert.ok(after.subarray(16).equals(before.subarray(16)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a loaded graph takes inserts and deletes, and reuses the deleted slots', async () => {
  const g = await load();
  // The store sets this from its manifest.
  g.deleted = expected.deleted;
  const extra = 50;
  g.reserve(extra);
  const q = Float32Array.from(expected.queries[0]!);
  for (let i = 0; i < extra; i++) {
    const v = q.map((x, d) => x + 0.01 * Math.sin(i * 7 + d));
    if (g.deleted > 0) g.add(v, expected.nextLabel + i);
    else {
      g.reserve(1);
      g.add(v, expected.nextLabel + i);
    }
  }
  assert.equal(g.elementCount, expected.count + extra - expected.deleted);
  const hits = g.search(q, 10, 200);
  const exact = g.exact(q, 10);
  assert.deepEqual(new Set(hits.labels), new Set(exact.labels));
  for (const label of hits.labels) assert.ok(label >= expected.nextLabel);
});
