// Cheap memory amplification (issue 8, item 7) with real bombs: a vector entity whose 15 MiB document
// costs a few hundred bytes of calldata, bombs in a name that has no definition, a 15 MiB definition, and
// one over the node's 20 MiB decompression bound. The devnet must stay up and answer bounded pages, and
// neither a tailing nor a freshly bootstrapped indexer may hold the bombs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  COLLECTION_CONTENT_TYPE,
  ENTITY_DECODED_MAX_BYTES,
  VECTOR_CONTENT_TYPE,
  encodeVectorPayload,
} from '../../src/collections/index.ts';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import { QUERY_PAGE_MAX_BYTES } from '../../src/devnet/entityQuery.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { ChainIndexer } from '../helpers/indexerV1.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { rpcResult, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { attributes, sendStorageTx } from '../helpers/rawWriter.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const MiB = 1024 * 1024;
const def = openDefinition();
const vectorAttributes = (collection: string, id: string) =>
  attributes([
    { key: 'arkivector_type', value: 'vector' },
    { key: 'arkivector_collection', value: collection },
    { key: 'arkivector_id', value: id },
  ]);
// A well-formed vector whose document is `bytes` long: accepted by the codec, so only the size bound stops it.
const bombPayload = (bytes: number) => encodeVectorPayload({ vector: [1, 0, 0, 0], document: 'a'.repeat(bytes) });
const bomb = (collection: string, id: string, bytes = 15 * MiB) => ({
  btl: 10_000n,
  contentType: VECTOR_CONTENT_TYPE,
  payload: bombPayload(bytes),
  ...vectorAttributes(collection, id),
});

describe('indexer: memory amplification', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  const indexers: ChainIndexer[] = [];
  const newIndexer = () => {
    const indexer = new ChainIndexer({
      transport,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
    });
    indexers.push(indexer);
    indexer.start();
    return indexer;
  };
  const synced = async (indexer: ChainIndexer) => {
    indexer.poke();
    assert.ok(await indexer.waitForBlock(devnet.headNumber, 60_000), `indexer at ${indexer.asOfBlock}`);
  };

  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url });
  });
  after(async () => {
    for (const indexer of indexers) await indexer.stop();
    await transport.close();
    await devnet.stop();
  });

  test('bombs are refused, skipped and counted, never held; pages stay bounded; a fresh node bootstraps', async () => {
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('bombed', def));
    await alice.createEntity(vectorArgs('bombed', { id: 'ok', vector: [0, 1, 0, 0], document: 'fine' }, def));
    const tailing = newIndexer();
    await synced(tailing);

    // over the node's decompression bound: refused at the door, never executed
    const refused = await sendStorageTx(devnet, 3, { creates: [bomb('bombed', 'huge', 21 * MiB)] });
    assert.match(refused.error?.message ?? '', /decompressed data exceeds/);

    for (let i = 0; i < 2; i++) {
      const inBombed = await sendStorageTx(devnet, 3, { creates: [bomb('bombed', `b${i}`)] });
      assert.ok(inBombed.result, inBombed.error?.message);
    }
    const nowhere = await sendStorageTx(devnet, 3, { creates: [bomb('nowhere', 'n0')] });
    assert.ok(nowhere.result, nowhere.error?.message);
    const bigDefinition = await sendStorageTx(devnet, 3, {
      creates: [
        {
          btl: 10_000n,
          contentType: COLLECTION_CONTENT_TYPE,
          payload: new TextEncoder().encode(`{"dim":4,"metric":"l2","description":"${'d'.repeat(15 * MiB)}"}`),
          ...attributes([
            { key: 'arkivector_type', value: 'collection' },
            { key: 'arkivector_collection', value: 'bigdef' },
          ]),
        },
      ],
    });
    assert.ok(bigDefinition.result, bigDefinition.error?.message);

    // The devnet answers the bombs in bounded pages (the cursor carries on) instead of one 90 MiB answer.
    const page = await rpcResult<{ data: unknown[]; cursor?: string }>(devnet, 'arkiv_query', [
      'arkivector_type = "vector"',
      { includeData: { key: true, payload: true } },
    ]);
    assert.ok(page.data.length < 4 && page.cursor, `first page has ${page.data.length} of 4 entities`);
    assert.ok(QUERY_PAGE_MAX_BYTES < 90 * MiB);

    await synced(tailing);
    const fresh = newIndexer();
    await synced(fresh);
    for (const indexer of [tailing, fresh]) {
      const bombed = indexer.collections.get('bombed')!;
      assert.deepEqual(bombed.stats, { live_entities: 1, rejected: 2, shadowed: 0 });
      assert.equal(indexer.collections.has('bigdef'), false);
      assert.equal(indexer.collections.has('nowhere'), false);
      assert.equal(indexer.rejectedDefinitions, 1);
      assert.ok(indexer.payloadBytes < ENTITY_DECODED_MAX_BYTES, `holds ${indexer.payloadBytes} bytes of payload`);
    }
    await synced(tailing);
    const at = Math.min(tailing.asOfBlock!, fresh.asOfBlock!);
    assert.equal(tailing.asOfBlock, fresh.asOfBlock);
    assert.deepEqual(indexedCollections(tailing), await expectedCollections(devnet, at));
    assert.deepEqual(indexedCollections(fresh), indexedCollections(tailing));
  });

  test('a name that gains a definition later gets the vectors written before it, read from the chain', async () => {
    // A devnet without bombs: the oracle reads every payload.
    await defined(indexers[0], 'indexers[0]').stop();
    await defined(indexers[1], 'indexers[1]').stop();
    await transport.close();
    await devnet.stop();
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url });
    const tailing = newIndexer();
    await synced(tailing);
    const bob = walletClient(devnet, 1);
    await bob.createEntity(vectorArgs('later', { id: 'early', vector: [1, 1, 0, 0], document: 'before' }, def));
    await synced(tailing);
    assert.equal(tailing.collections.has('later'), false);
    await bob.createEntity(definitionArgs('later', def));
    await synced(tailing);
    assert.equal(tailing.collections.get('later')?.stats.live_entities, 1);
    assert.deepEqual(indexedCollections(tailing), await expectedCollections(devnet, tailing.asOfBlock!));
  });
});
