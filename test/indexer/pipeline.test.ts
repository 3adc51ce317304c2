// Catch-up pipelining: a short first batch (nothing overlaps its fetch), then while one batch of blocks is
// applied the next, twice as long up to batchSize, is already being fetched, so the node's serving overlaps
// our inserts. Checked on the real devnet through a recording ChainSource: the
// order of requests and applied blocks, and a batch fetched before a reorg that lands after the fetch
// (the prefetch window) ending equal to a clean sync.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createArkivV1Source,
  createHttpTransport,
  type ChainSource,
  type RpcTransport,
} from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const notes = openDefinition({ topic: 'str' });
const SYNC_TIMEOUT_MS = 60_000;

describe('indexer: catch-up pipelining', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  const indexers: ChainIndexer[] = [];

  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    for (let i = 0; i < 30; i++)
      await alice.createEntity(
        vectorArgs(
          'notes',
          {
            id: `n${i}`,
            vector: Array.from({ length: 4 }, (_, j) => Math.sin(i + j)),
            document: `doc ${i}`,
            attributes: { topic: `t${i % 3}` },
          },
          notes,
        ),
      );
  });
  after(async () => {
    for (const indexer of indexers) await indexer.stop();
    await transport.close();
    await devnet.stop();
  });

  const follow = (source: ChainSource) => {
    const indexer = new ChainIndexer({
      source,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
      startBlock: 1,
      batchSize: 5,
      liveLag: 0,
    });
    indexers.push(indexer);
    indexer.start();
    return indexer;
  };
  const synced = async (indexer: ChainIndexer) => {
    indexer.poke();
    assert.ok(
      await indexer.waitForBlock(devnet.headNumber, SYNC_TIMEOUT_MS),
      `indexer stuck at ${indexer.asOfBlock}: ${indexer.lastError}`,
    );
  };

  test('a short first batch, then the next batch is requested before the current one is applied', async () => {
    const v1 = createArkivV1Source(transport);
    const events: string[] = [];
    const ranges: [number, number][] = [];
    const indexer = follow({
      ...v1,
      blocks(from, to) {
        events.push(`fetch ${from}`);
        ranges.push([from, to]);
        return v1.blocks(from, to);
      },
    });
    indexer.on('block', (n) => events.push(`block ${n}`));
    await synced(indexer);
    // Bootstrapped at 1: nothing overlaps the first fetch, so it is short; then sizes double up to batchSize.
    assert.deepEqual(ranges.slice(0, 3), [
      [2, 3],
      [4, 7],
      [8, 12],
    ]);
    for (const [from] of ranges.slice(1, 3)) {
      const fetchNext = events.indexOf(`fetch ${from}`);
      const appliedBefore = events.indexOf(`block ${from - 1}`);
      assert.ok(appliedBefore >= 0, events.join(', '));
      assert.ok(
        fetchNext < appliedBefore,
        `${from}.. requested only after ${from - 1} was applied: ${events.join(', ')}`,
      );
    }
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    await indexer.stop();
  });

  test('a batch fetched before a reorg is applied, then rolled back: equal to a clean sync', async () => {
    const v1 = createArkivV1Source(transport);
    let fetched!: () => void;
    const fetchedOnce = new Promise<void>((resolve) => (fetched = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held: number | undefined;
    const indexer = follow({
      ...v1,
      async blocks(from, to) {
        const blocks = await v1.blocks(from, to);
        if (from > 2 && held === undefined) {
          // The second batch, fetched while the first is applied: the chain reorgs before it is used.
          held = from;
          fetched();
          await released;
        }
        return blocks;
      },
    });
    await fetchedOnce;
    // Blocks after the held batch's first are replaced: it still chains on, but is stale from its second block.
    devnet.reorg(devnet.headNumber - defined(held, 'the held batch'), { replay: false });
    release();
    await synced(indexer);
    assert.equal(indexer.counters.reorgs, 1);
    const clean = follow(v1);
    await synced(clean);
    assert.equal(clean.asOfBlock, indexer.asOfBlock);
    assert.deepEqual(indexedCollections(indexer), indexedCollections(clean));
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    await indexer.stop();
    await clean.stop();
  });
});
