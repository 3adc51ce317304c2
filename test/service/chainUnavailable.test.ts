// chain_unavailable: reads while nothing is indexed and the RPC is down, and writes whose RPC is down,
// answer 503 chain_unavailable (reads of an indexed node keep answering from the last applied block).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createArkivV1Writer, createHttpTransport } from '../../src/chain/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createCollection, listCollections, upsert, type ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { stateReached } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

test('error: chain_unavailable for reads before any block and for writes while the RPC is down', async () => {
  const devnet = await startTestDevnet();
  const transport = createHttpTransport({ url: devnet.url, attempts: 1 });
  const indexer = new ChainIndexer({ transport, stores: engineStores, chainId: devnet.chainId, blockTimeSeconds: 0.2 });
  const writer = createArkivV1Writer({
    rpcUrl: devnet.url,
    chainId: devnet.chainId,
    privateKey: defined(devnet.accounts[0], 'devnet.accounts[0]').privateKey,
  });
  const ctx: ServiceContext = {
    indexer,
    chain: { chainId: devnet.chainId, rpc: devnet.url },
    minBlockTimeoutMs: 10_000,
    writer,
  };
  try {
    await devnet.suspend();
    indexer.start();
    await stateReached(indexer, 'stalled');
    await assert.rejects(
      listCollections(ctx),
      (error: Error & { code?: string; status?: number }) => error.code === 'chain_unavailable' && error.status === 503,
    );
    await devnet.resume();
    indexer.poke();
    await stateReached(indexer, 'live');
    assert.deepEqual((await listCollections(ctx)).collections, []);
    await createCollection(ctx, { name: 'memo', dim: 2, metric: 'cosine' });
    await devnet.suspend();
    await assert.rejects(
      upsert(ctx, { collection: 'memo', entities: [{ id: 'a', vector: [1, 0] }] }),
      (error: Error & { code?: string; status?: number }) => error.code === 'chain_unavailable' && error.status === 503,
    );
    assert.equal(
      defined((await listCollections(ctx)).collections[0], '(await listCollections(ctx)).collections[0]').name,
      'memo',
      'an indexed node keeps answering reads',
    );
  } finally {
    await indexer.stop();
    await transport.close();
    await devnet.stop();
  }
});
