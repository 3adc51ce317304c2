// A store snapshot the retired hnswlib-node engine wrote (format 3: its graph, with the binary16 vectors
// beside it in halfvec.bin) loads into a native store by building the graph from those vectors
// (src/engine/snapshotConversion.ts), so an upgraded node re-reads nothing from the chain. The converted
// store answers as the store the snapshot was taken of, holds the same binary16 values, keeps taking
// blocks, and its next snapshot is a native one. The old snapshots are made from a native store's with
// hnswlib-node itself (test/helpers/engineEnv.ts).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore, type SearchAnswer } from '../../src/engine/index.ts';
import { GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';
import { toOldEngineStore } from '../helpers/engineEnv.ts';
import { clustered, definition, makeRecord } from './helpers.ts';

const DIM = 24;
const def = definition(DIM, { n: 'i32' });
const records = clustered(400, DIM, 4).vectors.map((v, i) => makeRecord(i, v, { n: i }));
let dir = '';

/** Plain and filtered searches from a few records' vectors, and every record's vector read back. */
function answers(store: CollectionStore) {
  const searches: SearchAnswer[] = [];
  for (const i of [11, 150, 333]) {
    const q = Array.from(records[i]!.vector);
    searches.push(
      store.search({ vector: q, k: 10, efSearch: 200 }),
      store.search({ vector: q, k: 5, where: 'n < 60' }),
    );
  }
  // By id: which free slot a new record takes is the store's own business.
  const vectors = [...store.records()]
    .map((r) => [r.id, Array.from(store.get(r.key)!.vector)] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return { searches, vectors };
}

/** The same answers: the same records in the same order at the same distances (binary16 both ways). */
function assertSameAnswers(actual: ReturnType<typeof answers>, expected: ReturnType<typeof answers>) {
  assert.deepEqual(actual.vectors, expected.vectors);
  for (const [i, want] of expected.searches.entries()) {
    const got = actual.searches[i]!;
    assert.deepEqual(
      got.results.map((h) => h.record.id),
      want.results.map((h) => h.record.id),
      `search ${i}`,
    );
    for (const [j, h] of got.results.entries())
      assert.ok(Math.abs(h.distance - want.results[j]!.distance) < 1e-3, `search ${i} hit ${j}: ${h.distance}`);
  }
}

/**
 * A store churned so that slots are reused and labels are not slots, saved as the hnswlib-node engine
 * would have saved it.
 */
async function savedHnswlibNode(name: string, named = true): Promise<{ path: string; store: CollectionStore }> {
  const store = new CollectionStore('test', def);
  await store.apply({ remove: [], upsert: records });
  await store.apply({
    remove: [records[3]!.key, records[40]!.key],
    upsert: [makeRecord(5, records[200]!.vector, { n: 5 }), makeRecord(400, records[7]!.vector, { n: 400 })],
  });
  const path = join(dir, name);
  await store.save(path);
  await toOldEngineStore(path, def, { named });
  return { path, store };
}

describe('hnswlib-node snapshots loaded by a native node', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-convert-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the default engine converts the snapshot from its own vectors and answers as the old store did', async () => {
    const { path, store: old } = await savedHnswlibNode('convert');
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    assert.equal(manifest.format, STORE_SNAPSHOT_FORMAT);
    assert.equal(manifest.engine, 'hnswlib-node');
    const logged: string[] = [];
    const logger = { info: (_: unknown, message: string) => logged.push(message), warn: () => undefined };
    const back = await CollectionStore.load(path, 'test', def, { rebuild: { logger } });
    assert.equal(back.graphStats.engine, 'native');
    assert.equal(back.converted, true);
    assert.equal(back.graphStats.elementCount, old.size);
    assert.equal(back.graphStats.deleted, 0);
    assert.equal(back.size, old.size);
    assert.match(logged.join('\n'), /converted from its hnswlib-node snapshot to the native engine/);
    assertSameAnswers(answers(back), answers(old));

    // It takes blocks like any native store (labels go on after the compact ones), and both stay equal.
    const next = { remove: [records[11]!.key], upsert: [makeRecord(401, records[150]!.vector, { n: 401 })] };
    await back.apply(next);
    await old.apply(next);
    assertSameAnswers(answers(back), answers(old));

    // Its next snapshot is a native one, without the slab beside the graph.
    await back.save(join(dir, 'converted'));
    const written = JSON.parse(await readFile(join(dir, 'converted', 'store.json'), 'utf8'));
    assert.equal(written.format, GRAPH_VECTORS_SNAPSHOT_FORMAT);
    assert.equal(written.engine, 'native');
    const again = await CollectionStore.load(join(dir, 'converted'), 'test', def);
    assertSameAnswers(answers(again), answers(old));
  });

  test('a snapshot from before engines were recorded (no engine in its manifest) converts too', async () => {
    const { path, store: old } = await savedHnswlibNode('unnamed', false);
    assert.equal(JSON.parse(await readFile(join(path, 'store.json'), 'utf8')).engine, undefined);
    const back = await CollectionStore.load(path, 'test', def);
    assert.equal(back.graphStats.engine, 'native');
    assertSameAnswers(answers(back), answers(old));
  });

  test('a format-3 snapshot of the native engine loads its graph as it is; an unknown engine is refused', async () => {
    const native = new CollectionStore('test', def);
    await native.apply({ remove: [], upsert: records });
    await native.apply({ remove: [records[9]!.key], upsert: [makeRecord(8, records[300]!.vector, { n: 8 })] });
    const path = join(dir, 'native');
    await native.save(path);
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    assert.deepEqual([manifest.format, manifest.engine], [GRAPH_VECTORS_SNAPSHOT_FORMAT, 'native']);
    await writeFile(join(path, 'store.json'), JSON.stringify({ ...manifest, format: STORE_SNAPSHOT_FORMAT }));
    const back = await CollectionStore.load(path, 'test', def);
    assert.equal(back.converted, false);
    assertSameAnswers(answers(back), answers(native));
    // A manifest naming an engine nobody has is refused, not guessed.
    await writeFile(join(path, 'store.json'), JSON.stringify({ ...manifest, engine: 'faiss' }));
    await assert.rejects(
      CollectionStore.load(path, 'test', def),
      (error: Error) => error instanceof InvalidArgumentError && /unknown graph engine faiss/.test(error.message),
    );
  });

  test('a converted snapshot whose vector file is missing or short is refused, not a crash', async () => {
    const { path } = await savedHnswlibNode('short');
    const halves = join(path, 'halfvec.bin');
    await truncate(halves, (await stat(halves)).size - 2);
    await assert.rejects(CollectionStore.load(path, 'test', def), /damaged/);
    await rm(halves);
    await assert.rejects(CollectionStore.load(path, 'test', def), /ENOENT/);
  });
});
