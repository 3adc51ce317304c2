// An upsert of an id whose entity expired on the chain after the node read it: the node (following head − 5,
// `--confirmations 5`) still lists the entity, but the chain would refuse an update of it (`EntityExpired`).
// The write creates the entity anew and answers normally.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import {
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  type ChainWriter,
} from '../../src/chain/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createCollection, get, upsert, type ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

const CONFIRMATIONS = 5;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function lagging(): Promise<{ devnet: Devnet; indexer: ChainIndexer<CollectionStore>; ctx: ServiceContext }> {
  const devnet = await startTestDevnet({ protocol: 'dbchain' });
  cleanups.push(() => devnet.stop());
  const transport = createHttpTransport({ url: devnet.url });
  cleanups.push(() => transport.close());
  const indexer = new ChainIndexer({
    source: createDbChainSource(transport),
    stores: engineStores,
    chainId: devnet.chainId,
    blockTimeSeconds: 0.2,
    confirmations: CONFIRMATIONS,
  });
  indexer.start();
  cleanups.push(() => indexer.stop());
  const writer: ChainWriter = createDbChainWriter({
    rpcUrl: devnet.url,
    chainId: devnet.chainId,
    privateKey: defined(devnet.accounts[0], 'dev account 0').privateKey,
    transport,
  });
  const ctx: ServiceContext = {
    indexer,
    chain: { chainId: devnet.chainId, rpc: devnet.url, protocol: 'dbchain' },
    minBlockTimeoutMs: 30_000,
    writer,
  };
  return { devnet, indexer, ctx };
}

/** Mines the confirmations past `block` and waits until the node has applied it. */
async function confirm(devnet: Devnet, indexer: ChainIndexer<CollectionStore>, block: number) {
  devnet.mine(CONFIRMATIONS);
  indexer.poke();
  assert.ok(await indexer.waitForBlock(block, 30_000), `indexed ${block} (at ${indexer.asOfBlock})`);
}

test('an upsert of an id the node lists but the chain expired creates it anew', async () => {
  const { devnet, indexer, ctx } = await lagging();
  const made = await createCollection(ctx, { name: 'lapsing', dim: 2, metric: 'cosine', wait: 'receipt' });
  await confirm(devnet, indexer, defined(made.block_number ?? undefined, 'definition block'));
  const first = await upsert(ctx, {
    collection: 'lapsing',
    entities: [{ id: 'm', vector: [1, 0], ttl: { blocks: 3 } }],
    wait: 'receipt',
  });
  const firstBlock = defined(first.block_number ?? undefined, 'first block');
  const expiry = defined(first.results[0], 'result').expires_at_block;
  assert.equal(expiry, firstBlock + 3);
  // The chain passes the expiry block; the node, 5 blocks behind, still lists the entity.
  await confirm(devnet, indexer, firstBlock);
  assert.ok(devnet.headNumber >= Number(expiry), `head ${devnet.headNumber} past the expiry ${expiry}`);
  const listed = await get(ctx, { collection: 'lapsing', ref: 'm' });
  assert.equal(listed.entity.key, defined(first.results[0], 'result').key, 'the node still lists it');

  const second = await upsert(ctx, {
    collection: 'lapsing',
    entities: [{ id: 'm', vector: [0, 1], ttl: { blocks: 100 } }],
    wait: 'receipt',
  });
  const result = defined(second.results[0], 'result');
  assert.equal(result.op, 'create');
  assert.notEqual(result.key, defined(first.results[0], 'result').key, 'a new entity');
  const secondBlock = defined(second.block_number ?? undefined, 'second block');
  assert.equal(result.expires_at_block, secondBlock + 100);
  await confirm(devnet, indexer, secondBlock);
  const now = await get(ctx, { collection: 'lapsing', ref: 'm' });
  assert.equal(now.entity.key, result.key);
});

test('an id that expired after the node last read the head: the chain says so before signing, and the write creates it', async () => {
  const { devnet, indexer, ctx } = await lagging();
  const made = await createCollection(ctx, { name: 'lapsing', dim: 2, metric: 'cosine', wait: 'receipt' });
  await confirm(devnet, indexer, defined(made.block_number ?? undefined, 'definition block'));
  const first = await upsert(ctx, {
    collection: 'lapsing',
    entities: [
      { id: 'm', vector: [1, 0], ttl: { blocks: 20 } },
      { id: 'kept', vector: [1, 1] },
    ],
    wait: 'receipt',
  });
  const firstBlock = defined(first.block_number ?? undefined, 'first block');
  await confirm(devnet, indexer, firstBlock);
  // The node stops reading the chain: the head it knows is well before the expiry, which the chain passes.
  await indexer.stop();
  const known = defined(indexer.headBlock, 'head');
  assert.ok(known + 1 < firstBlock + 20, `the node knows head ${known}, before the expiry ${firstBlock + 20}`);
  devnet.mine(25);

  const second = await upsert(ctx, {
    collection: 'lapsing',
    entities: [
      { id: 'm', vector: [0, 1] },
      { id: 'kept', vector: [0.5, 1] },
    ],
    wait: 'receipt',
  });
  const byId = new Map(second.results.map((r) => [r.id, r]));
  assert.equal(byId.get('m')?.op, 'create');
  assert.notEqual(byId.get('m')?.key, first.results[0]?.key);
  assert.equal(byId.get('kept')?.op, 'update', 'a live entity of the same batch is still updated');
  assert.equal(byId.get('kept')?.key, first.results[1]?.key);
  assert.equal(second.tx_hashes.length, 1);
});
