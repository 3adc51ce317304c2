// Issue 24, item 19: a collection definition over the size bounds is skipped *and counted* in
// `rejected_definitions`, on both generations, by a node that follows it live and by one that bootstraps
// after it. v1 carries a definition over ENTITY_DECODED_MAX_BYTES (512 KiB) in one storage transaction;
// the DB-chain refuses payloads over 128 KiB, so there the largest definition it carries (over
// DEFINITION_PAYLOAD_MAX_BYTES, 64 KiB) is the oversize one. The definitions are written raw through the
// driver's writer: arkivector's own create_collection refuses them before anything is sent.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createArkivV1Source, createDbChainSource, createHttpTransport, type CreateOp } from '../../src/chain/index.ts';
import {
  COLLECTION_CONTENT_TYPE,
  DEFINITION_PAYLOAD_MAX_BYTES,
  ENTITY_DECODED_MAX_BYTES,
} from '../../src/collections/index.ts';
import { PAYLOAD_MAX_BYTES } from '../../src/chain/dbchain/attributes.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { status } from '../../src/service/status.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { PROTOCOLS, startGeneration } from '../helpers/generations.ts';
import { attributes } from '../helpers/rawWriter.ts';

const SOURCES = { v1: createArkivV1Source, dbchain: createDbChainSource } as const;
/** A definition payload of `bytes` bytes: valid JSON, valid fields, only its size is wrong. */
const definitionPayload = (bytes: number) => {
  const head = '{"dim":4,"metric":"l2","open":true,"description":"';
  return new TextEncoder().encode(`${head}${'d'.repeat(bytes - head.length - 2)}"}`);
};
const definition = (name: string, bytes: number): CreateOp => ({
  btl: 100_000n,
  contentType: COLLECTION_CONTENT_TYPE,
  payload: definitionPayload(bytes),
  ...attributes([
    { key: 'arkivector_type', value: 'collection' },
    { key: 'arkivector_collection', value: name },
  ]),
});
const batch = (creates: CreateOp[]) => ({ creates, updates: [], deletes: [], extends: [], ownerChanges: [] });

for (const protocol of PROTOCOLS) {
  // v1: over the entity bound itself; the DB-chain: over the definition bound, under the chain's payload limit.
  const oversize = protocol === 'v1' ? ENTITY_DECODED_MAX_BYTES + 64 * 1024 : PAYLOAD_MAX_BYTES - 1024;
  describe(`oversize definitions (${protocol})`, () => {
    test('are skipped and counted in rejected_definitions, live and after a fresh bootstrap', async () => {
      assert.ok(oversize > DEFINITION_PAYLOAD_MAX_BYTES);
      const g = await startGeneration(protocol);
      const transport = createHttpTransport({ url: g.devnet.url, attempts: 2, backoffMs: 20 });
      let fresh: ChainIndexer<CollectionStore> | undefined;
      try {
        const writer = g.ctx.writer;
        assert.ok(writer, 'the generation has a signer');
        // One valid definition; an oversize one under a new name; an oversize rival of the valid one.
        const sent = await writer.send(
          batch([definition('fine', 200), definition('huge', oversize), definition('fine', oversize)]),
        );
        const mined = await writer.waitForReceipt(sent.hash, 30_000);
        assert.equal(mined.status, 'success', mined.reason);
        g.indexer.poke();
        assert.ok(await g.indexer.waitForBlock(mined.blockNumber, 30_000), `indexer at ${g.indexer.asOfBlock}`);

        fresh = new ChainIndexer({
          source: SOURCES[protocol](transport),
          stores: engineStores,
          chainId: g.devnet.chainId,
          blockTimeSeconds: 0.2,
        });
        fresh.start();
        assert.ok(await fresh.waitForBlock(mined.blockNumber, 30_000), `fresh indexer at ${fresh.asOfBlock}`);

        for (const [role, indexer] of [
          ['live', g.indexer],
          ['bootstrapped', fresh],
        ] as const) {
          assert.equal(indexer.collections.has('huge'), false, `${role}: the oversize definition is not served`);
          assert.equal(indexer.collections.get('fine')?.definitionKey, sent.keys[0], `${role}: the valid one wins`);
          assert.equal(indexer.rejectedDefinitions, 2, `${role}: both oversize definitions are counted`);
          const answer = await status({ ...g.ctx, indexer });
          assert.equal(answer.rejected_definitions, 2, `${role}: /v1/status counts them`);
        }
      } finally {
        await fresh?.stop();
        await transport.close();
        await g.close();
      }
    });
  });
}
