// The indexer keeps no vector payloads once their records are in the stores: what a re-resolution needs is
// read again from the chain at the block the node reflects. Each case checks the store's record against the
// chain's own answer (vector and halfvec bytes included), and that the payloads really are gone.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { decodeVectorEntity } from '../../src/collections/index.ts';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { ChainIndexer } from '../../indexer/index.ts';
import { REREAD_ONE_BY_ONE_MAX } from '../../indexer/indexer.ts';
import { SNAPSHOT_FORMAT } from '../../indexer/snapshot.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import {
  assertRebuiltFromChain,
  expectedCollections,
  indexedCollections,
  rawEntityAt,
} from '../helpers/indexerOracle.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { rewriteFormat } from '../helpers/snapshotFiles.ts';

const vector = (seed: number) => Array.from({ length: 4 }, (_, i) => Math.sin(seed + i));

/**
 * Counts entity queries, and those naming one entity key (the indexer's one-by-one reads, `entityAt`);
 * `failKeyQueries` of those fail, as an RPC outage would.
 */
function countingTransport(inner: RpcTransport) {
  const counts = { keyQueries: 0, queries: 0, failKeyQueries: 0 };
  const transport: RpcTransport = {
    url: inner.url,
    request<T>(method: string, params?: unknown[]) {
      if (method === 'arkiv_query') {
        counts.queries++;
        if (String(params?.[0]).startsWith('$key')) {
          counts.keyQueries++;
          if (counts.failKeyQueries > 0) {
            counts.failKeyQueries--;
            return Promise.reject(new Error('injected RPC failure'));
          }
        }
      }
      return inner.request<T>(method, params);
    },
    batch: (calls) => inner.batch(calls),
    close: () => inner.close(),
  };
  return { transport, counts };
}

