// "Any other node at the same block gives the same answer" (issue 8, item 10): three real indexers over
// one devnet — one following from the start, one bootstrapped after every write, one restored from a
// snapshot taken half-way — answer exact, keyword, hybrid and search_rag queries identically at the same
// block, on data built for ties (duplicate vectors, duplicate documents, updates and deletes, so slots
// and keyword-index histories differ between the nodes). On both generations (issue 20, item 5): the
// writes go through the v1 SDK or viem-encoded DB-chain calldata (test/helpers/generations.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { search, searchRag, type ServiceContext } from '../../src/service/index.ts';
import { createEntityAs, deleteEntityAs, PROTOCOLS, updateEntityAs } from '../helpers/generations.ts';
import { definitionArgs, stateReached, vectorArgs } from '../helpers/writes.ts';
import { startChain, type Chain, type EngineIndexer } from '../http/fixture.ts';

const DUPS: CollectionDefinition = {
  dim: 4,
  metric: 'l2',
  open: true,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { g: 'i32', source: 'str' },
};
const VECTORS = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
  [1, 1, 0, 0],
];
const DOCS = ['cats purr softly', 'dogs bark', 'cats and dogs play', 'cats purr softly'];
const entity = (i: number, shift = 0) => ({
  id: `e${i}`,
  vector: VECTORS[(i + shift) % VECTORS.length]!,
  document: DOCS[(i + shift) % DOCS.length]!,
  attributes: { g: i % 2, source: `s${i % 4}` },
});

for (const protocol of PROTOCOLS)
  describe(`the same answer on every node at the same block (${protocol})`, () => {
    let chain: Chain;
    let dataDir: string;
    const nodes: { name: string; indexer: EngineIndexer }[] = [];
    let head: number;

    before(async () => {
      chain = await startChain({ write: false, protocol });
      dataDir = await mkdtemp(join(tmpdir(), 'arkivector-same-'));
      nodes.push({ name: 'follower from the start', indexer: chain.indexer });
      const { devnet } = chain;
      await createEntityAs(devnet, 0, definitionArgs('dups', DUPS));
      const keys: `0x${string}`[] = [];
      for (let i = 0; i < 24; i++)
        keys.push(await createEntityAs(devnet, 0, vectorArgs('dups', entity(i), DUPS), DUPS));
      // Half-way: a node syncs and snapshots on stop.
      const snapshotting = chain.newIndexer({ dataDir });
      snapshotting.start();
      assert.ok(await snapshotting.waitForBlock(chain.devnet.headNumber, 30_000));
      await snapshotting.stop();
      // Churn: updates (to other duplicates) and deletes, then more creates.
      // (the same attribute names before and after, so an update sets them all on either generation)
      for (let i = 0; i < 6; i++)
        await updateEntityAs(devnet, 0, keys[i]!, vectorArgs('dups', entity(i, 1), DUPS), DUPS);
      for (let i = 6; i < 10; i++) await deleteEntityAs(devnet, 0, keys[i]!);
      for (let i = 24; i < 36; i++) await createEntityAs(devnet, 0, vectorArgs('dups', entity(i), DUPS), DUPS);
      head = chain.devnet.headNumber;
      const restored = chain.newIndexer({ dataDir });
      const bootstrapped = chain.newIndexer();
      restored.start();
      bootstrapped.start();
      nodes.push({ name: 'restored from a snapshot', indexer: restored });
      nodes.push({ name: 'bootstrapped after the writes', indexer: bootstrapped });
      for (const { name, indexer } of nodes) {
        assert.ok(await indexer.waitForBlock(head, 30_000), `${name} stuck at ${indexer.asOfBlock}`);
        await stateReached(indexer, 'live');
      }
      assert.equal(restored.counters.snapshotsLoaded, 1, 'the restored node did load the snapshot');
      assert.equal(bootstrapped.counters.bootstraps, 1);
    });
    after(async () => {
      await chain?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    const ctxOf = (indexer: EngineIndexer): ServiceContext => ({ ...chain.ctx, indexer });
    const queries = [
      { mode: 'vector', vector: [1, 0, 0, 0], k: 5 },
      { mode: 'vector', vector: [1, 1, 0, 0], k: 7, include_document: true },
      { mode: 'vector', vector: [0, 1, 0, 0], k: 3, where: 'g = 1' },
      { mode: 'vector', vector: [0.5, 0.5, 0.5, 0.5], k: 50 },
      { mode: 'keyword', text: 'cats', k: 5 },
      { mode: 'keyword', text: 'cats purr', k: 4, where: 'g = 0' },
      { mode: 'keyword', text: 'dogs', k: 50 },
      { mode: 'hybrid', vector: [1, 0, 0, 0], text: 'cats', k: 6 },
    ];

    test('exact, keyword and hybrid searches answer identically (ties by entity key)', async () => {
      for (const q of queries) {
        const answers = await Promise.all(
          nodes.map(({ indexer }) => search(ctxOf(indexer), { collection: 'dups', min_block: head, ...q })),
        );
        assert.equal(answers[0]!.as_of_block, head);
        assert.equal(answers[0]!.search_mode, 'exact');
        assert.ok(answers[0]!.results.length >= Math.min(q.k, 3), JSON.stringify(q));
        // There are ties to break: some neighbouring results share a score.
        for (let i = 1; i < nodes.length; i++)
          assert.deepEqual(answers[i], answers[0], `${nodes[i]!.name}: ${JSON.stringify(q)}`);
      }
      const tied = await search(ctxOf(nodes[0]!.indexer), { collection: 'dups', vector: [1, 0, 0, 0], k: 50 });
      assert.ok(
        tied.results.some((r, i) => i > 0 && r.score === tied.results[i - 1]!.score),
        'the data has ties',
      );
    });

    test('search_rag (KuraDB) answers identically', async () => {
      for (const q of ['cats', 'dogs', 'purr']) {
        const answers = await Promise.all(
          nodes.map(({ indexer }) => searchRag(ctxOf(indexer), { db: 'dups', q, mode: 'keyword', limit: 5 })),
        );
        for (let i = 1; i < nodes.length; i++) assert.deepEqual(answers[i], answers[0], `${nodes[i]!.name}: ${q}`);
      }
    });
  });
