// Filtered searches on threads: the addon's filteredAsync answers what the synchronous
// filtered walk answers, while changes to the graph wait for it; and a store's searchPinned /
// hybridSearchPinned with a filter answer exactly what `search` / `hybridSearch` answered when called
// (every graph call of the plan on a thread: the walk, the post-filter's walk, the exact scan over the
// allowed records), or undefined when a block changed the store meanwhile.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import fc from 'fast-check';
import { CollectionStore } from '../../../src/engine/index.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS } from '../../../src/engine/metrics.ts';
import { clustered, definition, makeRecord, mulberry32 } from '../helpers.ts';

const PARAMS = { m: 8, efConstruction: 32 };

function randomVector(rand: () => number, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = rand() * 2 - 1;
  return v;
}

/** The filter of a graph whose label i sits in slot i: the slots with their bit set, as the planner builds it. */
function filterOf(n: number, allowed: (label: number) => boolean, extra: { farEf?: number; nearScale?: number }) {
  const labelSlot = new Int32Array(n).map((_, i) => i);
  const bits = new Uint8Array((n + 7) >>> 3);
  const labelBits = new Uint8Array((n + 7) >>> 3);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (!allowed(i)) continue;
    bits[i >>> 3]! |= 1 << (i & 7);
    labelBits[i >>> 3]! |= 1 << (i & 7);
    count++;
  }
  const predicate = (slot: number) => ((bits[slot >>> 3]! >> (slot & 7)) & 1) === 1;
  return { filter: { labelSlot, allowed: { predicate, bits: () => bits, count, ...extra } }, labelBits };
}

describe('native filtered searches on threads', () => {
  test('filteredAsync answers what the synchronous filtered walk answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 24 }),
        fc.constantFrom('cosine', 'ip', 'l2') as fc.Arbitrary<'cosine' | 'ip' | 'l2'>,
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 60 }),
        fc.constantFrom(undefined, 0, 50),
        fc.constantFrom(undefined, 0, 2.5),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (n, dim, metric, k, ef, share, deletedShare, farEf, nearScale, seed) => {
          const rand = mulberry32(seed);
          const graph = HalfGraph.create(METRIC_OPS[metric], dim, PARAMS, n);
          for (let i = 0; i < n; i++) graph.add(randomVector(rand, dim), i);
          for (let i = 0; i < n; i++) if (rand() * 100 < deletedShare / 2) graph.remove(i);
          const pass = Array.from({ length: n }, () => rand() * 100 < share);
          const { filter, labelBits } = filterOf(n, (i) => pass[i]!, { farEf, nearScale });
          const q = randomVector(rand, dim);
          const sync = graph.search(q, k, ef, filter);
          const onThread = await graph.filteredAsync(q, k, ef, labelBits, filter.allowed);
          assert.deepEqual(onThread.labels, sync.labels);
          assert.deepEqual(onThread.distances, sync.distances);
          assert.equal(onThread.checks, sync.checks);
          assert.equal(onThread.landed, sync.landed);
          const candidates = Uint32Array.from(pass.flatMap((p, i) => (p ? [i] : [])));
          const scan = await graph.exactAsync(q, k, candidates);
          assert.deepEqual(scan.labels, graph.exact(q, k, candidates).labels);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('adds, removals and resizes wait for the filtered walks in flight, which answer for the graph they started on', async () => {
    const dim = 32;
    const rand = mulberry32(11);
    let n = 800;
    const graph = HalfGraph.create(METRIC_OPS.cosine, dim, PARAMS, n);
    for (let i = 0; i < n; i++) graph.add(randomVector(rand, dim), i);
    for (let round = 0; round < 8; round++) {
      // Every third label allowed; the labels added below are allowed too (they would be nearer otherwise).
      const { filter, labelBits } = filterOf(n + 400, (i) => i % 3 === 0, { nearScale: 2.5 });
      const queries = Array.from({ length: 24 }, () => randomVector(rand, dim));
      const expected = queries.map((q) => graph.search(q, 10, 64, filter));
      const pending = queries.map((q) => graph.filteredAsync(q, 10, 64, labelBits, filter.allowed));
      // The same tick: each change waits for the walks above, then runs.
      graph.reserve(400);
      for (let i = 0; i < 400; i++) graph.add(queries[i % queries.length]!, n + i);
      for (let i = 0; i < 60; i++) graph.remove(round * 60 + i);
      n += 400;
      const answers = await Promise.all(pending);
      for (let i = 0; i < answers.length; i++) {
        assert.deepEqual(answers[i]!.labels, expected[i]!.labels, `round ${round}, query ${i}`);
        assert.deepEqual(answers[i]!.distances, expected[i]!.distances, `round ${round}, query ${i}`);
      }
    }
  });

  test('a bad filtered call is refused before any thread runs', async () => {
    const graph = HalfGraph.create(METRIC_OPS.cosine, 4, PARAMS, 16);
    graph.add(new Float32Array([1, 0, 0, 0]), 0);
    const bits = new Uint8Array([1]);
    await assert.rejects(graph.filteredAsync(new Float32Array([1, Number.NaN, 0, 0]), 1, 10, bits, {}), /not finite/);
    await assert.rejects(graph.filteredAsync(new Float32Array(4), 1, 10, bits, { nearScale: -1 }), /nearScale/);
    await assert.rejects(graph.filteredAsync(new Float32Array(4), 1, 10, new Uint16Array(1) as never, {}), /allowed/);
    await assert.rejects(graph.filteredAsync(new Float32Array(4), 1, 10, bits, { farEf: Number.NaN }), /farEf/);
    graph.add(new Float32Array([0, 1, 0, 0]), 1);
    const two = new Uint8Array([2]);
    assert.deepEqual((await graph.filteredAsync(new Float32Array([1, 0, 0, 0]), 1, 10, two, {})).labels, [1]);
  });
});

