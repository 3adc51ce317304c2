// `/v1/status` `recall` lists at most STATUS_RECALL_MAX collections (README: "the 100 largest"): a chain with
// one more collection of more than 10 records than that, followed by a real indexer, and the status of a
// node over it: the largest are listed, largest first, and the one left out is the smallest (by name among
// equals); collections of 10 records or fewer are never listed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHttpTransport } from '../../src/chain/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { status } from '../../src/service/index.ts';
import { STATUS_RECALL_MAX } from '../../src/service/limits.ts';
import { ChainIndexer } from '../helpers/indexerV1.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';

test(`status lists the recall of at most STATUS_RECALL_MAX (${STATUS_RECALL_MAX}) collections, the largest`, async () => {
  const devnet = await startTestDevnet();
  const transport = createHttpTransport({ url: devnet.url });
  const indexer = new ChainIndexer({ transport, stores: engineStores, chainId: devnet.chainId, blockTimeSeconds: 0.2 });
  try {
    const def = openDefinition();
    const names = Array.from({ length: STATUS_RECALL_MAX + 1 }, (_, i) => `c${String(i).padStart(3, '0')}`);
    // Three larger collections (13 records), the rest 11; and one of 10, never listed.
    const sizes = new Map(names.map((name, i) => [name, i % 40 === 7 ? 13 : 11]));
    sizes.set('small', 10);
    const alice = walletClient(devnet);
    await alice.mutateEntities({ creates: [...sizes.keys()].map((name) => definitionArgs(name, def)) });
    const vectors = [...sizes].flatMap(([name, size]) =>
      Array.from({ length: size }, (_, i) => vectorArgs(name, { id: `v${i}`, vector: [1, i, i % 3, 0.5] }, def)),
    );
    for (let i = 0; i < vectors.length; i += 500) await alice.mutateEntities({ creates: vectors.slice(i, i + 500) });
    indexer.start();
    assert.ok(await indexer.waitForBlock(devnet.headNumber, 60_000));
    assert.equal(indexer.collections.size, sizes.size);

    const { recall } = await status({
      indexer,
      chain: { chainId: devnet.chainId, rpc: devnet.url },
      minBlockTimeoutMs: 1_000,
    });
    assert.equal(recall.length, STATUS_RECALL_MAX);
    const largest = [...sizes].filter(([, size]) => size === 13).map(([name]) => name);
    assert.equal(largest.length, 3);
    assert.deepEqual(
      recall.slice(0, 3).map((r) => [r.collection, r.records]),
      largest.map((name) => [name, 13]),
    );
    const listed = new Set(recall.map((r) => r.collection));
    // Among the 98 of 11 records, by name: the last one is the one over the cap.
    assert.ok(!listed.has('c100') && !listed.has('small'), 'the smallest are left out');
    assert.equal(listed.size, STATUS_RECALL_MAX);
  } finally {
    await indexer.stop();
    await transport.close();
    await devnet.stop();
  }
});
