// The caps on followed definitions against squatting: one party's definitions give way to each newcomer's
// first (the places are shared out by creator), and a create (`POST /v1/collections`,
// arkivector_create_collection: one service operation) is never acknowledged for a collection this node
// will not serve: refused before signing when the node knows, and after `wait: "indexed"` when the cap
// filled in the same block.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createArkivV1Writer, createHttpTransport } from '../../src/chain/index.ts';
import { encodeCollectionEntity } from '../../src/collections/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createHttpApp, createMetrics, loadAccessPolicy } from '../../src/http/index.ts';
import { createCollection, type ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer, type IndexerOptions } from '../../indexer/index.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';
import { attributes, sendStorageTx } from '../helpers/rawWriter.ts';
import { openDefinition } from '../helpers/writes.ts';

const definitionOp = (name: string) => {
  const encoded = encodeCollectionEntity(name, openDefinition());
  return {
    btl: 100_000n,
    contentType: encoded.contentType,
    payload: encoded.payload,
    ...attributes(encoded.attributes),
  };
};

/** A devnet, an indexer with `cap` and a service context whose signer is account 0; stopped after the suite. */
function node(cap: NonNullable<IndexerOptions<never>['definitionCap']>) {
  const started: { devnet?: Devnet; stop: (() => Promise<void>)[] } = { stop: [] };
  after(async () => {
    for (const stop of started.stop.reverse()) await stop();
  });
  return async () => {
    const devnet = await startTestDevnet();
    const transport = createHttpTransport({ url: devnet.url });
    const indexer = new ChainIndexer({
      transport,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
      definitionCap: cap,
    });
    started.stop.push(
      () => devnet.stop(),
      () => transport.close(),
      () => indexer.stop(),
    );
    indexer.start();
    const writer = createArkivV1Writer({
      rpcUrl: devnet.url,
      chainId: devnet.chainId,
      privateKey: defined(devnet.accounts[0], 'devnet.accounts[0]').privateKey,
    });
    const ctx: ServiceContext = {
      indexer,
      chain: { chainId: devnet.chainId, rpc: devnet.url },
      minBlockTimeoutMs: 20_000,
      writer,
    };
    const synced = async () => {
      indexer.poke();
      assert.ok(await indexer.waitForBlock(devnet.headNumber, 20_000));
    };
    return { devnet, indexer, ctx, synced };
  };
}

const nonce = (devnet: Devnet) =>
  rpcResult<string>(devnet, 'eth_getTransactionCount', [defined(devnet.accounts[0], 'account 0').address, 'latest']);

describe('definition caps: squatting', () => {
  const start = node({ perCreator: 2, total: 3 });

  test("one key's definitions give way to a newcomer's first; a create the caps refuse is refused before signing", async () => {
    const { devnet, indexer, ctx, synced } = await start();
    await synced();
    // Account 1 writes three (two within its per-creator cap), account 2 two more: the cap of 3 is full.
    assert.ok((await sendStorageTx(devnet, 1, { creates: ['x0', 'x1', 'x2'].map(definitionOp) })).result);
    assert.ok((await sendStorageTx(devnet, 2, { creates: ['y0', 'y1'].map(definitionOp) })).result);
    await synced();
    assert.equal(indexer.collections.size, 3);

    // The signer's first definition takes a place (the squatters' second ones give way) and is served.
    const created = await createCollection(ctx, { name: 'mine', dim: 4, metric: 'cosine', wait: 'indexed' });
    assert.equal(created.created, true);
    assert.equal(indexer.collections.get('mine')?.definitionKey, created.key, 'acknowledged, so served');
    assert.deepEqual([...indexer.collections.keys()].sort(), ['mine', 'x0', 'y0']);

    // A second one would come after both squatters' second ones: over the cap of 3, refused unsigned.
    const before = await nonce(devnet);
    await assert.rejects(createCollection(ctx, { name: 'mine2', dim: 4, metric: 'cosine', wait: 'indexed' }), (e) => {
      const error = e as { code: string; message: string; meta: Record<string, unknown> };
      assert.equal(error.code, 'conflict');
      assert.match(error.message, /collection mine2 not created: this node's cap of 3 .*\(DEFINITIONS_MAX\)/);
      assert.match(error.message, /--collections mine2 or --collection-owner mine2=0x/);
      assert.equal(error.meta.refused_by, 'total_cap');
      return true;
    });
    assert.equal(await nonce(devnet), before, 'nothing signed');

    // REST answers the same refusal as a 409 problem.
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const logger = { info() {}, warn() {}, error() {} };
    const app = createHttpApp({ ctx, access, metrics: createMetrics(ctx), logger, mcp: { ctx, logger } });
    const response = await app.request('/v1/collections', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'mine2', dim: 4, metric: 'cosine' }),
    });
    assert.equal(response.status, 409);
    const problem = (await response.json()) as { code: string; detail: string };
    assert.equal(problem.code, 'conflict');
    assert.match(problem.detail, /DEFINITIONS_MAX/);
  });
});

describe('definition caps: per creator', () => {
  const start = node({ perCreator: 1, total: 100 });

  test("a create over the signer's per-creator cap is refused before signing", async () => {
    const { devnet, ctx, synced } = await start();
    await synced();
    await createCollection(ctx, { name: 'one', dim: 2, metric: 'l2', wait: 'indexed' });
    const before = await nonce(devnet);
    await assert.rejects(createCollection(ctx, { name: 'two', dim: 2, metric: 'l2' }), (e) => {
      const error = e as { code: string; message: string; meta: Record<string, unknown> };
      assert.equal(error.code, 'conflict');
      assert.match(
        error.message,
        /at most 1 collection definitions created by one address \(DEFINITIONS_PER_CREATOR_MAX\)/,
      );
      assert.deepEqual([error.meta.refused_by, error.meta.limit], ['per_creator_cap', 1]);
      return true;
    });
    assert.equal(await nonce(devnet), before, 'nothing signed');
  });
});

describe('definition caps: filled in the same block', () => {
  const start = node({ perCreator: 2, total: 2 });

  test('wait "indexed" answers conflict, naming the cap and the written key, when the node does not serve it', async () => {
    const { devnet, indexer, ctx, synced } = await start();
    await synced();
    await rpcResult(devnet, 'devnet_setAutomine', [false]);
    // Two strangers' definitions wait in the pool; the signer's joins them; one block holds all three.
    assert.ok((await sendStorageTx(devnet, 3, { creates: [definitionOp('z0')] })).result);
    assert.ok((await sendStorageTx(devnet, 4, { creates: [definitionOp('w0')] })).result);
    const write = createCollection(ctx, { name: 'late', dim: 4, metric: 'cosine', wait: 'indexed' }, (step) => {
      if (step === 'sent') devnet.mine();
    });
    await assert.rejects(write, (e) => {
      const error = e as { code: string; message: string; meta: Record<string, unknown> };
      assert.equal(error.code, 'conflict');
      assert.match(
        error.message,
        /collection late was written \(definition 0x[0-9a-f]{64}, transaction 0x[0-9a-f]{64}\)/,
      );
      assert.match(error.message, /but this node does not serve it: this node's cap of 2 .*DEFINITIONS_MAX/);
      assert.equal(error.meta.refused_by, 'total_cap');
      return true;
    });
    assert.deepEqual([...indexer.collections.keys()].sort(), ['w0', 'z0']);
    await rpcResult(devnet, 'devnet_setAutomine', [true]);
  });
});
