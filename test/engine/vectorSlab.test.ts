// Tests src/engine/vectorSlab.ts (the binary16 slab and the exact scan over it, the benchmarks' ground
// truth) and the store's vectors, which live once in its graph: records read out must carry the right
// vector and halfvec after replace, delete + slot reuse, a graph rebuild and a snapshot round trip (the
// retired engine's, with the slab beside its graph, too), must be the caller's own copies, and the store
// must not keep the arrays of the records it was given.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { HALF_TO_FLOAT32, InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore, METRIC_OPS } from '../../src/engine/index.ts';
import { exactTopK, SLAB_CHUNK_SLOTS } from '../../src/engine/exact.ts';
import { GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';
import { halfvecOf, VectorSlab } from '../../src/engine/vectorSlab.ts';
import { clustered, definition, keyOf, makeRecord, mulberry32 } from './helpers.ts';
import { rewriteFormat } from '../helpers/snapshotFiles.ts';
import { toOldEngineStore } from '../helpers/engineEnv.ts';

const DIM = 8;
const vec = (i: number): number[] => Array.from({ length: DIM }, (_, j) => Math.sin(i * 7.1 + j * 1.3));

/** The vector and halfvec a store must hand back for a record built from `v`. */
function expected(i: number, v: ArrayLike<number>): { vector: number[]; halfvec: number[] } {
  const r = makeRecord(i, v);
  return { vector: [...r.vector], halfvec: [...r.halfvec] };
}

function assertVector(store: CollectionStore, id: string, want: { vector: number[]; halfvec: number[] }): void {
  const rec = store.get(id);
  assert.ok(rec, `${id} missing`);
  assert.deepEqual([...rec.vector], want.vector, `${id} vector`);
  assert.deepEqual([...rec.halfvec], want.halfvec, `${id} halfvec`);
}

describe('VectorSlab', () => {
  test('behavior: halfvecOf inverts the binary16 decode for every finite pattern (subnormals, −0 included)', () => {
    const values = new Float32Array(65536);
    let n = 0;
    const bits: number[] = [];
    for (let h = 0; h < 65536; h++) {
      if ((h & 0x7c00) === 0x7c00) continue;
      values[n++] = HALF_TO_FLOAT32[h]!;
      bits.push(h);
    }
    const bytes = halfvecOf(values.subarray(0, n));
    for (let i = 0; i < n; i++)
      assert.equal(bytes[2 * i]! | (bytes[2 * i + 1]! << 8), bits[i], `pattern 0x${bits[i]!.toString(16)}`);
  });

  test('behavior: values no halfvec produced round to nearest binary16 instead of being truncated', () => {
    const bytes = halfvecOf(Float32Array.of(0.1, 1e6, -1e-9));
    const back = [0, 1, 2].map((i) => HALF_TO_FLOAT32[bytes[2 * i]! | (bytes[2 * i + 1]! << 8)]!);
    assert.ok(Math.abs(back[0]! - 0.1) < 1e-4);
    assert.equal(back[1], 65504); // clamped
    assert.ok(Object.is(back[2], -0));
  });

  test('behavior: growing keeps slots, inverse norms and live flags; slots across chunks stay apart', () => {
    const slab = new VectorSlab(3);
    slab.grow(2);
    slab.write(1, [3, 4, 0]);
    slab.live[1] = 1;
    slab.grow(1000);
    assert.ok(slab.capacity >= 1000);
    slab.grow(SLAB_CHUNK_SLOTS);
    const first = slab.chunks[0];
    slab.grow(5000);
    assert.ok(slab.capacity >= 5000);
    assert.equal(slab.chunks[0], first, 'a full first chunk is never copied again');
    assert.deepEqual([...slab.view(1)], [3, 4, 0]);
    assert.ok(Math.abs(slab.invNorms[1]! - 0.2) < 1e-7);
    assert.equal(slab.live[1], 1);
    assert.equal(slab.live[0], 0);
    const edges = [SLAB_CHUNK_SLOTS - 1, SLAB_CHUNK_SLOTS, 2 * SLAB_CHUNK_SLOTS + 5, 4999];
    edges.forEach((s, i) => {
      slab.write(s, [i + 1, -(i + 1), 0.5]);
    });
    edges.forEach((s, i) => {
      assert.deepEqual([...slab.copy(s)], [i + 1, -(i + 1), 0.5]);
      const bytes = new Uint8Array(6);
      slab.writeHalfvec(s, bytes, 0);
      assert.deepEqual(
        [0, 1, 2].map((j) => HALF_TO_FLOAT32[bytes[2 * j]! | (bytes[2 * j + 1]! << 8)]),
        [i + 1, -(i + 1), 0.5],
      );
    });
  });

  test('behavior: the exact scan reads slots in every chunk', () => {
    const dim = 4;
    const slab = new VectorSlab(dim);
    const n = 3 * SLAB_CHUNK_SLOTS + 17;
    slab.grow(n);
    const rand = mulberry32(5);
    const data = Array.from({ length: n }, () => Array.from({ length: dim }, () => rand() - 0.5));
    data.forEach((v, s) => {
      slab.write(s, v);
      slab.live[s] = s % 5 === 0 ? 0 : 1;
    });
    const q = Float32Array.of(0.3, -0.2, 0.1, 0.4);
    const ops = METRIC_OPS.l2;
    const got = exactTopK(
      ops,
      q,
      { chunks: slab.chunks, live: slab.live, invNorms: slab.invNorms, slotCount: n },
      undefined,
      10,
    );
    const want = data
      .map((v, s) => ({ s, d: ops.distance(q, Float32Array.from(v)) }))
      .filter(({ s }) => s % 5 !== 0)
      .sort((a, b) => a.d - b.d)
      .slice(0, 10);
    assert.deepEqual(
      got.slots,
      want.map((w) => w.s),
    );
  });

  test('property: the exact scan over the binary16 slab equals a float32 scan of the same (halfvec-rounded) values', () => {
    const half = (x: number) =>
      HALF_TO_FLOAT32[halfvecOf(Float32Array.of(x))[0]! | (halfvecOf(Float32Array.of(x))[1]! << 8)]!;
    const element = fc.oneof(fc.float({ min: -4, max: 4, noNaN: true }), fc.constantFrom(0, -0, 6.1e-5, -6e-8, 65504));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 13 }),
        fc.integer({ min: 1, max: 90 }),
        fc.constantFrom('cosine', 'l2', 'ip'),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.integer(),
        fc.array(element, { minLength: 13, maxLength: 13 }),
        (dim, n, metric, k, subset, seed, queryValues) => {
          const rand = mulberry32(seed);
          const slab = new VectorSlab(dim);
          slab.grow(n);
          // The reference: the same values, rounded to binary16 and held as float32.
          const values = new Float32Array(n * dim);
          const invNorms = new Float32Array(n);
          const live = new Uint8Array(n);
          for (let s = 0; s < n; s++) {
            const v = Array.from({ length: dim }, () => half((rand() - 0.5) * 8));
            if (rand() < 0.1) v.fill(0);
            slab.write(s, v);
            values.set(v, s * dim);
            let sq = 0;
            for (const x of v) sq += x * x;
            invNorms[s] = sq > 0 ? 1 / Math.sqrt(sq) : 0;
            live[s] = slab.live[s] = rand() < 0.85 ? 1 : 0;
          }
          const query = Float32Array.from(queryValues.slice(0, dim));
          const candidates = subset ? Array.from({ length: n }, (_, s) => s).filter(() => rand() < 0.5) : undefined;
          const ops = METRIC_OPS[metric];
          const got = exactTopK(
            ops,
            query,
            { chunks: slab.chunks, live: slab.live, invNorms: slab.invNorms, slotCount: n },
            candidates,
            k,
          );
          const want = exactTopK(ops, query, { chunks: [values], live, invNorms, slotCount: n }, candidates, k);
          assert.deepEqual(got, want);
          // And against pgvector's distance in float64 (the kernels sum in float64 too).
          for (let i = 0; i < got.slots.length; i++) {
            const s = got.slots[i]!;
            const d = ops.distance(query, values.subarray(s * dim, (s + 1) * dim));
            assert.ok(
              Math.abs(got.distances[i]! - d) <= 1e-6 * Math.max(1, Math.abs(d)),
              `slot ${s}: ${got.distances[i]} vs ${d}`,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('behavior: slab bytes round trip through loadBytes, free slots included, across chunks', () => {
    const dim = 3;
    const n = SLAB_CHUNK_SLOTS + 9;
    const slab = new VectorSlab(dim);
    slab.grow(n);
    const occupied = new Uint8Array(n);
    for (let s = 0; s < n; s++) {
      if (s % 3 === 0) continue;
      slab.write(s, [s / 7, -s / 11, 0.5]);
      occupied[s] = 1;
    }
    const bytes = Buffer.concat(slab.bytes(n));
    assert.equal(bytes.length, n * dim * 2);
    const back = new VectorSlab(dim);
    back.loadBytes(new Uint8Array(bytes), n, occupied);
    for (let s = 0; s < n; s++) {
      assert.deepEqual([...back.copy(s)], [...slab.copy(s)], `slot ${s}`);
      assert.equal(back.invNorms[s], occupied[s] ? slab.invNorms[s] : 0, `inverse norm of slot ${s}`);
    }
  });
});

describe('CollectionStore: vectors kept in the graph', () => {
  test('behavior: replace by id, by key, and delete + slot reuse hand back the current vector', async () => {
    const store = new CollectionStore('slab', definition(DIM, { topic: 'str' }));
    await store.apply({ remove: [], upsert: [1, 2, 3, 4].map((i) => makeRecord(i, vec(i))) });
    // id-1 gets a new vector; key 2 moves to a new id; id-3 goes and its slot is reused by id-9.
    await store.apply({
      remove: [keyOf(3)],
      upsert: [makeRecord(1, vec(11)), makeRecord(2, vec(12), {}, { id: 'id-2b' })],
    });
    await store.apply({ remove: [], upsert: [makeRecord(9, vec(9))] });
    assertVector(store, 'id-1', expected(1, vec(11)));
    assertVector(store, 'id-2b', expected(2, vec(12)));
    assertVector(store, 'id-4', expected(4, vec(4)));
    assertVector(store, 'id-9', expected(9, vec(9)));
    assert.equal(store.get('id-3'), undefined);
    assert.equal(store.get('id-2'), undefined);
    // The exact scan (small store) reads the graph's vectors: every record is its own nearest neighbour at distance ~0.
    for (const id of ['id-1', 'id-2b', 'id-4', 'id-9']) {
      const v = store.get(id)!.vector;
      const res = store.search({ vector: v, k: 4 });
      assert.equal(res.search_mode, 'exact');
      assert.equal(res.results[0]!.record.id, id);
      assert.ok(res.results[0]!.distance < 1e-6);
      for (const hit of res.results)
        assert.ok(Math.abs(hit.distance - METRIC_OPS.cosine.distance(v, store.get(hit.record.key)!.vector)) < 1e-6);
    }
  });

  test('behavior: records read out are copies; the store keeps none of the arrays it was given', async () => {
    const store = new CollectionStore('slab', definition(DIM));
    const given = makeRecord(1, vec(1));
    const want = expected(1, vec(1));
    await store.apply({ remove: [], upsert: [given, makeRecord(2, vec(2))] });
    given.vector.fill(0);
    given.halfvec.fill(0);
    assertVector(store, 'id-1', want);
    const out = store.get('id-1')!;
    out.vector.fill(0);
    assertVector(store, 'id-1', want);
    assert.notEqual(store.get('id-1')!.vector, store.get('id-1')!.vector);
    assert.deepEqual(
      [...store.records()].map((r) => [...r.vector]),
      [want.vector, expected(2, vec(2)).vector],
    );
  });

  test('behavior: after a rebuild (many deletions) and more churn, vectors and answers are intact', async () => {
    // dim 64: 10,000 survivors stay above the exact threshold (9000), so searches use the rebuilt graph.
    const dim = 64;
    const { vectors } = clustered(30000, dim, 31);
    const store = new CollectionStore('slab', definition(dim));
    await store.apply({ remove: [], upsert: vectors.map((v, i) => makeRecord(i, v)) });
    await store.apply({ remove: vectors.map((_, i) => keyOf(i)).filter((_, i) => i % 3 !== 0), upsert: [] });
    const graph = store.graphStats;
    assert.equal(graph.deleted, 0, 'rebuilt');
    // Reuse freed slots with vectors that belonged to deleted records, under new ids.
    await store.apply({ remove: [], upsert: [1, 2, 4, 5].map((i) => makeRecord(100000 + i, vectors[i]!)) });
    for (const i of [0, 3, 300, 29997]) assertVector(store, `id-${i}`, expected(i, vectors[i]!));
    for (const i of [1, 2, 4, 5]) assertVector(store, `id-${100000 + i}`, expected(i, vectors[i]!));
    for (const i of [0, 3, 300, 1, 2]) {
      const res = store.search({ vector: vectors[i]!, k: 1 });
      assert.equal(res.search_mode, 'hnsw');
      assert.equal(res.results[0]!.record.id, i % 3 === 0 ? `id-${i}` : `id-${100000 + i}`);
      assert.ok(res.results[0]!.distance < 1e-3);
    }
  });

  test('behavior: a snapshot round trip keeps vectors and halfvec bytes exactly; freed slots stay free', async () => {
    const store = new CollectionStore('slab', definition(DIM));
    await store.apply({ remove: [], upsert: [1, 2, 3].map((i) => makeRecord(i, vec(i))) });
    await store.apply({ remove: [keyOf(2)], upsert: [] });
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-slab-'));
    try {
      await store.save(dir);
      const loaded = await CollectionStore.load(dir, 'slab', definition(DIM));
      for (const i of [1, 3]) assertVector(loaded, `id-${i}`, expected(i, vec(i)));
      await loaded.apply({ remove: [], upsert: [makeRecord(7, vec(7))] });
      assertVector(loaded, 'id-7', expected(7, vec(7)));
      assertVector(loaded, 'id-1', expected(1, vec(1)));
      assert.equal(loaded.size, 3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('behavior: an old-engine snapshot over several slab chunks loads the same answers, with or without its saved inverse norms; a short vector file is refused', async () => {
    const n = 2 * SLAB_CHUNK_SLOTS + 37;
    const { vectors } = clustered(n, DIM, 41);
    const def = definition(DIM, { rank: 'i32' });
    const store = new CollectionStore('slab', def);
    await store.apply({
      remove: [],
      upsert: vectors.map((v, i) => makeRecord(i, v, { rank: i }, { document: `doc ${i} of ${i % 7}` })),
    });
    await store.apply({ remove: [keyOf(5), keyOf(SLAB_CHUNK_SLOTS + 1)], upsert: [] });
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-slab-'));
    const answers = (s: CollectionStore) => [
      // A collection this small is scanned exactly.
      ...[0, 1, SLAB_CHUNK_SLOTS, n - 1].flatMap((q) =>
        [{ where: 'rank < 300' }, {}].map((filter) => {
          const answer = s.search({ vector: vectors[q]!, k: 5, ...filter });
          return [answer.search_mode, ...answer.results.map((r) => [r.record.id, r.distance])];
        }),
      ),
      s.keywordSearch({ text: 'doc 3', k: 5 }).results.map((r) => [r.record.id, r.score, r.record.attributes.rank]),
    ];
    try {
      await store.save(dir);
      await toOldEngineStore(dir, def);
      const want = answers(store);
      assert.deepEqual(new Set(want.slice(0, -1).map((a) => a[0])), new Set(['exact']));
      const loaded = await CollectionStore.load(dir, 'slab', def);
      assert.deepEqual(answers(loaded), want);
      for (const i of [0, SLAB_CHUNK_SLOTS + 2, n - 1]) assertVector(loaded, `id-${i}`, expected(i, vectors[i]!));
      // invnorms.bin is not needed: the graph is built from the binary16 vectors alone.
      await rm(join(dir, 'invnorms.bin'));
      assert.deepEqual(answers(await CollectionStore.load(dir, 'slab', def)), want);
      const halves = await readFile(join(dir, 'halfvec.bin'));
      await writeFile(join(dir, 'halfvec.bin'), halves.subarray(0, halves.length - 2));
      // A damaged snapshot is refused like one of another format, so the node rebuilds from the chain.
      await assert.rejects(
        CollectionStore.load(dir, 'slab', def),
        (error: Error) => error instanceof InvalidArgumentError && /damaged: .*bytes of vectors/.test(error.message),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('behavior: a snapshot of an older format is refused cleanly, naming both formats', async () => {
    const store = new CollectionStore('slab', definition(DIM));
    await store.apply({ remove: [], upsert: [1, 2].map((i) => makeRecord(i, vec(i))) });
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-slab-'));
    try {
      await store.save(dir);
      await rewriteFormat(join(dir, 'store.json'), GRAPH_VECTORS_SNAPSHOT_FORMAT, 1);
      await assert.rejects(
        CollectionStore.load(dir, 'slab', definition(DIM)),
        (error: Error) =>
          error instanceof InvalidArgumentError &&
          error.message.includes('format 1') &&
          error.message.includes(`format ${STORE_SNAPSHOT_FORMAT} or ${GRAPH_VECTORS_SNAPSHOT_FORMAT}`),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('behavior: hybrid search reports the vector distance of a keyword-only hit, read from the graph', async () => {
    const store = new CollectionStore('slab', definition(DIM));
    const q = vec(1);
    const ids = Array.from({ length: 60 }, (_, i) => i);
    // The keyword hit is the record farthest from q, outside the vector side's pool of 30.
    const far = ids.reduce((a, b) =>
      METRIC_OPS.cosine.distance(q, vec(b)) > METRIC_OPS.cosine.distance(q, vec(a)) ? b : a,
    );
    await store.apply({
      remove: [],
      upsert: ids.map((i) => makeRecord(i, vec(i), {}, { document: i === far ? 'zebra' : 'cat' })),
    });
    const res = store.hybridSearch({ vector: q, text: 'zebra', k: 3 });
    const hit = res.results.find((r) => r.record.id === `id-${far}`)!;
    assert.ok(Math.abs(hit.distance! - METRIC_OPS.cosine.distance(q, expected(far, vec(far)).vector)) < 1e-6);
  });
});
