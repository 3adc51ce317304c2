// A stranger's definitions cost a follower no chain call each: a name that gains its first definition has
// its earlier vectors read from the chain, and all the names that gain one in a block are read together
// (one paged query per up to 50 names, then one header check). Counted through a transport wrapper over
// real JSON-RPC on both generations, for a few definitions and for many in one transaction.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  countCalls,
  createArkivV1Writer as createChainWriter,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  emptyBatch,
  type ChainWriter,
} from '../../src/chain/index.ts';
import { encodeCollectionEntity, encodeVectorEntity } from '../../src/collections/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { openDefinition } from '../helpers/writes.ts';

const definitionCreate = (name: string) => {
  const e = encodeCollectionEntity(name, openDefinition());
  return {
    btl: 100_000n,
    contentType: e.contentType,
    payload: e.payload,
    stringAttributes: e.attributes,
    numericAttributes: [],
  };
};

for (const protocol of ['dbchain', 'v1'] as DevnetProtocolName[])
  describe(`definitions cost no call each (${protocol})`, () => {
    const stops: (() => Promise<void>)[] = [];
    after(async () => {
      for (const stop of stops.reverse()) await stop();
    });

    async function follower() {
      const devnet: Devnet = await startTestDevnet({ protocol });
      let calls = 0;
      const transport = countCalls(createHttpTransport({ url: devnet.url }), (n) => {
        calls += n;
      });
      const indexer = new ChainIndexer({
        ...(protocol === 'dbchain' ? { source: createDbChainSource(transport) } : { transport }),
        stores: engineStores,
        chainId: devnet.chainId,
        blockTimeSeconds: 3600,
      });
      stops.push(
        () => devnet.stop(),
        () => transport.close(),
        () => indexer.stop(),
      );
      const options = {
        rpcUrl: devnet.url,
        chainId: devnet.chainId,
        privateKey: defined(devnet.accounts[1], 'account 1').privateKey,
      };
      const writer: ChainWriter = protocol === 'dbchain' ? createDbChainWriter(options) : createChainWriter(options);
      indexer.start();
      assert.ok(await indexer.waitForBlock(0, 30_000));
      /** The calls the follower makes to apply one transaction of `creates`. */
      const callsFor = async (creates: ReturnType<typeof definitionCreate>[]) => {
        const { hash } = await writer.send({ ...emptyBatch(), creates });
        const { blockNumber } = await writer.waitForReceipt(hash, 30_000);
        // The follower is idle at the block before: only this block's step is counted.
        indexer.poke();
        assert.ok(await indexer.waitForBlock(blockNumber - 1, 30_000));
        const before = calls;
        indexer.poke();
        assert.ok(await indexer.waitForBlock(blockNumber, 30_000));
        return calls - before;
      };
      return { devnet, indexer, writer, callsFor };
    }

    test('the calls to follow a block of empty definitions do not grow with their number', async () => {
      const { indexer, callsFor } = await follower();
      const few = await callsFor(['a0', 'a1'].map(definitionCreate));
      const many = await callsFor(Array.from({ length: 40 }, (_, i) => definitionCreate(`b${i}`)));
      assert.equal(indexer.collections.size, 42);
      assert.equal(many, few, `2 definitions: ${few} calls; 40 definitions: ${many} calls`);
    });

    test('vectors written before their definition are still found', async () => {
      const { indexer, writer, callsFor } = await follower();
      const def = openDefinition();
      const early = encodeVectorEntity({ collection: 'late', id: 'v1', vector: [1, 0, 0, 0] }, def);
      const { hash } = await writer.send({
        ...emptyBatch(),
        creates: [
          {
            btl: 100_000n,
            contentType: early.contentType,
            payload: early.payload,
            stringAttributes: early.stringAttributes,
            numericAttributes: [],
          },
        ],
      });
      await writer.waitForReceipt(hash, 30_000);
      await callsFor(['late', 'other'].map(definitionCreate));
      assert.equal(defined(indexer.collections.get('late'), 'late').store.size, 1);
      assert.equal(defined(indexer.collections.get('other'), 'other').store.size, 0);
    });
  });
