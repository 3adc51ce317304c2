// Searches on threads: the addon's searchAsync / exactAsync answer what the synchronous
// search and exact scan answer, while changes to the graph wait for the searches in flight; and a store's
// searchPinned answers exactly what `search` answered when it was called, or undefined when a block
// changed the store meanwhile (the caller then asks again at a fresh view).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CollectionStore } from '../../../src/engine/index.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS } from '../../../src/engine/metrics.ts';
import { clustered, definition, makeRecord } from '../helpers.ts';

const PARAMS = { m: 8, efConstruction: 32 };

function randomVector(rand: () => number, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = rand() * 2 - 1;
  return v;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('native searches on threads', () => {
  test('searchAsync and exactAsync answer what search and exact answer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 24 }),
        fc.constantFrom('cosine', 'ip', 'l2') as fc.Arbitrary<'cosine' | 'ip' | 'l2'>,
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (n, dim, metric, k, ef, deletedShare, seed) => {
          const rand = lcg(seed);
          const graph = HalfGraph.create(METRIC_OPS[metric], dim, PARAMS, n);
          for (let i = 0; i < n; i++) graph.add(randomVector(rand, dim), i);
          for (let i = 0; i < n; i++) if (rand() * 100 < deletedShare / 2) graph.remove(i);
          const q = randomVector(rand, dim);
          const sync = graph.search(q, k, ef);
          const syncExact = graph.exact(q, k);
          const [walk, scan] = await Promise.all([graph.searchAsync(q, k, ef), graph.exactAsync(q, k)]);
          assert.deepEqual(walk.labels, sync.labels);
          assert.deepEqual(walk.distances, sync.distances);
          assert.deepEqual(scan.labels, syncExact.labels);
          assert.deepEqual(scan.distances, syncExact.distances);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('adds, removals and resizes wait for the searches in flight, which answer for the graph they started on', async () => {
    const dim = 32;
    const rand = lcg(7);
    const graph = HalfGraph.create(METRIC_OPS.cosine, dim, PARAMS, 600);
    for (let i = 0; i < 600; i++) graph.add(randomVector(rand, dim), i);
    for (let round = 0; round < 8; round++) {
      const queries = Array.from({ length: 32 }, () => randomVector(rand, dim));
      const expected = queries.map((q) => graph.search(q, 10, 64));
      const pending = queries.map((q) => graph.searchAsync(q, 10, 64));
      // The same tick: each change waits for the searches above, then runs.
      const base = 600 + round * 400;
      graph.reserve(400);
      for (let i = 0; i < 400; i++) graph.add(randomVector(rand, dim), base + i);
      for (let i = 0; i < 50; i++) graph.remove(round * 50 + i);
      const answers = await Promise.all(pending);
      for (let i = 0; i < answers.length; i++) {
        assert.deepEqual(answers[i]!.labels, expected[i]!.labels, `round ${round}, query ${i}`);
        assert.deepEqual(answers[i]!.distances, expected[i]!.distances, `round ${round}, query ${i}`);
      }
    }
  });

  test('a bad query is refused before any thread runs', async () => {
    const graph = HalfGraph.create(METRIC_OPS.cosine, 4, PARAMS, 16);
    graph.add(new Float32Array([1, 0, 0, 0]), 0);
    await assert.rejects(graph.searchAsync(new Float32Array([1, Number.NaN, 0, 0]), 1, 10), /not finite/);
    await assert.rejects(graph.exactAsync(new Float32Array(3), 1), /expected 4/);
    // Still serving after the refusals (no reader left counted: a change would wait forever).
    graph.add(new Float32Array([0, 1, 0, 0]), 1);
    assert.deepEqual((await graph.searchAsync(new Float32Array([0, 1, 0, 0]), 1, 10)).labels, [1]);
  });
});

/** A store with a small graph. */
function nativeStore(name: string, dim: number, options: ConstructorParameters<typeof CollectionStore>[2] = {}) {
  return new CollectionStore(
    name,
    { ...definition(dim), index: { m: 8, ef_construction: 32, ef_search: 40 } },
    options,
  );
}

describe('store searches pinned to the moment they were asked', () => {
  /**
   * Rounds of: the synchronous answer, then searchPinned and, in the same tick, a block that removes
   * that answer's best record and inserts records next to the query. Each pinned answer must be the
   * synchronous one or undefined; with no block in flight it must be the synchronous one.
   */
  async function pinnedRounds(n: number, dim: number, seed: number): Promise<{ same: number; again: number }> {
    const store = nativeStore('pinned', dim);
    const data = clustered(n, dim, seed);
    await store.apply({ remove: [], upsert: data.vectors.map((v, i) => makeRecord(i, v)) });
    const rand = lcg(seed);
    let next = n;
    let same = 0;
    let again = 0;
    for (let round = 0; round < 24; round++) {
      const q = Array.from(data.vectors[Math.floor(rand() * n)]!, (x) => x + (rand() - 0.5) * 0.01);
      const params = { vector: q, k: 5 };
      const expected = store.search(params);
      const quiet = await store.searchPinned(params);
      assert.deepEqual(quiet, expected, `round ${round}: no block in flight`);
      const pinned = store.searchPinned(params);
      const best = expected.results[0]!.record.key;
      const near = Array.from({ length: 3 }, () => makeRecord(next++, q));
      const block = store.prepare({ remove: [best], upsert: near }).then((commit) => commit());
      const answer = await pinned;
      await block;
      if (answer === undefined) {
        again++;
      } else {
        same++;
        assert.deepEqual(answer, expected, `round ${round}: the answer of the moment it was asked`);
      }
      // The store moved on: the answer now is another one (the near records, the best one gone).
      assert.notDeepEqual(store.search(params), expected);
    }
    return { same, again };
  }

  test('the exact scan of a small collection, on a thread, while blocks commit', async () => {
    const { same, again } = await pinnedRounds(500, 24, 3);
    assert.equal(same + again, 24);
  });

  test('a rebuilt graph swapped in while a search is on a thread: that answer is asked for again', async () => {
    let reached!: () => void;
    let release!: () => void;
    const caughtUp = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const phase = (p: string) => {
      if (p !== 'caught-up') return;
      reached();
      return gate;
    };
    const store = nativeStore('swap', 16, { rebuild: { phase } });
    const data = clustered(2_500, 16, 9);
    await store.apply({ remove: [], upsert: data.vectors.map((v, i) => makeRecord(i, v)) });
    // More than REBUILD_DELETED_MIN deleted: the commit starts a rebuild, held before its swap.
    const removed = data.vectors.slice(0, 1_100).map((v, i) => makeRecord(i, v).key);
    (await store.prepare({ remove: removed, upsert: [] }))();
    await caughtUp;
    const params = { vector: Array.from(data.vectors[2_000]!), k: 5 };
    const expected = store.search(params);
    const pinned = store.searchPinned(params);
    release();
    const answer = await pinned;
    await store.rebuilt();
    assert.equal(store.rebuildStats.rebuilds, 1);
    if (answer !== undefined) assert.deepEqual(answer, expected, 'an answer of the old graph, as of when asked');
    assert.equal(answer, undefined, 'the graph was swapped before the thread answered');
    const ids = (a: typeof expected) => a.results.map((r) => r.record.id);
    assert.deepEqual(ids(store.search(params)), ids(expected));
  });

  test('the graph walk, on a thread, while blocks commit', async () => {
    // Above exactThreshold(384) = 4,000 records, so the plan walks the graph.
    const { same, again } = await pinnedRounds(4_100, 384, 5);
    assert.equal(same + again, 24);
  });
});