describe('indexer: contents read again from the chain', () => {
  let devnet: Devnet;
  let inner: RpcTransport;
  const suite = suiteIndexers(() => devnet, 60_000);
  const newIndexer = suite.create;
  const { synced } = suite;
  /** The record of `id` in the indexer's store against the chain's answer for the same key at `block`. */
  const assertRecordFromChain = async (indexer: ChainIndexer, name: string, id: string, key: Hex) => {
    const collection = indexer.collections.get(name);
    assert.ok(collection, `collection ${name} is published`);
    const held = collection.store.get(id);
    assert.ok(held, `${name}/${id} is in the store`);
    assert.equal(held.key, key);
    const raw = await rawEntityAt(devnet, key, indexer.asOfBlock!);
    assert.ok(raw, `${key} is live on chain`);
    const decoded = decodeVectorEntity(raw, { name, definition: collection.definition });
    assert.ok(decoded.ok, 'the chain entity decodes');
    const { record } = decoded;
    assert.deepEqual([...held.vector], [...record.vector]);
    assert.deepEqual([...held.halfvec], [...record.halfvec]);
    assert.equal(held.document, record.document);
    assert.deepEqual({ ...held.attributes }, { ...record.attributes });
    assert.equal(held.expiresAt, record.expiresAt);
    assert.equal(held.owner.toLowerCase(), record.owner.toLowerCase());
  };
  /** Only definitions keep payloads: a handful of small JSON documents. */
  const assertNoVectorPayloads = (indexer: ChainIndexer) =>
    assert.ok(indexer.payloadBytes < 2_000, `the indexer holds ${indexer.payloadBytes} bytes of payload`);

  before(async () => {
    devnet = await startTestDevnet();
    inner = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
  });
  after(async () => {
    await suite.stopAll();
    await inner.close();
    await devnet.stop();
  });

  test('a shadowed entity becomes the winner when the winner is deleted (and back on a reorg)', async () => {
    const def = openDefinition({ topic: 'str' });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('shadow', def));
    const old = await alice.createEntity(
      vectorArgs('shadow', { id: 'x', vector: vector(1), document: 'old', attributes: { topic: 'a' } }, def),
    );
    for (let i = 0; i < 20; i++)
      await alice.createEntity(
        vectorArgs('shadow', { id: `fill${i}`, vector: vector(10 + i), document: `f${i}` }, def),
      );
    const winner = await alice.createEntity(
      vectorArgs('shadow', { id: 'x', vector: vector(2), document: 'new', attributes: { topic: 'b' } }, def),
    );
    const { transport, counts } = countingTransport(inner);
    const indexer = newIndexer(transport);
    await synced(indexer);
    assert.deepEqual(indexer.collections.get('shadow')?.stats, { live_entities: 21, rejected: 0, shadowed: 1 });
    await assertRecordFromChain(indexer, 'shadow', 'x', winner.entityKey);
    assertNoVectorPayloads(indexer);

    // The first reads fail: the step fails and is retried; no block is published without `x`.
    const keyQueries = counts.keyQueries;
    counts.failKeyQueries = 2;
    const published: (string | undefined)[] = [];
    const onBlock = () => published.push(indexer.collections.get('shadow')?.store.get('x')?.key);
    indexer.on('block', onBlock);
    await alice.deleteEntity({ entityKey: winner.entityKey });
    await synced(indexer);
    indexer.off('block', onBlock);
    assert.equal(counts.failKeyQueries, 0, 'the injected failures were hit');
    assert.ok(counts.keyQueries > keyQueries + 2, 'the shadowed entity was read again from the chain');
    assert.ok(published.length > 0 && published.every((key) => key !== undefined), `published: ${published}`);
    assert.deepEqual(indexer.collections.get('shadow')?.stats, { live_entities: 21, rejected: 0, shadowed: 0 });
    await assertRecordFromChain(indexer, 'shadow', 'x', old.entityKey);
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    assertNoVectorPayloads(indexer);

    // The delete is reorged away: the deleted winner is back, its content read again at the ancestor.
    const reorged = new Promise((resolve) => indexer.once('reorg', resolve));
    devnet.reorg(1, { replay: false });
    await synced(indexer);
    await reorged;
    await assertRecordFromChain(indexer, 'shadow', 'x', winner.entityKey);
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    assertNoVectorPayloads(indexer);
    await indexer.stop();
  });

  test('a definition update that declares a new attribute decodes every entity again from the chain', async () => {
    const def = openDefinition({ topic: 'str' });
    const alice = walletClient(devnet, 0);
    const definition = await alice.createEntity(definitionArgs('redef', def));
    const keys: Hex[] = [];
    for (let i = 0; i < 80; i++) {
      const args = vectorArgs(
        'redef',
        { id: `v${i}`, vector: vector(i), document: `d${i}`, attributes: { topic: 't' } },
        def,
      );
      // `rank` is not declared yet: ignored until the definition declares it. One stores it as a string,
      // which the updated definition rejects.
      const rank = i === 7 ? { key: 'rank', value: 'seven' } : { key: 'rank', value: i };
      const { entityKey } = await alice.createEntity({ ...args, attributes: [...args.attributes, rank] });
      keys.push(entityKey);
    }
    const { transport, counts } = countingTransport(inner);
    const indexer = newIndexer(transport);
    await synced(indexer);
    assert.deepEqual(indexer.collections.get('redef')?.stats, { live_entities: 80, rejected: 0, shadowed: 0 });
    assert.equal(indexer.collections.get('redef')?.store.get('v3')?.attributes.rank, undefined);
    assertNoVectorPayloads(indexer);

    const queries = counts.queries;
    const keyQueries = counts.keyQueries;
    await alice.updateEntity({
      entityKey: definition.entityKey,
      ...definitionArgs('redef', openDefinition({ topic: 'str', rank: 'uint' })),
    });
    await synced(indexer);
    assert.ok(counts.queries > queries, 'the entities were read again from the chain');
    assert.ok(keys.length > REREAD_ONE_BY_ONE_MAX);
    assert.equal(counts.keyQueries, keyQueries, `more than ${REREAD_ONE_BY_ONE_MAX} entities are read page by page`);
    assert.deepEqual(indexer.collections.get('redef')?.stats, { live_entities: 79, rejected: 1, shadowed: 0 });
    assert.equal(indexer.collections.get('redef')?.store.get('v7'), undefined);
    for (const i of [0, 3, 42, 79])
      await assertRecordFromChain(indexer, 'redef', `v${i}`, defined(keys[i], `key of v${i}`));
    assert.equal(indexer.collections.get('redef')?.store.get('v42')?.attributes.rank, 42);
    assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
    assertNoVectorPayloads(indexer);
    await indexer.stop();
  });

  test('a restart from a snapshot reads and decodes nothing again; a snapshot of the older format is refused', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-reread-'));
    try {
      const first = newIndexer(inner, { dataDir });
      await synced(first);
      await first.stop();
      assert.equal(first.counters.snapshotsWritten, 1);

      const { transport, counts } = countingTransport(inner);
      const second = newIndexer(transport, { dataDir });
      await synced(second, first.asOfBlock);
      assert.equal(second.counters.snapshotsLoaded, 1);
      assert.equal(counts.queries, 0, 'no entity was read from the chain to load the snapshot');
      assert.deepEqual(indexedCollections(second), indexedCollections(first));
      await second.stop();

      // What a node of the previous version left behind: payloads in entities.json, format 1.
      const metaPath = join(dataDir, 'snapshot', 'meta.json');
      await rewriteFormat(metaPath, SNAPSHOT_FORMAT, SNAPSHOT_FORMAT - 1);
      const third = newIndexer(inner, { dataDir });
      await synced(third);
      await assertRebuiltFromChain(devnet, third);
      await third.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
