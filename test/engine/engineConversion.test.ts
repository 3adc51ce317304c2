// The native engine is the default: a store snapshot that the hnswlib-node engine wrote (format 3, with
// its binary16 slab halfvec.bin) loads into a native store by building the graph from those vectors
// (src/engine/snapshotConversion.ts), so an upgraded node re-reads nothing from the chain. The converted
// store answers as the old one did, holds the same binary16 values, keeps taking blocks, and its next
// snapshot is a native one. The other way (ARKIVECTOR_ENGINE=hnswlib-node), a native snapshot converts back
// from the vectors read out of its graph.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore, type SearchAnswer } from '../../src/engine/index.ts';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import { GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';
import { clustered, definition, makeRecord } from './helpers.ts';

const DIM = 24;
const def = definition(DIM, { n: 'i32' });
const records = clustered(400, DIM, 4).vectors.map((v, i) => makeRecord(i, v, { n: i }));
const engineBefore = process.env[ENGINE_ENV];
let dir = '';

function restoreEngine() {
  if (engineBefore === undefined) delete process.env[ENGINE_ENV];
  else process.env[ENGINE_ENV] = engineBefore;
}

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

/** A store of the hnswlib-node engine, churned so that slots are reused and labels are not slots, saved. */
async function savedHnswlibNode(name: string): Promise<{ path: string; store: CollectionStore }> {
  process.env[ENGINE_ENV] = 'hnswlib-node';
  try {
    const store = new CollectionStore('test', def);
    await store.apply({ remove: [], upsert: records });
    await store.apply({
      remove: [records[3]!.key, records[40]!.key],
      upsert: [makeRecord(5, records[200]!.vector, { n: 5 }), makeRecord(400, records[7]!.vector, { n: 400 })],
    });
    assert.equal(store.graphStats.engine, 'hnswlib-node');
    const path = join(dir, name);
    await store.save(path);
    return { path, store };
  } finally {
    restoreEngine();
  }
}

describe('hnswlib-node snapshots loaded by a native node', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-convert-'));
  });
  afterEach(restoreEngine);
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the default engine converts the snapshot from its own vectors and answers as the old store did', async () => {
    const { path, store: old } = await savedHnswlibNode('convert');
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    assert.equal(manifest.format, STORE_SNAPSHOT_FORMAT);
    assert.equal(manifest.engine, 'hnswlib-node');
    delete process.env[ENGINE_ENV];
    const logged: string[] = [];
    const logger = { info: (_: unknown, message: string) => logged.push(message), warn: () => undefined };
    const back = await CollectionStore.load(path, 'test', def, { rebuild: { logger } });
    assert.equal(back.graphStats.engine, 'native');
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
    const { path, store: old } = await savedHnswlibNode('unnamed');
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    delete manifest.engine;
    await writeFile(join(path, 'store.json'), JSON.stringify(manifest));
    const back = await CollectionStore.load(path, 'test', def);
    assert.equal(back.graphStats.engine, 'native');
    assertSameAnswers(answers(back), answers(old));
  });

  test('ARKIVECTOR_ENGINE=hnswlib-node loads its own snapshot as it is, and converts a native one back', async () => {
    const { path, store: old } = await savedHnswlibNode('kept');
    process.env[ENGINE_ENV] = 'hnswlib-node';
    const kept = await CollectionStore.load(path, 'test', def);
    assert.equal(kept.graphStats.engine, 'hnswlib-node');
    assert.deepEqual(answers(kept), answers(old));
    // A native store with churn (labels are not slots), saved as format 4: no vectors beside the graph.
    delete process.env[ENGINE_ENV];
    const native = new CollectionStore('test', def);
    await native.apply({ remove: [], upsert: records });
    await native.apply({ remove: [records[9]!.key], upsert: [makeRecord(8, records[300]!.vector, { n: 8 })] });
    await native.save(join(dir, 'native'));
    process.env[ENGINE_ENV] = 'hnswlib-node';
    const back = await CollectionStore.load(join(dir, 'native'), 'test', def);
    assert.equal(back.graphStats.engine, 'hnswlib-node');
    assert.equal(back.graphStats.elementCount, native.size);
    assertSameAnswers(answers(back), answers(native));
    await back.save(join(dir, 'native-back'));
    const written = JSON.parse(await readFile(join(dir, 'native-back', 'store.json'), 'utf8'));
    assert.deepEqual([written.format, written.engine], [STORE_SNAPSHOT_FORMAT, 'hnswlib-node']);
    assertSameAnswers(answers(await CollectionStore.load(join(dir, 'native-back'), 'test', def)), answers(native));
    // A manifest naming an engine nobody has is refused, not guessed.
    const manifest = JSON.parse(await readFile(join(dir, 'native', 'store.json'), 'utf8'));
    await writeFile(join(dir, 'native', 'store.json'), JSON.stringify({ ...manifest, engine: 'faiss' }));
    await assert.rejects(
      CollectionStore.load(join(dir, 'native'), 'test', def),
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
