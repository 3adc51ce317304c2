// Store snapshots: the store keeps no slab beside the graph, so its snapshot (format 4) holds each vector
// once, inside hnsw.bin. A format-3 snapshot of a native store (what an earlier version wrote, with
// halfvec.bin beside the graph) still loads; a format-4 snapshot is refused cleanly when its manifest claims
// another engine, when it names a future format, when its graph file is cut short, and when 4 KiB of it are
// zeroed: an InvalidArgumentError or an Error, never a crash, so the node rebuilds from the chain.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';
import { rewriteFormat } from '../helpers/snapshotFiles.ts';
import { clustered, definition, makeRecord } from './helpers.ts';

const DIM = 24;
const def = definition(DIM, { n: 'i32' });
const records = clustered(400, DIM, 4).vectors.map((v, i) => makeRecord(i, v, { n: i }));
let dir = '';

/** What a store answers: a few searches (plain and filtered) and every vector read back. */
function answers(store: CollectionStore) {
  const q = Array.from(records[11]!.vector);
  return {
    plain: store.search({ vector: q, k: 5, efSearch: 100 }),
    filtered: store.search({ vector: q, k: 5, where: 'n < 40' }),
    vectors: [...store.records()].map((r) => [r.id, Array.from(store.get(r.key)!.vector)]),
  };
}

async function savedNative(name: string): Promise<{ path: string; store: CollectionStore }> {
  const store = new CollectionStore('test', def);
  await store.apply({ remove: [], upsert: records });
  // Churn, so slots are reused and labels are not their slots.
  await store.apply({ remove: [records[3]!.key], upsert: [makeRecord(5, records[200]!.vector, { n: 5 })] });
  const path = join(dir, name);
  await store.save(path);
  return { path, store };
}

describe('native store snapshots', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-native-snap-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a native store writes format 4 without a vector file beside the graph, and loads it back', async () => {
    const { path, store } = await savedNative('v4');
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    assert.equal(manifest.format, GRAPH_VECTORS_SNAPSHOT_FORMAT);
    assert.equal(manifest.engine, 'native');
    const files = await readdir(path);
    assert.ok(!files.includes('halfvec.bin') && !files.includes('invnorms.bin'), files.join(', '));
    const back = await CollectionStore.load(path, 'test', def);
    assert.deepEqual(answers(back), answers(store));
  });

  test('a format-3 snapshot of a native store (halfvec.bin beside the graph) still loads', async () => {
    const { path, store } = await savedNative('v3');
    await rewriteFormat(join(path, 'store.json'), GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT);
    // The slab file the previous version wrote: it repeats the graph's values and is not needed.
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    await writeFile(join(path, 'halfvec.bin'), new Uint8Array(manifest.slotCount * DIM * 2));
    const back = await CollectionStore.load(path, 'test', def);
    assert.deepEqual(answers(back), answers(store));
  });

  test('a format-4 snapshot is refused cleanly: as another engine’s, as a future format', async () => {
    const { path } = await savedNative('refused');
    // A manifest claiming the retired engine for a file with no vectors beside the graph.
    const manifest = JSON.parse(await readFile(join(path, 'store.json'), 'utf8'));
    await writeFile(join(path, 'store.json'), JSON.stringify({ ...manifest, engine: 'hnswlib-node' }));
    await assert.rejects(CollectionStore.load(path, 'test', def), /damaged/);
    await writeFile(
      join(path, 'store.json'),
      JSON.stringify({ ...manifest, format: GRAPH_VECTORS_SNAPSHOT_FORMAT + 1 }),
    );
    await assert.rejects(
      CollectionStore.load(path, 'test', def),
      (error: Error) => error instanceof InvalidArgumentError && error.message.includes('not supported'),
    );
  });

  test('a graph file with any 4 KiB zeroed is refused on load (links, labels), never served', async () => {
    const { path } = await savedNative('zeroed');
    const graphFile = join(path, 'hnsw.bin');
    const pristine = await readFile(graphFile);
    // Every aligned 4 KiB past the header, as a disk (or a copy behind a recomputed manifest) might lose it.
    for (let at = 4096; at + 4096 <= pristine.length; at += 4096) {
      const damaged = Buffer.from(pristine);
      damaged.fill(0, at, at + 4096);
      await writeFile(graphFile, damaged);
      await assert.rejects(CollectionStore.load(path, 'test', def), /damaged|corrupted/, `zeroed at ${at}`);
    }
    await writeFile(graphFile, pristine);
    await CollectionStore.load(path, 'test', def);
  });

  test('a native snapshot whose graph file is cut short is refused, not a crash', async () => {
    const { path } = await savedNative('short');
    const graphFile = join(path, 'hnsw.bin');
    const size = (await readFile(graphFile)).length;
    await truncate(graphFile, Math.floor(size / 2));
    await assert.rejects(CollectionStore.load(path, 'test', def), Error);
  });
});
