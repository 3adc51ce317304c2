// A store the indexer drops (its collection's definition deleted) stops its background work: a graph rebuild
// running in a worker is abandoned, not finished and swapped into a store no one publishes any more.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Hex } from 'viem';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { REBUILD_DELETED_MIN } from '../../src/engine/hnsw/params.ts';
import { engineStoresWith } from '../../src/engine/storeFactory.ts';
import type { RebuildPhase } from '../../src/engine/rebuild.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';

const def = openDefinition();

let devnet: Devnet;
let transport: RpcTransport;
const suite = suiteIndexers(() => devnet, 60_000);

before(async () => {
  devnet = await startTestDevnet();
  transport = createHttpTransport({ url: devnet.url });
});
after(async () => {
  await suite.stopAll();
  await transport.close();
  await devnet.stop();
});

test('a collection deleted while its graph rebuilds: the dropped store abandons the rebuild', async () => {
  // The rebuild is held once its worker has built the new graph, until the definition is gone.
  let built!: () => void;
  const reachedBuilt = new Promise<void>((resolve) => (built = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const phase = async (p: RebuildPhase) => {
    if (p !== 'built') return;
    built();
    await released;
  };
  const indexer = suite.create(transport, { stores: engineStoresWith({ rebuild: { phase } }) });

  const alice = walletClient(devnet, 0);
  const definition = await alice.createEntity(definitionArgs('churn', def));
  const total = REBUILD_DELETED_MIN + 400;
  const creates = Array.from({ length: total }, (_, i) =>
    vectorArgs('churn', { id: `v${i}`, vector: [Math.sin(i), Math.cos(i), 1, i % 7] }, def),
  );
  const keys: Hex[] = [];
  // A transaction carries at most 1,000 operations.
  for (let first = 0; first < total; first += 1000)
    keys.push(...(await alice.mutateEntities({ creates: creates.slice(first, first + 1000) })).createdEntities);
  await suite.synced(indexer);
  // The engine's stores (engineStoresWith), which the indexer types by its store contract only.
  const store = indexer.collections.get('churn')?.store as CollectionStore | undefined;
  assert.ok(store, 'the collection is published');
  assert.equal(store.size, total);

  // Once more than REBUILD_DELETED_MIN (and a quarter of the live records) are deleted, a rebuild starts.
  const deleted = REBUILD_DELETED_MIN + 1;
  for (let first = 0; first < deleted; first += 1000)
    await alice.mutateEntities({
      deletes: keys.slice(first, Math.min(deleted, first + 1000)).map((entityKey) => ({ entityKey })),
    });
  await suite.synced(indexer);
  await reachedBuilt;
  assert.equal(store.rebuildStats.running, true);

  await alice.deleteEntity({ entityKey: definition.entityKey });
  await suite.synced(indexer);
  assert.equal(indexer.collections.has('churn'), false, 'the collection is gone');

  release();
  await store.rebuilt();
  assert.deepEqual(store.rebuildStats, { running: false, rebuilds: 0, failed: 0 }, 'nothing was swapped in');
  // The dropped store still answers a reader that held it.
  assert.equal(store.size, total - deleted);
  await indexer.stop();
});
