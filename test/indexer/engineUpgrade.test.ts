// Upgrading a node to the native default engine: the data directory an hnswlib-node node left (its store
// snapshots hold hnswlib-node graphs and the binary16 slab) is loaded by a node whose stores are native,
// each store converted from its own vectors. No collection is read again from the chain (on anonymous
// public Tiramisu that read is paced at 40 calls an hour): the node asks the chain no entity query, and
// answers as the old node did.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { ChainIndexer } from '../../indexer/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { indexedCollections } from '../helpers/indexerOracle.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';

const notes = openDefinition({ topic: 'str' });
const vectorOf = (id: string, seed: number) =>
  vectorArgs(
    'notes',
    {
      id,
      vector: Array.from({ length: notes.dim }, (_, i) => Math.sin(seed * 1.7 + i)),
      document: `doc ${id}`,
      attributes: { topic: `t${seed % 3}` },
    },
    notes,
  );

/** The engine's store of `notes` (the suite's indexers use the engine's stores). */
const notesStore = (indexer: ChainIndexer) =>
  defined(indexer.collections.get('notes'), 'notes').store as unknown as CollectionStore;

/** Every JSON-RPC method the node calls, counted (batched calls one by one). */
function countingTransport(inner: RpcTransport) {
  const calls = new Map<string, number>();
  const count = (method: string) => calls.set(method, (calls.get(method) ?? 0) + 1);
  const transport: RpcTransport = {
    url: inner.url,
    request<T>(method: string, params?: unknown[]) {
      count(method);
      return inner.request<T>(method, params);
    },
    batch(list) {
      for (const call of list) count(call.method);
      return inner.batch(list);
    },
    close: () => inner.close(),
  };
  return { transport, calls };
}

describe('indexer: an hnswlib-node data directory under the native default', () => {
  let devnet: Devnet;
  let inner: RpcTransport;
  const suite = suiteIndexers(() => devnet, 30_000);
  const engineBefore = process.env[ENGINE_ENV];

  before(async () => {
    devnet = await startTestDevnet();
    inner = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    for (let i = 0; i < 60; i++) await alice.createEntity(vectorOf(`n${i % 45}`, i));
  });
  afterEach(() => {
    if (engineBefore === undefined) delete process.env[ENGINE_ENV];
    else process.env[ENGINE_ENV] = engineBefore;
  });
  after(async () => {
    await suite.stopAll();
    await inner.close();
    await devnet.stop();
  });

  /** A node of the hnswlib-node engine synced and stopped: `dataDir` holds its snapshot. */
  async function hnswlibNode(dataDir: string): Promise<ChainIndexer> {
    process.env[ENGINE_ENV] = 'hnswlib-node';
    const old = suite.create(inner, { dataDir });
    await suite.synced(old);
    await old.stop();
    return old;
  }

  test('the snapshot loads and converts without one entity query; the answers are the old node’s', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-upgrade-'));
    try {
      const old = await hnswlibNode(dataDir);
      assert.equal(old.counters.snapshotsWritten, 1);
      const oldStore = notesStore(old);
      assert.equal(oldStore.graphStats.engine, 'hnswlib-node');
      const manifest = JSON.parse(await readFile(join(dataDir, 'snapshot', 'stores', '0', 'store.json'), 'utf8'));
      assert.equal(manifest.engine, 'hnswlib-node');

      delete process.env[ENGINE_ENV];
      const { transport, calls } = countingTransport(inner);
      const upgraded = suite.create(transport, { dataDir });
      await suite.synced(upgraded, old.asOfBlock!);
      assert.equal(upgraded.counters.snapshotsLoaded, 1);
      assert.equal(upgraded.counters.bootstraps, 0);
      assert.equal(calls.get('arkiv_query') ?? 0, 0, `RPC calls: ${JSON.stringify([...calls])}`);
      const store = notesStore(upgraded);
      assert.equal(store.graphStats.engine, 'native');
      assert.deepEqual(indexedCollections(upgraded), indexedCollections(old));
      for (const seed of [3, 17, 44]) {
        const vector = Array.from({ length: notes.dim }, (_, i) => Math.sin(seed * 1.7 + i));
        const ids = (s: CollectionStore) => s.search({ vector, k: 10 }).results.map((h) => h.record.id);
        assert.deepEqual(ids(store), ids(oldStore), `query ${seed}`);
      }
      // The snapshots it writes are native ones, a block later too (the test below: without a block).
      await walletClient(devnet, 0).createEntity(vectorOf('n-late', 99));
      await suite.synced(upgraded);
      await upgraded.stop();
      const next = JSON.parse(await readFile(join(dataDir, 'snapshot', 'stores', '0', 'store.json'), 'utf8'));
      assert.equal(next.engine, 'native');
    } finally {
      // A failed assertion leaves the upgraded node running: stop it before its data directory goes.
      await suite.stopAll();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('a converted store writes its own snapshot without waiting for a block: the next start loads it natively', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-upgrade-'));
    try {
      const old = await hnswlibNode(dataDir);
      const block = defined(old.asOfBlock, 'old as of');

      // First native start: converts, and no block comes before it stops.
      delete process.env[ENGINE_ENV];
      const upgraded = suite.create(inner, { dataDir });
      await suite.synced(upgraded, block);
      assert.equal(upgraded.counters.snapshotsLoaded, 1);
      assert.equal(notesStore(upgraded).converted, true, 'the first native start converts');
      await upgraded.stop();
      assert.equal(upgraded.asOfBlock, block, 'no block moved the node on');
      assert.equal(upgraded.counters.snapshotsWritten, 1, 'the converted store was written at once');
      const manifest = JSON.parse(await readFile(join(dataDir, 'snapshot', 'stores', '0', 'store.json'), 'utf8'));
      assert.equal(manifest.engine, 'native');

      // Second native start: the snapshot is the store's own, nothing to convert or write.
      const again = suite.create(inner, { dataDir });
      await suite.synced(again, block);
      assert.equal(again.counters.snapshotsLoaded, 1);
      assert.equal(again.counters.bootstraps, 0);
      assert.equal(notesStore(again).converted, false, 'the second start does not convert');
      assert.deepEqual(indexedCollections(again), indexedCollections(old));
      await again.stop();
      assert.equal(again.counters.snapshotsWritten, 0, 'an unchanged native store is not written again');
    } finally {
      await suite.stopAll();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
