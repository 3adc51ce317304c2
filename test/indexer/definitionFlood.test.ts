// A definition flood (issue 24, item 1): strangers write many collection definitions for the price of a few
// transactions. A node follows at most a cap of them, per owner and in all, chosen by creation position so a
// tailing node and a fresh one at the same block follow the same; the rest are skipped and counted; the
// followed ones cost no hnswlib index while empty; nodes given --collections or --collection-owner are
// unaffected.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { encodeCollectionEntity } from '../../src/collections/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import type { ChainIndexer, IndexerOptions } from '../../indexer/index.ts';
import { walletClient } from '../helpers/devnet.ts';
import { indexerHarness } from '../helpers/indexerHarness.ts';
import { attributes, sendStorageTx } from '../helpers/rawWriter.ts';
import { definitionArgs, openDefinition } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';
import { createHttpApp, createMetrics, loadAccessPolicy } from '../../src/http/index.ts';
import { listCollections, type ServiceContext } from '../../src/service/index.ts';
import { renderCollections } from '../../tools/index.ts';

const CAP = { perCreator: 3, total: 5 };

/** One create op of a definition for `name`. */
const definitionOp = (name: string) => {
  const encoded = encodeCollectionEntity(name, openDefinition());
  return {
    btl: 100_000n,
    contentType: encoded.contentType,
    payload: encoded.payload,
    ...attributes(encoded.attributes),
  };
};

describe('indexer: definition flood', () => {
  const harness = indexerHarness(60_000);
  const newIndexer = (extra: Partial<IndexerOptions<CollectionStore>> = {}) =>
    harness.newIndexer({ definitionCap: CAP, ...extra });
  const { synced } = harness;
  const names = (indexer: ChainIndexer<CollectionStore>) => [...indexer.collections.keys()].sort();

  test('the earliest created definitions within the cap are followed, on every node alike; the rest are counted', async () => {
    const devnet = harness.devnet;
    const tailing = newIndexer();
    await synced(tailing);
    // Account 3 floods five definitions in one transaction, then account 4 three more.
    const a = await sendStorageTx(devnet, 3, { creates: ['a0', 'a1', 'a2', 'a3', 'a4'].map(definitionOp) });
    assert.ok(a.result, a.error?.message);
    const b = await sendStorageTx(devnet, 4, { creates: ['b0', 'b1', 'b2'].map(definitionOp) });
    assert.ok(b.result, b.error?.message);
    await synced(tailing);
    const fresh = newIndexer();
    await synced(fresh);
    await synced(tailing);
    for (const indexer of [tailing, fresh]) {
      // Three of account 3 (its cap), then account 4's first two fill the total of five.
      assert.deepEqual(names(indexer), ['a0', 'a1', 'a2', 'b0', 'b1']);
      assert.equal(indexer.counters.definitionsSkipped, 3);
      for (const c of indexer.collections.values())
        assert.equal(c.store.graphStats.allocated, false, `${c.name}: an empty collection holds no index`);
    }

    // The listing pages by name (REST and the service answer alike; the MCP tool is the same operation).
    const ctx: ServiceContext = {
      indexer: fresh,
      chain: { chainId: devnet.chainId, rpc: devnet.url },
      minBlockTimeoutMs: 5_000,
    };
    const pages: string[][] = [];
    let cursor: string | null | undefined;
    do {
      const page = await listCollections(ctx, { limit: 2, ...(cursor ? { cursor } : {}) });
      assert.equal(page.total, 5);
      pages.push(page.collections.map((c) => c.name));
      cursor = page.next_cursor;
      if (cursor) assert.match(renderCollections(page), /more: pass cursor "/);
    } while (cursor && pages.length < 10);
    assert.deepEqual(pages, [['a0', 'a1'], ['a2', 'b0'], ['b1']]);
    const all = await listCollections(ctx, {});
    assert.deepEqual([all.collections.length, all.next_cursor], [5, null]);
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const logger = { info() {}, warn() {}, error() {} };
    const app = createHttpApp({ ctx, access, metrics: createMetrics(ctx), logger, mcp: { ctx, logger } });
    const rest = await (await app.request('/v1/collections?limit=2&cursor=a1')).json();
    assert.deepEqual(rest, await listCollections(ctx, { limit: 2, cursor: 'a1' }));
    assert.equal((await app.request('/v1/collections?limit=501')).status, 400);

    // Nodes told which names to follow are not capped; a pinned owner's name is exempt.
    const only = newIndexer({ collections: ['a4', 'b2'] });
    const account3 = defined(devnet.accounts[3], 'devnet.accounts[3]').address.toLowerCase() as Address;
    const pinned = newIndexer({ pinnedOwners: new Map([['a4', account3]]) });
    await synced(only);
    await synced(pinned);
    assert.deepEqual(names(only), ['a4', 'b2']);
    assert.equal(only.counters.definitionsSkipped, 0);
    assert.deepEqual(names(pinned), ['a0', 'a1', 'a2', 'a4', 'b0', 'b1']);
    assert.equal(pinned.counters.definitionsSkipped, 2);

    // Deleting a followed definition lets the next one by creation position in, on every node.
    const a0 = defined(fresh.collections.get('a0'), 'a0').definitionKey;
    await walletClient(devnet, 3).deleteEntity({ entityKey: a0 });
    for (const indexer of [tailing, fresh]) {
      await synced(indexer);
      assert.deepEqual(names(indexer), ['a1', 'a2', 'a3', 'b0', 'b1']);
      assert.equal(indexer.counters.definitionsSkipped, 2);
    }
  });

  test('the per-creator cap holds when the creator hands each definition to another address', async () => {
    const devnet = harness.devnet;
    const cap = { perCreator: 2, total: 100 };
    const tailing = newIndexer({ definitionCap: cap });
    await synced(tailing);
    // Account 5 creates five definitions and gives each away to a fresh address (no funds needed).
    const wallet = walletClient(devnet, 5);
    const created = await wallet.mutateEntities({
      creates: ['h0', 'h1', 'h2', 'h3', 'h4'].map((name) => definitionArgs(name, openDefinition())),
    });
    const keys = created.createdEntities as Hex[];
    assert.equal(keys.length, 5);
    // The SDK refuses a batch of owner changes alone unless another list is given, even empty.
    await wallet.mutateEntities({
      creates: [],
      ownershipChanges: keys.map((entityKey) => ({
        entityKey,
        newOwner: privateKeyToAccount(generatePrivateKey()).address,
      })),
    });
    await synced(tailing);
    const fresh = newIndexer({ definitionCap: cap });
    await synced(fresh);
    await synced(tailing);
    for (const indexer of [tailing, fresh]) {
      const handedOver = names(indexer).filter((name) => name.startsWith('h'));
      assert.deepEqual(handedOver, ['h0', 'h1'], 'two definitions of the one creator, whoever owns them now');
      for (const name of handedOver)
        assert.notEqual(indexer.collections.get(name)?.owner, defined(devnet.accounts[5], 'account 5').address);
    }
  });
});
