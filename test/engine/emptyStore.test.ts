// An empty collection store allocates nothing heavy: no hnswlib index (65,536 label mutexes) until the
// first vector, reads answering as for any empty store, and a snapshot of it written as an empty graph
// file. The retired hnswlib-node engine wrote hnswlib's own empty-index header instead: such a snapshot
// loads as an empty store too.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CollectionStore } from '../../src/engine/index.ts';
import { toOldEngineStore } from '../helpers/engineEnv.ts';
import { definition, makeRecord } from './helpers.ts';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-empty-'));
  dirs.push(dir);
  return dir;
};

describe('an empty collection store', () => {
  test('has no native index until its first vector; reads, saves and loads without one', async () => {
    const def = definition(4, { topic: 'str', stars: 'i32' });
    const store = new CollectionStore('empty', def);
    assert.equal(store.graphStats.allocated, false);
    assert.deepEqual(store.search({ vector: [1, 0, 0, 0], k: 3 }).results, []);
    assert.deepEqual(store.keywordSearch({ text: 'cats', k: 3 }).results, []);
    assert.deepEqual(store.hybridSearch({ vector: [1, 0, 0, 0], text: 'cats', k: 3 }).results, []);
    assert.equal(store.count({ where: "topic = str('pets')" }), 0);
    assert.deepEqual(store.select({ where: 'stars >= 1' }), []);
    assert.equal(store.graphStats.allocated, false, 'reads allocate no index');

    const dir = await tempDir();
    await store.save(dir);
    const loaded = await CollectionStore.load(dir, 'empty', def);
    assert.equal(loaded.graphStats.allocated, false, 'an empty snapshot loads without an index');
    await loaded.apply({ remove: [], upsert: [makeRecord(1, [1, 0, 0, 0], { topic: 'pets', stars: 3 })] });
    assert.equal(loaded.graphStats.allocated, true);
    assert.equal(loaded.search({ vector: [1, 0, 0, 0], k: 1 }).results[0]?.record.id, 'id-1');
    assert.equal(loaded.count({ where: "topic = str('pets') && stars >= 3" }), 1);
  });

  test('an hnswlib-node snapshot of it (hnswlib’s empty-index header) loads as an empty store', async () => {
    for (const [metric, m, efConstruction, dim] of [
      ['cosine', 16, 64, 384],
      ['l2', 5, 4, 3],
      ['ip', 100, 1000, 4000],
    ] as const) {
      const def = { ...definition(dim, {}, metric), index: { m, ef_construction: efConstruction, ef_search: 40 } };
      const dir = await tempDir();
      await new CollectionStore('empty', def).save(dir);
      await toOldEngineStore(dir, def);
      assert.ok((await stat(join(dir, 'hnsw.bin'))).size > 0, 'an hnswlib header');
      const loaded = await CollectionStore.load(dir, 'empty', def);
      assert.equal(loaded.size, 0);
      assert.equal(loaded.graphStats.allocated, false, `${metric} dim=${dim}`);
      assert.deepEqual(loaded.search({ vector: Array.from({ length: dim }, () => 1), k: 3 }).results, []);
    }
  });

  test('a native store writes an empty graph file, and a store of records with one is refused', async () => {
    const def = definition(4, {});
    const dir = await tempDir();
    await new CollectionStore('empty', def).save(dir);
    assert.equal((await stat(join(dir, 'hnsw.bin'))).size, 0);
    const manifest = JSON.parse(await readFile(join(dir, 'store.json'), 'utf8'));
    assert.equal(manifest.engine, 'native');
    const full = await tempDir();
    const store = new CollectionStore('full', def);
    await store.apply({ remove: [], upsert: [makeRecord(1, [1, 0, 0, 0])] });
    await store.save(full);
    await writeFile(join(full, 'hnsw.bin'), new Uint8Array(0));
    await assert.rejects(CollectionStore.load(full, 'full', def), /damaged/);
  });
});
