// The DB-chain follower reads only the blocks that carry registry transactions (issue 20, item 3): over
// idle blocks it makes a handful of calls per range of up to 1,000 blocks, counted through a transport
// wrapper over real JSON-RPC, and entities whose expiry falls inside a skipped range end at their own
// block, so its answers equal those of a block-by-block walk of the same chain at every block it reaches.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import {
  countCalls,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  emptyBatch,
  type ChainSource,
  type RpcTransport,
} from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { count, createCollection, get, upsert, type ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

/** Counts every call (each element of a batch), as a per-call rate limit does. */
function counting(inner: RpcTransport) {
  let calls = 0;
  const transport = countCalls(inner, (n) => {
    calls += n;
  });
  return {
    transport,
    get calls() {
      return calls;
    },
    reset() {
      calls = 0;
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function devnet(): Promise<Devnet> {
  const started = await startTestDevnet({ protocol: 'dbchain' });
  cleanups.push(() => started.stop());
  return started;
}

function follower(chain: Devnet, source: ChainSource): ChainIndexer<CollectionStore> {
  // A long block time: the follower polls only when poked, so every call it makes is one the test caused.
  const indexer = new ChainIndexer({ source, stores: engineStores, chainId: chain.chainId, blockTimeSeconds: 3600 });
  indexer.start();
  cleanups.push(() => indexer.stop());
  return indexer;
}

function transportTo(chain: Devnet) {
  const transport = createHttpTransport({ url: chain.url, attempts: 2, backoffMs: 20 });
  cleanups.push(() => transport.close());
  return counting(transport);
}

async function reach(indexers: readonly ChainIndexer<CollectionStore>[], block: number): Promise<void> {
  for (const indexer of indexers) {
    indexer.poke();
    assert.ok(await indexer.waitForBlock(block, 60_000), `indexed up to block ${block}`);
  }
}

describe('DB-chain follower: empty ranges are skipped', () => {
  test('1,000 idle blocks cost at most 12 calls (headers of the range ends, one eth_getLogs), not one per block', async () => {
    const chain = await devnet();
    const counted = transportTo(chain);
    const indexer = follower(chain, createDbChainSource(counted.transport));
    await reach([indexer], chain.headNumber);
    counted.reset();
    const start = chain.headNumber;
    chain.mine(1000);
    await reach([indexer], start + 1000);
    assert.equal(indexer.asOfBlock, start + 1000);
    assert.ok(counted.calls <= 12, `${counted.calls} calls over 1,000 idle blocks`);
  });

  test('expiry inside a skipped range ends each entity at its own block: answers equal a block-by-block walk', async () => {
    const chain = await devnet();
    const spanCalls = transportTo(chain);
    const spanSource = createDbChainSource(spanCalls.transport);
    // The same driver without its span: every block read and applied one by one.
    const walkSource: ChainSource = { ...createDbChainSource(transportTo(chain).transport), span: undefined };
    const spanning = follower(chain, spanSource);
    const walking = follower(chain, walkSource);
    await reach([spanning, walking], chain.headNumber);
    const writer = createDbChainWriter({
      rpcUrl: chain.url,
      chainId: chain.chainId,
      privateKey: defined(chain.accounts[0], 'dev account 0').privateKey,
      transport: spanCalls.transport,
    });
    const context = (indexer: ChainIndexer<CollectionStore>): ServiceContext => ({
      indexer,
      chain: { chainId: chain.chainId, rpc: chain.url, protocol: 'dbchain' },
      minBlockTimeoutMs: 30_000,
      writer,
    });
    const ctx = context(spanning);
    await createCollection(ctx, { name: 'lasting', dim: 2, metric: 'cosine', wait: 'indexed' });
    // A definition that expires inside a skipped range takes its collection with it.
    await createCollection(ctx, { name: 'brief', dim: 2, metric: 'cosine', ttl: { blocks: 420 }, wait: 'indexed' });
    await upsert(ctx, { collection: 'brief', entities: [{ id: 'x', vector: [1, 0] }], wait: 'indexed' });
    await upsert(ctx, {
      collection: 'lasting',
      entities: [
        { id: 'a', vector: [1, 0], ttl: { blocks: 150 } },
        { id: 'b', vector: [0, 1], ttl: { blocks: 300 } },
        { id: 'c', vector: [1, 1] },
      ],
      wait: 'indexed',
    });
    const expiry = async (id: string) =>
      Number((await get(ctx, { collection: 'lasting', ref: id })).entity.expires_at_block);
    const [a, b] = [await expiry('a'), await expiry('b')];
    const briefEnd = defined(spanning.collections.get('brief'), 'brief').definitionExpiresAt;
    await reach([walking], chain.headNumber);

    const answers = async (indexer: ChainIndexer<CollectionStore>) => {
      const node = context(indexer);
      const live: Record<string, boolean> = {};
      for (const id of ['a', 'b', 'c'])
        live[id] = await get(node, { collection: 'lasting', ref: id }).then(
          () => true,
          () => false,
        );
      return {
        block: indexer.asOfBlock,
        count: (await count(node, { collection: 'lasting' })).count,
        live,
        brief: indexer.collections.has('brief'),
      };
    };
    // Each checkpoint is one step for the spanning follower: from the last one, over blocks that logged
    // nothing, with the expiries at a range's last block, its first one, or inside it.
    const checkpoints = [a - 1, a, b - 40, b + 1, Number(briefEnd) + 200];
    const seen: unknown[] = [];
    for (const block of checkpoints) {
      assert.ok(block > chain.headNumber, `checkpoint ${block} is ahead of the head ${chain.headNumber}`);
      spanCalls.reset();
      chain.mine(block - chain.headNumber);
      await reach([spanning, walking], block);
      assert.ok(spanCalls.calls <= 12, `${spanCalls.calls} calls to follow up to block ${block}`);
      const [fromSpan, fromWalk] = [await answers(spanning), await answers(walking)];
      assert.deepEqual(fromSpan, fromWalk, `answers at block ${block}`);
      seen.push(fromSpan);
    }
    // And what those answers are: a ends at block a, b at b, the brief collection at its definition's expiry.
    assert.deepEqual(
      seen.map((s) => {
        const { live, count: n, brief } = s as { live: Record<string, boolean>; count: number; brief: boolean };
        return { n, a: live.a, b: live.b, c: live.c, brief };
      }),
      [
        { n: 3, a: true, b: true, c: true, brief: true },
        { n: 2, a: false, b: true, c: true, brief: true },
        { n: 2, a: false, b: true, c: true, brief: true },
        { n: 1, a: false, b: false, c: true, brief: true },
        { n: 1, a: false, b: false, c: true, brief: false },
      ],
    );
  });

  test('a busy range is read 50 logged blocks at a time: the span ends at the 50th, the next one goes on from there', async () => {
    const chain = await devnet();
    const source = createDbChainSource(transportTo(chain).transport);
    const writer = createDbChainWriter({
      rpcUrl: chain.url,
      chainId: chain.chainId,
      privateKey: defined(chain.accounts[0], 'dev account 0').privateKey,
    });
    const [start] = await source.headers([chain.headNumber]);
    const from = defined(start, 'start header');
    const mined: number[] = [];
    for (let i = 0; i < 53; i++) {
      const { hash } = await writer.send({
        ...emptyBatch(),
        creates: [
          {
            btl: 100n,
            contentType: 'text/plain',
            payload: new Uint8Array([i]),
            stringAttributes: [],
            numericAttributes: [],
          },
        ],
      });
      mined.push((await writer.waitForReceipt(hash, 10_000)).blockNumber);
    }
    const span = defined(source.span, 'span');
    const first = await span(from, chain.headNumber);
    assert.equal(first.blocks.length, 50);
    assert.deepEqual(
      first.blocks.map((b) => b.number),
      mined.slice(0, 50),
    );
    assert.equal(first.end.number, mined[49]);
    assert.equal(first.end.hash, first.blocks.at(-1)?.hash);
    const second = await span(first.end, chain.headNumber);
    assert.deepEqual(
      second.blocks.map((b) => b.number),
      mined.slice(50),
    );
    assert.equal(second.end.number, chain.headNumber);
  });
});
