// The graph conformance suite: what the store and the planner rely on of a graph (src/engine/hnsw/graph.ts),
// held against every implementation in GRAPHS. Random sequences of adds, replacements (a new label for a
// record's new vector, the old one removed) and deletes are checked against a model of the live labels:
// the exact scan answers the true nearest, the walk returns only live labels (allowed ones when filtered),
// nearest first, and every live one at a width covering the graph; growing keeps every vector; a snapshot
// round trip answers alike; the searches on threads answer what the synchronous calls answer.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../../src/collections/index.ts';
import type { Graph, GraphParams } from '../../../src/engine/hnsw/graph.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { HNSW_INITIAL_CAPACITY } from '../../../src/engine/hnsw/params.ts';
import { METRIC_OPS, type MetricOps } from '../../../src/engine/metrics.ts';

type Implementation = {
  name: string;
  create(ops: MetricOps, dim: number, params: GraphParams, capacity?: number): Graph;
  read(ops: MetricOps, dim: number, params: GraphParams, path: string): Promise<Graph>;
};

/** Every graph implementation the store can run on. */
const GRAPHS: Implementation[] = [
  {
    name: 'HalfGraph (native addon)',
    create: (ops, dim, params, capacity) => HalfGraph.create(ops, dim, params, capacity),
    read: (ops, dim, params, path) => HalfGraph.read(ops, dim, params, path),
  },
];

const DIM = 6;
const PARAMS = { m: 8, efConstruction: 32 };
const METRICS = ['l2', 'cosine', 'ip'] as const;

/** The value a graph stores for x: binary16, as the collection type is halfvec. */
const half = (x: number) => HALF_TO_FLOAT32[floatToHalfBits(x)]!;

type Op = { t: 'add'; v: number[] } | { t: 'replace'; at: number; v: number[] } | { t: 'delete'; at: number };

const component = fc.integer({ min: -64, max: 64 }).map((i) => i / 16);
const vectorArb = fc.array(component, { minLength: DIM, maxLength: DIM });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('add' as const), v: vectorArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replace' as const), at: fc.nat(), v: vectorArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('delete' as const), at: fc.nat() }) },
);

/** Applies ops to a fresh graph as the store does (reserve, then add under a fresh label); returns the live labels' vectors. */
function build(
  impl: Implementation,
  ops: MetricOps,
  steps: Op[],
): { graph: Graph; live: Map<number, Float32Array>; churned: boolean } {
  const graph = impl.create(ops, DIM, PARAMS);
  const live = new Map<number, Float32Array>();
  let churned = false;
  let next = 0;
  const add = (v: number[]) => {
    graph.reserve(1);
    const vector = Float32Array.from(v);
    graph.add(vector, next);
    live.set(next++, Float32Array.from(v, half));
  };
  for (const step of steps) {
    const labels = [...live.keys()];
    if (step.t === 'add' || labels.length === 0) {
      add(step.t === 'delete' ? [1, 0, 0, 0, 0, 0] : step.v);
      continue;
    }
    const label = labels[step.at % labels.length]!;
    churned = true;
    graph.remove(label);
    live.delete(label);
    if (step.t === 'replace') add(step.v);
  }
  return { graph, live, churned };
}

/** The true k nearest live labels' distances (pgvector's), ascending. */
function trueDistances(ops: MetricOps, live: Map<number, Float32Array>, q: Float32Array, k: number): number[] {
  return [...live.values()]
    .map((v) => ops.distance(q, v))
    .sort((a, b) => a - b)
    .slice(0, k);
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(a), Math.abs(b));

function assertAscending(distances: number[], what: string): void {
  for (let i = 1; i < distances.length; i++)
    assert.ok(distances[i - 1]! <= distances[i]! + 1e-6, `${what}: not ascending`);
}

