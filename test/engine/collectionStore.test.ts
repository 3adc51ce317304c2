// Tests src/engine/collectionStore.ts: block application (replace by id or key, removals, atomic
// visibility while a block is applied), get by id or key, records, count, definition updates,
// rebuild after many deletions, and snapshots (save/load).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CollectionStore } from '../../src/engine/index.ts';
import { clustered, definition, keyOf, makeRecord } from './helpers.ts';

const DIM = 8;
const vec = (i: number): number[] => Array.from({ length: DIM }, (_, j) => Math.sin(i * 7.1 + j * 1.3));

describe('CollectionStore: apply and reads', () => {
  test('a ref of the entity-key form is always a key, never the id of another entity', async () => {
    const store = new CollectionStore('notes', definition(DIM));
    // The impostor's id spells entity 2's key; the codec refuses such ids, the store must not depend on it.
    await store.apply({ remove: [], upsert: [makeRecord(2, vec(2)), makeRecord(3, vec(3), {}, { id: keyOf(2) })] });
    assert.equal(store.get(keyOf(2))?.id, 'id-2');
    assert.equal(store.get(keyOf(2).toUpperCase().replace('0X', '0x'))?.id, 'id-2');
    assert.equal(store.get(keyOf(3))?.key, keyOf(3));
    // Short 0x strings are ids.
    await store.apply({ remove: [], upsert: [makeRecord(5, vec(5), {}, { id: '0xabc' })] });
    assert.equal(store.get('0xabc')?.key, keyOf(5));
  });

  test('default: upsert, get by id and by key (case-insensitive), records, size', async () => {
    const store = new CollectionStore('notes', definition(DIM, { topic: 'str' }));
    await store.apply({
      remove: [],
      upsert: [makeRecord(1, vec(1), { topic: 'pets' }, { document: 'Cats purr.' }), makeRecord(2, vec(2))],
    });
    assert.equal(store.size, 2);
    assert.equal(store.get('id-1')?.document, 'Cats purr.');
    assert.equal(store.get(keyOf(2).toUpperCase().replace('0X', '0x'))?.id, 'id-2');
    assert.equal(store.get('missing'), undefined);
    assert.deepEqual([...store.records()].map((r) => r.id).sort(), ['id-1', 'id-2']);
    assert.equal(store.name, 'notes');
    assert.equal(store.definition.dim, DIM);
  });

  test('behavior: an upsert replaces the record with the same id or the same key', async () => {
    const store = new CollectionStore('notes', definition(DIM, { topic: 'str' }));
    await store.apply({
      remove: [],
      upsert: [makeRecord(1, vec(1), { topic: 'a' }), makeRecord(2, vec(2), { topic: 'a' })],
    });
    // Same id, new key (an entity re-created); same key, new id (an entity updated to another id).
    await store.apply({
      remove: [],
      upsert: [
        makeRecord(3, vec(3), { topic: 'b' }, { id: 'id-1' }),
        makeRecord(4, vec(4), { topic: 'b' }, { key: keyOf(2) }),
      ],
    });
    assert.equal(store.size, 2);
    assert.equal(store.get(keyOf(1)), undefined);
    assert.equal(store.get('id-2'), undefined);
    assert.equal(store.get('id-1')?.key, keyOf(3));
    assert.equal(store.get('id-4')?.key, keyOf(2));
    assert.equal(store.count({ where: 'topic = "a"' }), 0);
    assert.equal(store.count({ where: 'topic = "b"' }), 2);
    const ids = store
      .search({ vector: vec(1), k: 10 })
      .results.map((r) => r.record.id)
      .sort();
    assert.deepEqual(ids, ['id-1', 'id-4']);
  });

  test('behavior: removals by key; unknown keys are ignored', async () => {
    const store = new CollectionStore('notes', definition(DIM));
    await store.apply({ remove: [], upsert: [1, 2, 3].map((i) => makeRecord(i, vec(i))) });
    await store.apply({ remove: [keyOf(2).toUpperCase().replace('0X', '0x'), keyOf(99)], upsert: [] });
    assert.equal(store.size, 2);
    assert.equal(store.get('id-2'), undefined);
    assert.equal(store.search({ vector: vec(2), k: 5 }).results.length, 2);
  });

  test('behavior: a block becomes visible all at once; readers never see part of it', async () => {
    const dim = 32;
    const { vectors } = clustered(12000, dim, 9);
    const store = new CollectionStore('big', definition(dim, { batch: 'i32' }));
    await store.apply({ remove: [], upsert: vectors.slice(0, 6000).map((v, i) => makeRecord(i, v, { batch: 1 })) });
    const block = vectors.slice(6000).map((v, i) => makeRecord(6000 + i, v, { batch: 2 }));
    const seen: number[] = [];
    let done = false;
    const probe = (): void => {
      if (done) return;
      // Query with a vector of the new block: it must not show up before the commit.
      const res = store.search({ vector: block[0]!.vector, k: 10 });
      seen.push(res.results.filter((r) => r.record.attributes.batch === 2).length);
      assert.equal(store.size, 6000);
      assert.equal(store.count({ where: 'batch = 2' }), 0);
      assert.equal(store.get(block[0]!.id), undefined);
      setImmediate(probe);
    };
    setImmediate(probe);
    const applied = store.apply({ remove: [keyOf(0)], upsert: block });
    await applied;
    done = true;
    assert.ok(seen.length >= 2, `probed ${seen.length} times during apply`);
    assert.ok(seen.every((n) => n === 0));
    assert.equal(store.size, 11999);
    assert.equal(store.search({ vector: block[0]!.vector, k: 1 }).results[0]!.record.id, block[0]!.id);
  });

  test('behavior: prepare stages invisibly; the returned commit publishes (several stores in one tick)', async () => {
    const a = new CollectionStore('a', definition(DIM));
    const b = new CollectionStore('b', definition(DIM));
    const commitA = await a.prepare({ remove: [], upsert: [makeRecord(1, vec(1))] });
    const commitB = await b.prepare({ remove: [], upsert: [makeRecord(2, vec(2))] });
    assert.equal(a.size + b.size, 0);
    assert.equal(a.search({ vector: vec(1), k: 5 }).results.length, 0);
    assert.equal(a.get('id-1'), undefined);
    commitA();
    commitB();
    assert.equal(a.get('id-1')?.id, 'id-1');
    assert.equal(b.search({ vector: vec(2), k: 5 }).results[0]!.record.id, 'id-2');
  });

  test('behavior: a stage not committed before the next prepare is rolled back', async () => {
    const store = new CollectionStore('a', definition(DIM));
    const stale = await store.prepare({ remove: [], upsert: [makeRecord(1, vec(1))] });
    const fresh = await store.prepare({ remove: [], upsert: [makeRecord(2, vec(2))] });
    assert.throws(stale, /committed after a newer prepare rolled it back/);
    fresh();
    assert.deepEqual(
      [...store.records()].map((r) => r.id),
      ['id-2'],
    );
    assert.deepEqual(
      store.search({ vector: vec(1), k: 5 }).results.map((r) => r.record.id),
      ['id-2'],
    );
  });

  test('error: a record of the wrong dim rejects the whole block', async () => {
    const store = new CollectionStore('notes', definition(DIM));
    await assert.rejects(store.apply({ remove: [], upsert: [makeRecord(1, vec(1)), makeRecord(2, [1, 2, 3])] }), {
      code: 'dimension_mismatch',
    });
    assert.equal(store.size, 0);
    await store.apply({ remove: [], upsert: [makeRecord(1, vec(1))] });
    assert.equal(store.size, 1);
  });

  test('behavior: rebuilds the graph after many deletions and keeps answering correctly', async () => {
    const dim = 16;
    const { vectors } = clustered(40000, dim, 13);
    const store = new CollectionStore('churn', definition(dim, { n: 'i32' }));
    await store.apply({ remove: [], upsert: vectors.map((v, i) => makeRecord(i, v, { n: i })) });
    // Delete 3/4 in one block: more than REBUILD_DELETED_RATIO of what stays.
    await store.apply({ remove: vectors.map((_, i) => keyOf(i)).filter((_, i) => i % 4 !== 0), upsert: [] });
    assert.equal(store.size, 10000);
    const stats = store.graphStats;
    assert.equal(stats.deleted, 0);
    assert.equal(stats.elementCount, 10000);
    for (let i = 0; i < 40; i += 4) {
      const res = store.search({ vector: vectors[i]!, k: 1 });
      assert.equal(res.results[0]!.record.id, `id-${i}`);
    }
    // Labels keep working after the rebuild.
    await store.apply({ remove: [], upsert: [makeRecord(1, vectors[1]!, { n: 1 })] });
    assert.equal(store.search({ vector: vectors[1]!, k: 1 }).results[0]!.record.id, 'id-1');
  });

  test('behavior: updateDefinition takes new attributes and ef_search, refuses dim changes', async () => {
    const store = new CollectionStore('notes', definition(DIM, { topic: 'str' }));
    await store.apply({ remove: [], upsert: [makeRecord(1, vec(1), { topic: 'a' })] });
    assert.throws(() => store.count({ where: 'stars > 1' }), { code: 'invalid_filter' });
    store.updateDefinition({
      ...definition(DIM, { topic: 'str', stars: 'i32' }),
      index: { m: 16, ef_construction: 64, ef_search: 100 },
    });
    assert.equal(store.count({ where: 'stars > 1' }), 0);
    assert.equal(store.count({ where: 'topic = "a"' }), 1);
    assert.throws(() => store.updateDefinition(definition(DIM + 1, { topic: 'str', stars: 'i32' })), {
      code: 'invalid_argument',
    });
  });
});

