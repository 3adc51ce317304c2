// Indexer recovery paths, each checked against a clean full sync at the same block: a forced reorg,
// an RPC outage in the middle of catch-up, a restart from a snapshot (and a stale snapshot), plus sync
// states, confirmations, --collections, --collection-owner and a long-chain bootstrap of 20,000 entities.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address, Hex } from 'viem';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { ChainIndexer, type IndexerOptions, type SyncState } from '../helpers/indexerV1.ts';
import type { StoreFactory } from '../../src/engine/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { assertRebuiltFromChain, expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { definitionArgs, openDefinition, stateReached, vectorArgs } from '../helpers/writes.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';
import { defined } from '../helpers/defined.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { rewriteFormat } from '../helpers/snapshotFiles.ts';

const notes = openDefinition({ topic: 'str' });

const vectorOf = (collection: string, id: string, seed: number, def = notes) =>
  vectorArgs(
    collection,
    {
      id,
      vector: Array.from({ length: def.dim }, (_, i) => Math.sin(seed + i)),
      document: `doc ${id}`,
      attributes: { topic: `t${seed % 3}` },
    },
    def,
  );

describe('indexer: recovery and options', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  const suite = suiteIndexers(() => devnet, 30_000);
  const newIndexer = (options: Partial<IndexerOptions> = {}) => suite.create(transport, options);
  const { synced } = suite;
  /** A clean full sync: a fresh indexer bootstrapped at `block`. */
  const cleanAt = async (block: number) => {
    const clean = newIndexer({ startBlock: block });
    await synced(clean, block);
    await clean.stop();
    return indexedCollections(clean);
  };

  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    for (let i = 0; i < 40; i++) await alice.createEntity(vectorOf('notes', `n${i % 25}`, i));
  });
  after(async () => {
    await suite.stopAll();
    await transport.close();
    await devnet.stop();
  });

  test('sync states: starting, then catching_up from an early bootstrap block, then live', async () => {
    const indexer = newIndexer({ startBlock: 1, batchSize: 5, liveLag: 3 });
    assert.equal(indexer.syncState, 'starting');
    assert.equal(indexer.asOfBlock, undefined);
    const seen: SyncState[] = [];
    indexer.on('state', (s) => seen.push(s));
    await synced(indexer);
    await stateReached(indexer, 'live');
    assert.deepEqual(seen.slice(0, 2), ['catching_up', 'live']);
    assert.ok(indexer.counters.blocksApplied >= devnet.headNumber - 1);
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
  });

  test('forced reorg: rolled back to the common ancestor and re-applied, equal to a clean sync', async () => {
    const indexer = newIndexer();
    await synced(indexer);
    const alice = walletClient(devnet, 0);
    for (let i = 0; i < 4; i++) await alice.createEntity(vectorOf('notes', `r${i}`, 100 + i));
    await synced(indexer);
    const reorged = once(indexer, 'reorg');
    devnet.reorg(3, { replay: false });
    await synced(indexer);
    const [{ from, to }] = (await reorged) as [{ from: number; to: number }];
    assert.equal(to, from - 3);
    assert.equal(indexer.counters.reorgs, 1);
    assert.deepEqual(indexedCollections(indexer), await cleanAt(indexer.asOfBlock!));
    assert.equal(
      defined(indexedCollections(indexer).notes, 'the notes collection').records.r3,
      undefined,
      'entities of dropped blocks are gone',
    );
    await indexer.stop();
  });

  test('RPC outage in the middle of catch-up: stalled, then resumes without loss or duplication', async () => {
    const alice = walletClient(devnet, 0);
    for (let i = 0; i < 30; i++) await alice.createEntity(vectorOf('notes', `o${i}`, 200 + i));
    const indexer = newIndexer({ startBlock: 1, batchSize: 3, liveLag: 2 });
    const midway = Math.floor(devnet.headNumber / 2);
    const reachedMidway = new Promise<void>((resolve) => indexer.on('block', (n) => n >= midway && resolve()));
    indexer.start();
    await reachedMidway;
    await devnet.suspend();
    const stalledAt = indexer.asOfBlock!;
    await stateReached(indexer, 'stalled');
    assert.ok(indexer.asOfBlock! < devnet.headNumber, 'the outage hit before the end of catch-up');
    assert.equal(indexer.asOfBlock, stalledAt, 'nothing applied while the RPC is down');
    await devnet.resume();
    await synced(indexer);
    await stateReached(indexer, 'live');
    assert.deepEqual(indexedCollections(indexer), await cleanAt(indexer.asOfBlock!));
    await indexer.stop();
  });

  test('restart from a snapshot: loaded when still canonical, tails from it, equal to a clean sync', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
    try {
      const first = newIndexer({ dataDir });
      await synced(first);
      await first.stop();
      assert.equal(first.counters.snapshotsWritten, 1);
      const snapshotBlock = first.asOfBlock!;
      const alice = walletClient(devnet, 0);
      for (let i = 0; i < 3; i++) await alice.createEntity(vectorOf('notes', `s${i}`, 300 + i));

      const second = newIndexer({ dataDir });
      const loaded = once(second, 'block');
      await synced(second);
      assert.equal((await loaded)[0], snapshotBlock);
      assert.equal(second.counters.snapshotsLoaded, 1);
      assert.equal(second.counters.bootstraps, 0);
      assert.equal(second.counters.blocksApplied, devnet.headNumber - snapshotBlock);
      assert.deepEqual(indexedCollections(second), await cleanAt(second.asOfBlock!));
      await second.stop();

      // The snapshot's block is reorged away: the next start rebuilds instead of loading it.
      devnet.reorg(devnet.headNumber - second.asOfBlock! + 1);
      const third = newIndexer({ dataDir });
      await synced(third);
      await assertRebuiltFromChain(devnet, third);
      await third.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('a snapshot whose store is of an older format is refused and the node rebuilds from the chain', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
    try {
      const first = newIndexer({ dataDir });
      await synced(first);
      await first.stop();
      assert.equal(first.counters.snapshotsWritten, 1);
      // What a node of the previous version left behind: the same layout, an older store format.
      const manifestPath = join(dataDir, 'snapshot', 'stores', '0', 'store.json');
      // (A native store writes format 4; format 2 is older than either engine reads.)
      await rewriteFormat(manifestPath, GRAPH_VECTORS_SNAPSHOT_FORMAT, STORE_SNAPSHOT_FORMAT - 1);

      const second = newIndexer({ dataDir });
      await synced(second);
      await assertRebuiltFromChain(devnet, second);
      await second.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('a store failure during a step is retried without loss or duplication; a later reorg stays exact', async () => {
    let failNext = false;
    const flaky: StoreFactory<CollectionStore> = {
      create(name, definition) {
        const store = engineStores.create(name, definition);
        const prepare = store.prepare.bind(store);
        store.prepare = async (changes) => {
          if (failNext) {
            failNext = false;
            throw new Error('injected store failure');
          }
          return prepare(changes);
        };
        return store;
      },
      load: engineStores.load,
    };
    const indexer = newIndexer({ stores: flaky as unknown as StoreFactory });
    await synced(indexer);
    failNext = true;
    const alice = walletClient(devnet, 0);
    for (let i = 0; i < 3; i++) await alice.createEntity(vectorOf('notes', `f${i}`, 400 + i));
    await synced(indexer);
    assert.equal(failNext, false, 'the injected failure happened');
    assert.match(indexer.lastFailure?.message ?? '', /injected store failure/);
    assert.equal(indexer.lastError, undefined, 'no current error once a step succeeded');
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    devnet.reorg(2);
    await synced(indexer);
    assert.deepEqual(indexedCollections(indexer), await cleanAt(indexer.asOfBlock!));
    await indexer.stop();
  });

  test('confirmations: follows head − N', async () => {
    const indexer = newIndexer({ confirmations: 3 });
    await synced(indexer, devnet.headNumber - 3);
    devnet.mine();
    indexer.poke();
    assert.ok(await indexer.waitForBlock(devnet.headNumber - 3, 10_000));
    assert.equal(indexer.asOfBlock, devnet.headNumber - 3);
    await indexer.stop();
  });

  test("--collections and --collection-owner: only the listed collections, only the pinned owner's definition", async () => {
    const bob = walletClient(devnet, 1);
    const carol = walletClient(devnet, 2);
    await bob.createEntity(definitionArgs('other', notes));
    await carol.createEntity(definitionArgs('pinned', { ...notes, dim: 2 }));
    await bob.createEntity(definitionArgs('pinned', notes));
    await bob.createEntity(vectorOf('pinned', 'p1', 1));
    const indexer = newIndexer({
      collections: ['notes', 'pinned'],
      pinnedOwners: new Map([
        ['pinned', defined(devnet.accounts[1], 'devnet.accounts[1]').address.toLowerCase() as Address],
      ]),
    });
    await synced(indexer);
    assert.deepEqual([...indexer.collections.keys()].sort(), ['notes', 'pinned']);
    const pinned = indexer.collections.get('pinned')!;
    assert.equal(pinned.owner, defined(devnet.accounts[1], 'devnet.accounts[1]').address.toLowerCase());
    assert.equal(pinned.definition.dim, 4);
    assert.equal(pinned.stats.live_entities, 1);
    await indexer.stop();
  });
});

describe('indexer: long-chain bootstrap', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url });
  });
  after(async () => {
    await transport.close();
    await devnet.stop();
  });

  test('20,000 entities are read with the pinned-block query, not by replaying blocks', async () => {
    const alice = walletClient(devnet, 0);
    const small: CollectionDefinition = { ...notes, dim: 8 };
    await alice.createEntity(definitionArgs('bulk', small));
    for (let batch = 0; batch < 20; batch++) {
      await alice.mutateEntities({
        creates: Array.from({ length: 1000 }, (_, i) => vectorOf('bulk', `b${batch * 1000 + i}`, i, small)),
      });
    }
    const indexer = new ChainIndexer({
      transport,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
    });
    const started = Date.now();
    indexer.start();
    try {
      assert.ok(await indexer.waitForBlock(devnet.headNumber, 120_000), indexer.lastError);
      const seconds = (Date.now() - started) / 1000;
      assert.equal(indexer.counters.bootstraps, 1);
      assert.equal(indexer.counters.blocksApplied, 0, 'no block was replayed');
      assert.equal(indexer.collections.get('bulk')!.stats.live_entities, 20_000);
      process.stderr.write(
        `# bootstrap: 20,000 entities (dim 8) in ${seconds.toFixed(2)} s = ${Math.round(20_000 / seconds)} entities/s\n`,
      );
    } finally {
      await indexer.stop();
    }
  });
});

export type { Hex };