for (const impl of GRAPHS) {
  describe(`graph conformance: ${impl.name}`, () => {
    let dir = '';
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'arkivector-graph-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    test('property: adds, replacements and deletes: the scan is exact, the walk returns live labels nearest first', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...METRICS),
          fc.array(opArb, { minLength: 1, maxLength: 40 }),
          vectorArb,
          fc.integer({ min: 1, max: 12 }),
          (metric, steps, query, k) => {
            const ops = METRIC_OPS[metric];
            const { graph, live, churned } = build(impl, ops, steps);
            const q = Float32Array.from(query);
            assert.equal(graph.elementCount - graph.deleted, live.size, 'elements less deleted = live');
            const want = trueDistances(ops, live, q, k);
            const exact = graph.exact(q, k);
            assert.ok(
              exact.labels.every((l) => live.has(l)),
              'the scan returns live labels',
            );
            assert.equal(exact.labels.length, want.length);
            for (const [i, d] of exact.distances.entries())
              assert.ok(close(d, want[i]!), `scan ${i}: ${d} vs ${want[i]}`);
            // A width covering the whole graph finds every live label it must, as long as nothing was
            // deleted: after deletions a tiny graph's walk may miss live elements (hnswlib's), which the
            // planner answers by widening, then by the exact scan.
            const walk = graph.search(q, k, Math.max(64, 4 * graph.elementCount));
            assert.ok(
              walk.labels.every((l) => live.has(l)),
              'the walk returns live labels',
            );
            assert.equal(new Set(walk.labels).size, walk.labels.length, 'distinct');
            if (churned) assert.ok(walk.labels.length <= want.length, 'at most k');
            else assert.equal(walk.labels.length, want.length, 'the walk fills k');
            assertAscending(walk.distances, 'walk');
            for (const [i, l] of walk.labels.entries())
              assert.ok(close(walk.distances[i]!, ops.distance(q, live.get(l)!)), `walk distance of ${l}`);
            // Every live label hands its stored (binary16) vector back.
            for (const [l, v] of live) assert.deepEqual([...graph.vector(l, new Float32Array(DIM))], [...v]);
          },
        ),
        { numRuns: 150 },
      );
    });

    test('property: a filtered search returns allowed live labels only, and the scan over candidates is exact', () => {
      fc.assert(
        fc.property(
          fc.array(opArb, { minLength: 1, maxLength: 40 }),
          vectorArb,
          fc.integer({ min: 1, max: 10 }),
          fc.integer({ min: 1, max: 2 ** 31 }),
          (steps, query, k, seed) => {
            const ops = METRIC_OPS.cosine;
            const { graph, live } = build(impl, ops, steps);
            const q = Float32Array.from(query);
            const labels = Math.max(0, ...live.keys()) + 64;
            // Labels are their own slots here; a live label is allowed by the seed's bits.
            const labelSlot = new Int32Array(labels).map((_, l) => (live.has(l) ? l : -1));
            const bits = new Uint8Array((labels + 7) >>> 3);
            const allowed = [...live.keys()].filter((l) => (seed >>> (l % 31)) & 1);
            for (const l of allowed) bits[l >>> 3]! |= 1 << (l & 7);
            const hits = graph.search(q, k, 64, { labelSlot, allowed: { bits: () => bits, count: allowed.length } });
            assert.ok(
              hits.labels.every((l) => allowed.includes(l)),
              'only allowed labels',
            );
            assert.equal(new Set(hits.labels).size, hits.labels.length, 'distinct');
            assertAscending(hits.distances, 'filtered walk');
            // Hidden labels (−1 in the map) never come back, even without an allowed set.
            const hidden = graph.search(q, k, 64, { labelSlot: labelSlot.map((s) => (s % 2 === 0 ? s : -1)) });
            assert.ok(hidden.labels.every((l) => l % 2 === 0 && live.has(l)));
            const sub = new Map(allowed.map((l) => [l, live.get(l)!]));
            const scan = graph.exact(q, k, Uint32Array.from(allowed));
            const truth = trueDistances(ops, sub, q, k);
            assert.equal(scan.distances.length, truth.length);
            for (const [i, d] of scan.distances.entries())
              assert.ok(close(d, truth[i]!), `scan ${i}: ${d} vs ${truth[i]}`);
          },
        ),
        { numRuns: 120 },
      );
    });

    test('growing past the initial capacity keeps every vector; the change counter moves with every change', () => {
      const graph = impl.create(METRIC_OPS.l2, DIM, PARAMS);
      assert.equal(graph.allocated, false, 'nothing allocated before the first insert');
      assert.deepEqual(graph.search(new Float32Array(DIM), 3, 10).labels, []);
      const n = HNSW_INITIAL_CAPACITY * 8;
      let changes = graph.changes;
      for (let i = 0; i < n; i++) {
        graph.reserve(1);
        graph.add(
          Float32Array.from({ length: DIM }, (_, j) => Math.sin(i * 3.1 + j)),
          i,
        );
        assert.ok(graph.changes > changes, `add ${i} counted`);
        changes = graph.changes;
      }
      assert.ok(graph.capacity >= n && graph.elementCount === n && graph.allocated);
      for (const i of [0, 17, n - 1]) {
        const v = graph.vector(i, new Float32Array(DIM));
        assert.equal(graph.exact(v, 1).labels[0], i);
        assert.equal(graph.search(v, 1, 64).labels[0], i);
      }
      graph.remove(5);
      assert.ok(graph.changes > changes, 'a remove counted');
      assert.equal(graph.deleted, 1);
      // A later add reuses the deleted element's room.
      graph.reserve(1);
      graph.add(new Float32Array(DIM).fill(0.5), n);
      assert.equal(graph.deleted, 0);
      assert.equal(graph.elementCount, n);
    });

    test('a snapshot round trip answers alike; an empty graph round-trips empty', async () => {
      const { graph, live } = build(
        impl,
        METRIC_OPS.cosine,
        Array.from(
          { length: 60 },
          (_, i): Op =>
            i % 7 === 3
              ? { t: 'delete', at: i }
              : i % 5 === 2
                ? { t: 'replace', at: i, v: [i, 1, -i, 2, 0, 1] }
                : { t: 'add', v: [Math.sin(i), Math.cos(i), i / 60, 1, -1, i % 3] },
        ),
      );
      const path = join(dir, 'graph.bin');
      await graph.write(path);
      const back = await impl.read(METRIC_OPS.cosine, DIM, PARAMS, path);
      back.deleted = graph.deleted;
      assert.equal(back.elementCount, graph.elementCount);
      const q = Float32Array.of(0.3, -0.2, 0.9, 0.1, 0, 0.5);
      assert.deepEqual(back.exact(q, 8), graph.exact(q, 8));
      assert.deepEqual(back.search(q, 8, 100), graph.search(q, 8, 100));
      for (const [l, v] of live) assert.deepEqual([...back.vector(l, new Float32Array(DIM))], [...v]);
      const empty = impl.create(METRIC_OPS.cosine, DIM, PARAMS);
      await empty.write(join(dir, 'empty.bin'));
      const emptyBack = await impl.read(METRIC_OPS.cosine, DIM, PARAMS, join(dir, 'empty.bin'));
      assert.equal(emptyBack.allocated, false);
      assert.equal(emptyBack.elementCount, 0);
    });

    test('the searches on threads answer what the synchronous calls answer', async () => {
      const { graph, live } = build(
        impl,
        METRIC_OPS.ip,
        Array.from(
          { length: 80 },
          (_, i): Op => (i % 9 === 4 ? { t: 'delete', at: i } : { t: 'add', v: [i % 5, 1, Math.sin(i), 0, 2, -1] }),
        ),
      );
      const q = Float32Array.of(1, 0.5, -0.5, 0, 1, 0);
      // The same answers (a thread does not count filter checks).
      const same = (a: { labels: number[]; distances: number[] }, b: { labels: number[]; distances: number[] }) =>
        assert.deepEqual([a.labels, a.distances], [b.labels, b.distances]);
      same(await graph.searchAsync(q, 10, 64), graph.search(q, 10, 64));
      same(await graph.exactAsync(q, 10), graph.exact(q, 10));
      const allowed = [...live.keys()].filter((l) => l % 3 !== 0);
      const candidates = Uint32Array.from(allowed);
      same(await graph.exactAsync(q, 5, candidates), graph.exact(q, 5, candidates));
      const size = Math.max(...live.keys()) + 8;
      const labelSlot = new Int32Array(size).map((_, l) => (live.has(l) ? l : -1));
      const bits = new Uint8Array((size + 7) >>> 3);
      for (const l of allowed) bits[l >>> 3]! |= 1 << (l & 7);
      const shape = { count: allowed.length };
      const onThread = await graph.filteredAsync(q, 6, 64, bits, shape);
      const here = graph.search(q, 6, 64, { labelSlot, allowed: { bits: () => bits, ...shape } });
      same(onThread, here);
    });
  });
}
