// The two seams end to end (issue 13, item 4): an indexer given only a ChainSource and a service whose
// writer is given only the shared transport write and index a collection. Every read goes through the
// source, every write through the one RpcTransport (the writer's own rpcUrl points nowhere), and the keys
// the writer reports for its creates are the keys the indexer holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createArkivV1Source,
  createArkivV1Writer,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  type ChainSource,
  type RpcTransport,
} from '../../src/chain/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createCollection, upsert, type ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { stateReached } from '../helpers/writes.ts';

/** Records the JSON-RPC methods that pass through a transport. */
function counting(inner: RpcTransport, methods: Set<string>): RpcTransport {
  return {
    url: inner.url,
    request: (method, params) => {
      methods.add(method);
      return inner.request(method, params);
    },
    batch: (calls) => {
      for (const call of calls) methods.add(call.method);
      return inner.batch(calls);
    },
    close: () => inner.close(),
  };
}

/** Records which ChainSource methods the indexer uses. */
function watched(inner: ChainSource, used: Set<string>): ChainSource {
  const seen =
    <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
    (...args: A): R => {
      used.add(name);
      return call(...args);
    };
  return {
    chainId: seen('chainId', () => inner.chainId()),
    head: seen('head', () => inner.head()),
    headers: seen('headers', (numbers: readonly number[]) => inner.headers(numbers)),
    headAndHeader: seen('headAndHeader', (block: number) => inner.headAndHeader(block)),
    blocks: seen('blocks', (from: number, to: number) => inner.blocks(from, to)),
    forEachEntityPage: seen('forEachEntityPage', inner.forEachEntityPage.bind(inner)),
    entityAt: seen('entityAt', inner.entityAt.bind(inner)),
  };
}

/** Each generation: its devnet, its driver, and the methods its reads must use. */
const generations = [
  {
    protocol: 'v1',
    source: createArkivV1Source,
    writer: createArkivV1Writer,
    reads: ['eth_getBlockReceipts'],
  },
  {
    protocol: 'dbchain',
    source: createDbChainSource,
    writer: createDbChainWriter,
    reads: ['eth_getLogs', 'eth_call'],
  },
] as const;

for (const generation of generations)
  test(`seams (${generation.protocol}): the indexer reads only through a ChainSource, the writer sends through the shared transport, keys agree`, async () => {
    const devnet = await startTestDevnet({ protocol: generation.protocol });
    const methods = new Set<string>();
    const transport = counting(createHttpTransport({ url: devnet.url }), methods);
    const used = new Set<string>();
    const source = watched(generation.source(transport), used);
    const indexer = new ChainIndexer({ source, stores: engineStores, chainId: devnet.chainId, blockTimeSeconds: 0.2 });
    const writer = generation.writer({
      // Nothing listens here: a write that went around the shared transport would fail.
      rpcUrl: 'http://127.0.0.1:9/',
      chainId: await source.chainId(),
      privateKey: defined(devnet.accounts[0], 'dev account 0').privateKey,
      transport,
    });
    const ctx: ServiceContext = {
      indexer,
      chain: { chainId: devnet.chainId, rpc: devnet.url },
      minBlockTimeoutMs: 30_000,
      writer,
    };
    try {
      indexer.start();
      await stateReached(indexer, 'live');
      const created = await createCollection(ctx, { name: 'seam', dim: 2, metric: 'cosine', wait: 'indexed' });
      const written = await upsert(ctx, {
        collection: 'seam',
        entities: [
          { id: 'a', vector: [1, 0] },
          { id: 'b', vector: [0, 1] },
        ],
        wait: 'indexed',
      });
      const collection = defined(indexer.collections.get('seam'), 'collection seam');
      assert.equal(collection.definitionKey, created.key, 'the definition key the writer reported');
      for (const result of written.results) {
        assert.equal(result.op, 'create');
        assert.equal(defined(collection.store.get(result.id), `entity ${result.id}`).key, result.key);
      }
      for (const method of ['eth_sendRawTransaction', 'eth_getTransactionReceipt', ...generation.reads])
        assert.ok(methods.has(method), `${method} went through the shared transport`);
      for (const method of ['head', 'headAndHeader', 'blocks', 'headers'])
        assert.ok(used.has(method), `the indexer used ChainSource.${method}`);
    } finally {
      await indexer.stop();
      await transport.close();
      await devnet.stop();
    }
  });
