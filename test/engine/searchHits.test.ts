// Search hits defer the copy of their vector (src/engine/recordView.ts): read later, a hit must still
// give the vector its record had when it was found, even after the record was deleted and its slot
// reused by a newer block, and it stays the caller's own copy.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CollectionStore } from '../../src/engine/index.ts';
import { definition, keyOf, makeRecord } from './helpers.ts';

const DIM = 8;
const vec = (i: number): number[] => Array.from({ length: DIM }, (_, j) => Math.cos(i * 3.7 + j * 0.9));
const valuesOf = (i: number): number[] => [...makeRecord(i, vec(i)).vector];
const halfOf = (i: number): number[] => [...makeRecord(i, vec(i)).halfvec];

describe('search hits: deferred vector copies', () => {
  test('behavior: a hit read after its record was deleted and its slot reused still gives the vector it was found with', async () => {
    const store = new CollectionStore('hits', definition(DIM));
    await store.apply({ remove: [], upsert: [1, 2, 3].map((i) => makeRecord(i, vec(i))) });
    const hits = store.search({ vector: vec(2), k: 3 }).results;
    const two = hits.find((h) => h.record.id === 'id-2')!;
    const one = hits.find((h) => h.record.id === 'id-1')!;
    // id-2 goes; the next block's record takes its slot (the store reuses freed slots first) and
    // id-1 gets a new vector in place of its old record.
    await store.apply({ remove: [keyOf(2)], upsert: [] });
    await store.apply({ remove: [], upsert: [makeRecord(9, vec(9)), makeRecord(1, vec(11))] });
    assert.deepEqual(store.search({ vector: vec(9), k: 1 }).results[0]!.record.id, 'id-9');
    assert.deepEqual([...two.record.vector], valuesOf(2));
    assert.deepEqual([...two.record.halfvec], halfOf(2));
    assert.deepEqual([...one.record.vector], valuesOf(1));
  });

  test('behavior: a hit’s vector is its own copy, the same array on every read', async () => {
    const store = new CollectionStore('hits', definition(DIM));
    await store.apply({ remove: [], upsert: [1, 2].map((i) => makeRecord(i, vec(i))) });
    const hit = store.search({ vector: vec(1), k: 1 }).results[0]!;
    assert.equal(hit.record.vector, hit.record.vector);
    hit.record.vector.fill(0);
    assert.deepEqual([...store.get('id-1')!.vector], valuesOf(1));
    const again = store.search({ vector: vec(1), k: 1 }).results[0]!;
    assert.deepEqual([...again.record.vector], valuesOf(1));
    assert.notEqual(again.record.vector, hit.record.vector);
  });

  test('behavior: hits of many searches between two blocks all keep their vectors', async () => {
    const store = new CollectionStore('hits', definition(DIM));
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    await store.apply({ remove: [], upsert: ids.map((i) => makeRecord(i, vec(i))) });
    // More searches than the tracker's first pruning pass (1,024 batches).
    const kept = [];
    for (let r = 0; r < 1500; r++) kept.push(store.search({ vector: vec(1 + (r % 40)), k: 2 }).results);
    await store.apply({ remove: ids.map(keyOf), upsert: [] });
    await store.apply({ remove: [], upsert: ids.map((i) => makeRecord(100 + i, vec(100 + i))) });
    for (const results of kept)
      for (const hit of results) assert.deepEqual([...hit.record.vector], valuesOf(Number(hit.record.id.slice(3))));
  });
});
