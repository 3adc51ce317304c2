// Search hits carry the store's record summary, not a record with a vector (src/engine/collectionStore.ts):
// answers never show vectors, and building a record per hit cost a small collection 15–25 % of its QPS.
// A hit must still show exactly the fields its record had when it was found, in every search mode,
// also after the record was replaced or deleted and its slot reused; `get` reads the vector.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CollectionStore } from '../../src/engine/index.ts';
import { definition, keyOf, makeRecord } from './helpers.ts';

const DIM = 8;
const vec = (i: number): number[] => Array.from({ length: DIM }, (_, j) => Math.cos(i * 3.7 + j * 0.9));
/**
 * The fields a hit's record carries, exactly: everything a record has but its vector and halfvec, and its
 * collection and dimension, which are the store's (a record keeps no copy: storeMemory.test.ts).
 */
const SUMMARY_FIELDS = ['attributes', 'creator', 'document', 'expiresAt', 'id', 'key', 'owner'];

function fieldsOf(record: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of SUMMARY_FIELDS) out[name] = (record as Record<string, unknown>)[name];
  out.attributes = { ...(out.attributes as object) };
  return out;
}

describe('search hits: record summaries without vectors', () => {
  test('behavior: vector, keyword and hybrid hits carry the record’s fields and no vector; get gives the vector', async () => {
    const store = new CollectionStore('hits', definition(DIM, { n: 'i32', tag: 'str' }));
    const records = [1, 2, 3].map((i) => makeRecord(i, vec(i), { n: i, tag: `t${i}` }, { document: `doc ${i} cats` }));
    await store.apply({ remove: [], upsert: records });
    const answers = [
      store.search({ vector: vec(2), k: 3 }).results,
      store.search({ vector: vec(2), k: 3, where: 'n >= 1' }).results,
      store.keywordSearch({ text: 'cats', k: 3 }).results,
      store.hybridSearch({ vector: vec(2), text: 'cats', k: 3 }).results,
    ];
    for (const results of answers) {
      assert.equal(results.length, 3);
      for (const hit of results) {
        const given = records.find((r) => r.key === hit.record.key)!;
        assert.deepEqual(Object.keys(hit.record).sort(), SUMMARY_FIELDS);
        assert.deepEqual(fieldsOf(hit.record), fieldsOf(given));
        assert.equal('vector' in hit.record, false);
        assert.equal('halfvec' in hit.record, false);
        assert.deepEqual([...store.get(hit.record.key)!.vector], [...given.vector]);
      }
    }
  });

  test('behavior: a hit keeps the fields it was found with after its record is replaced, deleted and its slot reused', async () => {
    const store = new CollectionStore('hits', definition(DIM, { n: 'i32' }));
    const before = [1, 2, 3].map((i) => makeRecord(i, vec(i), { n: i }, { document: `first ${i}` }));
    await store.apply({ remove: [], upsert: before });
    const hits = store.search({ vector: vec(2), k: 3 }).results;
    // id-2 goes (its slot is reused by the next block's new record); id-1 is replaced in place.
    await store.apply({ remove: [keyOf(2)], upsert: [] });
    await store.apply({
      remove: [],
      upsert: [
        makeRecord(9, vec(9), { n: 90 }, { document: 'new 9' }),
        makeRecord(1, vec(11), { n: 10 }, { document: 'second 1' }),
      ],
    });
    assert.equal(store.search({ vector: vec(9), k: 1 }).results[0]!.record.id, 'id-9');
    assert.equal(store.get('id-1')!.document, 'second 1');
    for (const hit of hits)
      assert.deepEqual(fieldsOf(hit.record), fieldsOf(before.find((r) => r.key === hit.record.key)!));
  });

  test('behavior: hits of many searches between two blocks all keep their fields', async () => {
    const store = new CollectionStore('hits', definition(DIM));
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    await store.apply({ remove: [], upsert: ids.map((i) => makeRecord(i, vec(i), {}, { document: `d${i}` })) });
    const kept = [];
    for (let r = 0; r < 1500; r++) kept.push(store.search({ vector: vec(1 + (r % 40)), k: 2 }).results);
    await store.apply({ remove: ids.map(keyOf), upsert: [] });
    await store.apply({ remove: [], upsert: ids.map((i) => makeRecord(100 + i, vec(100 + i), {}, { document: 'x' })) });
    for (const results of kept)
      for (const hit of results) {
        const i = Number(hit.record.id.slice(3));
        assert.equal(hit.record.key, keyOf(i));
        assert.equal(hit.record.document, `d${i}`);
      }
  });
});
