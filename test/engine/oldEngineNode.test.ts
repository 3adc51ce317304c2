// Upgrading a node whose data directory the retired hnswlib-node engine wrote (its store snapshots hold
// hnswlib-node graphs with the binary16 slab beside them, made here with hnswlib-node from a native node's
// by test/helpers/engineEnv.ts): the node loads the snapshot, converts each store from its own vectors,
// serves the answers the old node gave, and asks the chain no entity query (on a public RPC that read is
// paced). Its next snapshot is a native one, written at once, without waiting for a block.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ChainIndexer } from '../../indexer/index.ts';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { toOldEngineSnapshot } from '../helpers/engineEnv.ts';
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

const storeManifest = async (dataDir: string) =>
  JSON.parse(await readFile(join(dataDir, 'snapshot', 'stores', '0', 'store.json'), 'utf8')) as {
    format: number;
    engine?: string;
  };

describe('a node upgraded over a data directory of the retired hnswlib-node engine', () => {
  let devnet: Devnet;
  let inner: RpcTransport;
  const suite = suiteIndexers(() => devnet, 30_000);

  before(async () => {
    devnet = await startTestDevnet();
    inner = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    for (let i = 0; i < 60; i++) await alice.createEntity(vectorOf(`n${i % 45}`, i));
  });
  after(async () => {
    await suite.stopAll();
    await inner.close();
    await devnet.stop();
  });

  test('converts its stores without one entity query, serves the old answers, and writes native snapshots', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-upgrade-'));
    try {
      const old = suite.create(inner, { dataDir });
      await suite.synced(old);
      await old.stop();
      assert.equal(old.counters.snapshotsWritten, 1);
      const block = defined(old.asOfBlock, 'old as of');
      await toOldEngineSnapshot(dataDir, () => notes);
      const written = await storeManifest(dataDir);
      assert.deepEqual([written.format, written.engine], [3, 'hnswlib-node']);

      const { transport, calls } = countingTransport(inner);
      const upgraded = suite.create(transport, { dataDir });
      await suite.synced(upgraded, block);
      assert.equal(upgraded.counters.snapshotsLoaded, 1, 'the old snapshot is loaded, not refused');
      assert.equal(upgraded.counters.bootstraps, 0);
      assert.equal(calls.get('arkiv_query') ?? 0, 0, `RPC calls: ${JSON.stringify([...calls])}`);
      const store = notesStore(upgraded);
      assert.equal(store.converted, true);
      assert.equal(store.graphStats.engine, 'native');
      assert.deepEqual(indexedCollections(upgraded), indexedCollections(old));
      const oldStore = notesStore(old);
      for (const seed of [3, 17, 44]) {
        const vector = Array.from({ length: notes.dim }, (_, i) => Math.sin(seed * 1.7 + i));
        const ids = (s: CollectionStore) => s.search({ vector, k: 10 }).results.map((h) => h.record.id);
        assert.deepEqual(ids(store), ids(oldStore), `query ${seed}`);
      }
      // No block comes before it stops: the converted store is written anyway.
      await upgraded.stop();
      assert.equal(upgraded.asOfBlock, block);
      assert.equal(upgraded.counters.snapshotsWritten, 1, 'the converted store was written at once');
      const rewritten = await storeManifest(dataDir);
      assert.deepEqual([rewritten.format, rewritten.engine], [4, 'native']);

      // The next start loads it as its own; a new block is served.
      const again = suite.create(inner, { dataDir });
      await suite.synced(again, block);
      assert.equal(notesStore(again).converted, false);
      assert.equal(again.counters.bootstraps, 0);
      await walletClient(devnet, 0).createEntity(vectorOf('n-late', 99));
      await suite.synced(again);
      assert.ok(notesStore(again).get('n-late'), 'a block after the upgrade is served');
      await again.stop();
    } finally {
      await suite.stopAll();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
