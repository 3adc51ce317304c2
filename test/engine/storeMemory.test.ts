// Tests of how a collection store sizes what it keeps per vector: the graph's capacity
// past its elements (hnswlib touches a mutex, a level and a visited mark per element of capacity), the
// per-slot typed arrays, and string columns of values most records lack. Each bound fails under the
// previous policy (graph ×1.5, arrays ×2, an undefined written for every slot), or with the id and key
// maps as Maps.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { AttributeValue } from '../../src/collections/index.ts';
import { heapByGroup, heapNodes } from '../helpers/heapSnapshot.ts';
import { ARRAY_GROWTH, grownLength } from '../../src/engine/arrayGrowth.ts';
import { AttributeColumns } from '../../src/engine/attributeColumns.ts';
import { GRAPH_GROWTH } from '../../src/engine/hnsw/graph.ts';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { HNSW_INITIAL_CAPACITY } from '../../src/engine/hnsw/params.ts';
import { nativeAddon } from '../../src/engine/hnsw/nativeAddon.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { METRIC_OPS } from '../../src/engine/metrics.ts';
import { compactAttributes, type StoredRecord } from '../../src/engine/recordView.ts';
import { growInt32 } from '../../src/engine/slotTable.ts';
import { definition, makeRecord, mulberry32 } from './helpers.ts';

const DIM = 8;
const PARAMS = { m: 8, efConstruction: 32 };

function vectors(n: number, seed: number): Float32Array[] {
  const rand = mulberry32(seed);
  return Array.from({ length: n }, () => Float32Array.from({ length: DIM }, () => rand() * 2 - 1));
}