/** A store with a small graph. */
function nativeStore(name: string, dim: number) {
  const def = definition(dim, { band: 'uint', topic: 'str' });
  return new CollectionStore(name, { ...def, index: { m: 8, ef_construction: 32, ef_search: 10 } });
}

/** Counts the calls made to HalfGraph's methods on threads (the real methods run). */
const counted = ['searchAsync', 'exactAsync', 'filteredAsync'] as const;
type Counts = Record<(typeof counted)[number], number>;
const counts: Counts = { searchAsync: 0, exactAsync: 0, filteredAsync: 0 };
const originals = new Map<string, unknown>();
const proto = HalfGraph.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;

/** `band` 0–99 (share filters), `topic` a where the first coordinate is positive (a set correlated with the data). */
function recordOf(i: number, v: ArrayLike<number>, band: number) {
  return makeRecord(i, v, { band, topic: v[0]! > 0 ? 'a' : 'b' });
}

/**
 * Filters of every plan (ef 25 at 6,000 records): ≤ 1,000 pass (the exact scan: on a thread from 683 at
 * 384 dimensions, THREAD_SCAN_MIN), ≥ 5,280 (the post-filter), between (the walk).
 */
const WHERES = ['band < 2', 'band < 20', 'band < 45', 'band >= 30', "topic = 'a'", 'band < 90', 'band < 15'];

describe('filtered store searches pinned to the moment they were asked', () => {
  beforeEach(() => {
    for (const name of counted) {
      const original = proto[name]!;
      originals.set(name, original);
      proto[name] = function (this: unknown, ...args: unknown[]) {
        counts[name]++;
        return original.apply(this, args);
      };
    }
    for (const name of counted) counts[name] = 0;
  });
  afterEach(() => {
    for (const name of counted) proto[name] = originals.get(name) as (...args: unknown[]) => unknown;
  });

  /**
   * Rounds of: the synchronous answer to each filter, then the pinned one (equal), then the pinned one
   * with a block in the same tick that removes the answer's best record and inserts allowed records next
   * to the query: each pinned answer must be the synchronous one or undefined.
   */
  test('every filtered plan, on threads, while blocks commit', async () => {
    const n = 6_000;
    const dim = 384;
    const store = nativeStore('filtered', dim);
    const data = clustered(n, dim, 21);
    const rand = mulberry32(21);
    const bands = data.vectors.map(() => Math.floor(rand() * 100));
    await store.apply({ remove: [], upsert: data.vectors.map((v, i) => recordOf(i, v, bands[i]!)) });
    let next = n;
    let same = 0;
    let again = 0;
    const modes = new Set<string>();
    for (let round = 0; round < 14; round++) {
      const where = WHERES[round % WHERES.length]!;
      const q = Array.from(data.vectors[Math.floor(rand() * n)]!, (x) => x + (rand() - 0.5) * 0.01);
      const params = { vector: q, k: 10, where };
      const expected = store.search(params);
      assert.ok(expected.results.length > 0, where);
      modes.add(expected.search_mode);
      assert.deepEqual(await store.searchPinned(params), expected, `${where}: no block in flight`);
      const hybrid = { ...params, text: '' };
      assert.deepEqual(await store.hybridSearchPinned(hybrid), store.hybridSearch(hybrid), `${where}: hybrid`);
      const pinned = store.searchPinned(params);
      const best = expected.results[0]!.record;
      const near = Array.from({ length: 3 }, () => makeRecord(next++, q, best.attributes));
      const block = store.prepare({ remove: [best.key], upsert: near }).then((commit) => commit());
      const answer = await pinned;
      await block;
      if (answer === undefined) again++;
      else {
        same++;
        assert.deepEqual(answer, expected, `${where}: the answer of the moment it was asked`);
      }
      assert.notDeepEqual(store.search(params), expected, `${where}: the store moved on`);
    }
    assert.equal(same + again, 14);
    assert.deepEqual([...modes].sort(), ['exact', 'hnsw']);
    // Each kind of graph call went to a thread: the walk, the post-filter's walk, the scan of the allowed.
    assert.ok(counts.filteredAsync > 0, `filteredAsync ${counts.filteredAsync}`);
    assert.ok(counts.searchAsync > 0, `searchAsync ${counts.searchAsync}`);
    assert.ok(counts.exactAsync > 0, `exactAsync ${counts.exactAsync}`);
  });
});
