// A snapshot written by the store before its records dropped their collection name and dimension and its
// id and key maps became slot tables (44dab70; test/engine/fixtures/snapshot-44dab70, made by saving the
// records of snapshotRecords.ts in two blocks, two of them removed) loads and answers as a store that
// applied the same blocks now. The JSON files are as biome formats them (whitespace only: the loader parses them).
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CollectionStore } from '../../src/engine/index.ts';
import { keyOf } from './helpers.ts';
import { REMOVED, snapshotDefinition, snapshotRecords, vectorOf } from './snapshotRecords.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'snapshot-44dab70');

describe('a snapshot of the store before the record savings', () => {
  let dir: string;
  let loaded: CollectionStore;
  let fresh: CollectionStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-old-snapshot-'));
    await cp(FIXTURE, join(dir, 'snap'), { recursive: true });
    loaded = await CollectionStore.load(join(dir, 'snap'), 'snap', snapshotDefinition());
    fresh = new CollectionStore('snap', snapshotDefinition());
    const recs = snapshotRecords();
    await fresh.apply({ remove: [], upsert: recs.slice(0, 20) });
    await fresh.apply({ remove: REMOVED.map(keyOf), upsert: recs.slice(20) });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('get and records answer the same records, fields and vectors', () => {
    assert.equal(loaded.size, 28);
    for (const rec of snapshotRecords()) {
      const removed = REMOVED.includes(Number(rec.id.slice(3)));
      const got = loaded.get(rec.id);
      if (removed) {
        assert.equal(got, undefined);
        continue;
      }
      const want = fresh.get(rec.id)!;
      assert.ok(got !== undefined, rec.id);
      for (const field of ['key', 'owner', 'creator', 'collection', 'id', 'expiresAt', 'dim', 'document'] as const)
        assert.equal(got[field], want[field], `${rec.id}.${field}`);
      assert.deepEqual({ ...got.attributes }, { ...rec.attributes });
      assert.deepEqual([...got.vector], [...want.vector]);
      assert.equal(loaded.get(rec.key)?.id, rec.id, 'found by its key');
    }
    assert.deepEqual([...loaded.records()].map((r) => r.id).sort(), [...fresh.records()].map((r) => r.id).sort());
  });

  test('searches, filters and keyword searches answer the same', () => {
    for (const q of [0, 7, 13, 29]) {
      const a = loaded.search({ vector: vectorOf(q), k: 5 }).results;
      const b = fresh.search({ vector: vectorOf(q), k: 5 }).results;
      assert.deepEqual(
        a.map((h) => [h.record.id, h.distance]),
        b.map((h) => [h.record.id, h.distance]),
      );
      const where = `n >= 10 and tag != 't1'`;
      assert.deepEqual(
        loaded.search({ vector: vectorOf(q), k: 5, where }).results.map((h) => h.record.id),
        fresh.search({ vector: vectorOf(q), k: 5, where }).results.map((h) => h.record.id),
      );
    }
    assert.equal(loaded.count({ where: `f > 1` }), fresh.count({ where: `f > 1` }));
    assert.equal(loaded.count({ where: `$key = '${keyOf(7)}'` }), 1);
    assert.deepEqual(
      loaded.keywordSearch({ text: 'cats', k: 10 }).results.map((h) => [h.record.id, h.score]),
      fresh.keywordSearch({ text: 'cats', k: 10 }).results.map((h) => [h.record.id, h.score]),
    );
  });
});