describe('store memory: what is kept beyond the vectors', () => {
  test('a graph filled block by block has room for at most ×GRAPH_GROWTH its elements', () => {
    const data = vectors(1300, 1);
    for (const graph of [HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS)]) {
      for (let i = 0; i < data.length; i += 100) {
        graph.reserve(100);
        for (let j = i; j < i + 100; j++) graph.add(data[j]!, j);
        const count = graph.elementCount;
        // Past the initial capacity, growth is bounded.
        if (count > HNSW_INITIAL_CAPACITY)
          assert.ok(
            graph.capacity <= Math.ceil(count * GRAPH_GROWTH),
            `${graph.engine}: capacity ${graph.capacity} for ${count} elements`,
          );
      }
      const hits = graph.search(data[1234]!, 1, 64);
      assert.equal(hits.labels[0], 1234, `${graph.engine}: the grown graph still finds a vector it holds`);
    }
  });

  test('the store reports its graph capacity beside its elements', async () => {
    const store = new CollectionStore('mem', definition(DIM));
    const data = vectors(1100, 2);
    const records = data.map((v, i) => makeRecord(i, v));
    // The first block makes the graph; the second grows it.
    await store.apply({ remove: [], upsert: records.slice(0, 600) });
    await store.apply({ remove: [], upsert: records.slice(600) });
    const { elementCount, capacity } = store.graphStats;
    assert.equal(elementCount, 1100);
    assert.ok(capacity >= 1100 && capacity <= Math.ceil(1100 * GRAPH_GROWTH), `capacity ${capacity}`);
  });

  test('per-slot arrays grow by ×ARRAY_GROWTH and keep their entries', () => {
    let a: Int32Array = new Int32Array(0);
    for (let n = 1; n <= 5000; n += 37) {
      const before = a;
      a = growInt32(a, n, -1);
      assert.ok(a.length >= n);
      if (a !== before) {
        assert.ok(
          a.length <= Math.max(n, Math.ceil(before.length * ARRAY_GROWTH), 64),
          `${before.length} → ${a.length}`,
        );
        for (let i = 0; i < before.length; i++) assert.equal(a[i], before[i]);
        for (let i = before.length; i < a.length; i++) assert.equal(a[i], -1);
      }
      for (let i = 0; i < n; i++) a[i] = i;
    }
    assert.equal(grownLength(1000, 1001), 1250);
    assert.equal(grownLength(0, 1), 64);
    assert.equal(grownLength(10, 5000), 5000);
  });

  test('a string column of a value most records lack stays as short as its last value, and reads the same', () => {
    const cols = new AttributeColumns(() => 4096);
    cols.reset({ topic: 'str' });
    const rec = (i: number, creator?: string): StoredRecord => ({
      key: `0x${i.toString(16).padStart(64, '0')}`,
      owner: '0x00000000000000000000000000000000000000aa',
      creator,
      id: String(i),
      expiresAt: 100n,
      document: '',
      attributes: i % 2 === 0 ? { topic: 'pets' } : {},
    });
    for (let s = 0; s < 3000; s++) cols.set(s, rec(s, s === 10 ? '0xABC' : undefined));
    const creator = cols.column({ name: '$creator', type: 'str', meta: true });
    assert.equal(creator.kind, 'str');
    assert.ok(creator.data.length <= 11, `$creator column of ${creator.data.length} entries`);
    assert.equal(creator.data[10], '0xabc');
    assert.equal(creator.data[2999], undefined);
    const topic = cols.column({ name: 'topic', type: 'str', meta: false });
    assert.equal(topic.data[2998], 'pets');
    assert.equal(topic.data[2999], undefined);
    // Clearing a slot inside the column still clears it.
    cols.set(10, undefined);
    assert.equal(creator.data[10], undefined);
  });

  test('records repeating an owner keep one copy of it, however many copies they arrive with', async () => {
    // Counted in a heap snapshot (exact), not by heap growth, which a lagging sweeper moves by ±100 B a record.
    const OWNER = '0x00000000000000000000000000000000000000Aa';
    const N = 400;
    const data = vectors(N, 3);
    const store = new CollectionStore('mem', definition(DIM));
    // Each record brings its own flat copies of its owner and creator, as records decoded from the chain do.
    const records = data.map((v, i) => {
      const rec = makeRecord(i, v, {}, { owner: OWNER });
      rec.owner = Buffer.from(OWNER, 'latin1').toString('latin1');
      rec.creator = Buffer.from(OWNER, 'latin1').toString('latin1');
      return rec;
    });
    await store.apply({ remove: [], upsert: records });
    records.length = 0;
    // The store holds a block's incoming records until the next block (staging.ts): one more, empty.
    await store.apply({ remove: [], upsert: [] });
    assert.equal(store.get('id-7')?.owner, OWNER);
    assert.equal(store.count({ where: `$owner = '${OWNER.toLowerCase()}'` }), N);
    const copies = await stringCopies([OWNER, OWNER.toLowerCase()]);
    // A few copies belong to this test's own code (the literal, the where text); one a record would be N.
    assert.ok(copies <= 8, `${copies} copies of the address on the heap for ${N} records`);
    assert.equal(store.size, N);
  });

  test('the id and key maps keep a few bytes a record, not a Map entry each; a record and its attributes are sized to their fields', async () => {
    // Heap snapshots before and after (exact: live objects only). V8's arrays (`array`) are the Maps' hash
    // tables and the per-slot arrays of references (records, string columns). A Map<string, number> costs
    // 28 to 56 B an entry: 128 B a record here with the id Map and the `$key` index's Map, ~90 with one.
    const N = 3000;
    const before = heapByGroup(await heapNodes());
    const store = await benchShapedStore(N);
    const after = heapByGroup(await heapNodes());
    const perRecord = (group: (name: string) => boolean) => {
      let bytes = 0;
      for (const [name, g] of after) if (group(name)) bytes += g.bytes - (before.get(name)?.bytes ?? 0);
      return bytes / N;
    };
    const arrays = perRecord((name) => name === 'array');
    assert.ok(arrays <= 64, `${arrays.toFixed(1)} B a record of arrays and hash tables`);
    // The record object (seven fields: 80 B; 96 with a collection and a dim of its own) and its attributes
    // (two: 40 B sized by JSON.parse; 56 as an object literal's four preallocated properties).
    const objects = perRecord((name) => name === 'object Object');
    assert.ok(objects <= 132, `${objects.toFixed(1)} B a record of plain objects`);
    // Both tables still answer.
    assert.equal(store.get('id-2999')?.id, 'id-2999');
    assert.equal(store.get(makeRecord(17, [0]).key)?.id, 'id-17');
    assert.equal(store.count({ where: `$key = '${makeRecord(5, [0]).key.toLowerCase()}'` }), 1);
  });

  test('a record keeps no collection name or dimension of its own; readers get them from the store', async () => {
    const store = new CollectionStore('mem', definition(DIM));
    const data = vectors(20, 5);
    await store.apply({ remove: [], upsert: data.map((v, i) => makeRecord(i, v, {}, { collection: 'mem' })) });
    const hit = store.search({ vector: data[3]!, k: 1 }).results[0]!;
    // The hit's record is the stored object itself: 16 bytes a record for two fields every record shares.
    assert.deepEqual(Object.keys(hit.record).sort(), [
      'attributes',
      'creator',
      'document',
      'expiresAt',
      'id',
      'key',
      'owner',
    ]);
    const rec = store.get(hit.record.id)!;
    assert.equal(rec.collection, 'mem');
    assert.equal(rec.dim, DIM);
    assert.equal(rec.vector.length, DIM);
    assert.equal(
      [...store.records()].every((r) => r.collection === 'mem' && r.dim === DIM),
      true,
    );
  });

  test('compacted attributes keep every name, value and order exactly, with no prototype', () => {
    const name = fc.oneof(
      fc.constantFrom('__proto__', 'constructor', '0', '17', 'a', 'topic'),
      fc.string({ maxLength: 8 }),
    );
    const value = fc.oneof(
      fc.double(),
      fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, -1.5e300),
      fc.integer(),
      fc.boolean(),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 8 }), (entries) => {
        // As decoders build them: no prototype, so `__proto__` is an own property.
        const attrs: Record<string, AttributeValue> = Object.create(null);
        for (const [k, v] of entries) attrs[k] = v;
        const out = compactAttributes(attrs);
        assert.equal(Object.getPrototypeOf(out), null);
        assert.deepEqual(Object.keys(out), Object.keys(attrs));
        for (const k of Object.keys(attrs)) assert.ok(Object.is(out[k], attrs[k]), `${k}: ${out[k]} for ${attrs[k]}`);
      }),
      { numRuns: 500 },
    );
  });

  test('the native addon reports the C heap and gives its free pages back', () => {
    const addon = nativeAddon();
    const before = addon.mallocStats();
    for (const v of Object.values(before)) assert.ok(Number.isFinite(v) && v >= 0);
    if (before.heap > 0) assert.ok(before.inUse <= before.heap);
    addon.trimMalloc();
    const after = addon.mallocStats();
    assert.ok(after.heap >= 0 && after.inUse >= 0);
  });
});

/** How many string objects on the heap hold one of `values` (a heap snapshot: dead objects are not in it). */
async function stringCopies(values: readonly string[]): Promise<number> {
  const wanted = new Set(values);
  return (await heapNodes()).filter((n) => n.type === 'string' && wanted.has(n.name)).length;
}

/** A store of `n` records in blocks of 500, each with two numeric attributes (as the benches' records). */
async function benchShapedStore(n: number): Promise<CollectionStore> {
  const store = new CollectionStore('mem', { ...definition(DIM), attributes: { bucket: 'i32', cluster: 'i32' } });
  const data = vectors(n, 4);
  for (let i = 0; i < n; i += 500) {
    const block = data.slice(i, i + 500).map((v, j) => makeRecord(i + j, v, { bucket: (i + j) % 100, cluster: j % 4 }));
    await store.apply({ remove: [], upsert: block });
  }
  // The store holds a block's incoming records until the next block (staging.ts).
  await store.apply({ remove: [], upsert: [] });
  return store;
}