describe('CollectionStore: snapshots', () => {
  test('default: save then load gives the same records, answers and keyword index; later blocks apply', async () => {
    const dim = 32;
    const { vectors } = clustered(16000, dim, 21);
    const def = definition(dim, { n: 'i32', f: 'f32', t: 'str', b: 'bool' });
    const store = new CollectionStore('snap', def);
    const docs = ['black cat', 'white dog', '猫が好き', ''];
    await store.apply({
      remove: [],
      upsert: vectors.map((v, i) =>
        makeRecord(
          i,
          v,
          { n: i, f: i === 0 ? Infinity : i / 3, t: `t${i % 7}`, b: i % 2 === 0 },
          { document: docs[i % 4]! },
        ),
      ),
    });
    await store.apply({ remove: [keyOf(5), keyOf(6)], upsert: [makeRecord(7, vectors[8]!, { n: 7 }, { id: 'id-7' })] });
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-engine-'));
    try {
      await store.save(dir);
      const loaded = await CollectionStore.load(dir, 'snap', def);
      assert.equal(loaded.size, store.size);
      assert.deepEqual(loaded.get('id-0')?.attributes, store.get('id-0')?.attributes);
      assert.equal(loaded.get('id-0')?.attributes.f, Infinity);
      assert.deepEqual(loaded.get('id-9')?.vector, store.get('id-9')?.vector);
      for (const i of [0, 100, 2000]) {
        const a = store.search({ vector: vectors[i]!, k: 10 });
        const b = loaded.search({ vector: vectors[i]!, k: 10 });
        assert.deepEqual(
          b.results.map((r) => [r.record.id, r.distance]),
          a.results.map((r) => [r.record.id, r.distance]),
        );
      }
      for (const where of ['n < 100', 't = "t3" && b = bool(true)', 'f > 1000'])
        assert.equal(loaded.count({ where }), store.count({ where }));
      assert.deepEqual(
        loaded.keywordSearch({ text: '猫', k: 5 }).results.map((r) => r.record.id),
        store.keywordSearch({ text: '猫', k: 5 }).results.map((r) => r.record.id),
      );
      await loaded.apply({ remove: [keyOf(0)], upsert: [makeRecord(5, vectors[5]!, { n: 5 })] });
      assert.equal(loaded.size, store.size);
      assert.equal(loaded.search({ vector: vectors[5]!, k: 1 }).results[0]!.record.id, 'id-5');
      await assert.rejects(CollectionStore.load(dir, 'snap', definition(dim + 1)), { code: 'invalid_argument' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('behavior: an attribute named __proto__ is an own attribute through apply, get, filters and a snapshot', async () => {
    // A computed name: a literal `__proto__:` would set the object's prototype instead.
    const PROTO = '__proto__';
    const def = definition(DIM, { [PROTO]: 'i32', topic: 'str' });
    const store = new CollectionStore('proto', def);
    const attrs: Record<string, number | string> = Object.create(null);
    attrs[PROTO] = 7;
    attrs.topic = 'pets';
    await store.apply({ remove: [], upsert: [makeRecord(1, vec(1), attrs), makeRecord(2, vec(2), { topic: 'x' })] });
    const own = (r: { attributes: object } | undefined) =>
      r === undefined ? undefined : [Object.getPrototypeOf(r.attributes), Object.entries(r.attributes)];
    const expected = [
      null,
      [
        ['__proto__', 7],
        ['topic', 'pets'],
      ],
    ];
    assert.deepEqual(own(store.get('id-1')), expected);
    assert.equal(store.count({ where: '__proto__ = 7' }), 1);
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-engine-'));
    try {
      await store.save(dir);
      const loaded = await CollectionStore.load(dir, 'proto', def);
      assert.deepEqual(own(loaded.get('id-1')), expected);
      assert.equal(loaded.count({ where: '__proto__ = 7' }), 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
