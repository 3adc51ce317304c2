// Hybrid search and KuraDB's search_rag (both branches) answer their keyword half when the semantic half
// cannot run — the embedder is down, or it gives vectors of another width than the collection's — and say
// why (`semantic_missing`); asked for alone, semantic search still fails with the cause. Real parts: the
// DB-chain devnet, an indexer, a loopback OpenAI-compatible embedder, and one that is not listening.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createEmbedder } from '../../src/embedder/index.ts';
import { createCollection, search, searchRag, upsert, type ServiceContext } from '../../src/service/index.ts';
import { type EmbedderFixture, hashedEmbedding, startEmbedder, wordEmbedding } from '../helpers/embedder.ts';
import { type Generation, startGeneration } from '../helpers/generations.ts';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the keyword half answers when the semantic half cannot', () => {
  let generation: Generation;
  let fixture: EmbedderFixture;
  let down: ServiceContext;
  let wider: ServiceContext;
  let block: number;

  before(async () => {
    generation = await startGeneration('dbchain');
    fixture = await startEmbedder({ models: { four: wordEmbedding, eight: (t) => hashedEmbedding(t, 8) } });
    const { ctx } = generation;
    await createCollection(ctx, { name: 'mem', dim: 4, metric: 'cosine', open: true, wait: 'indexed' });
    ({ block_number: block } = (await upsert(ctx, {
      collection: 'mem',
      entities: [
        { id: 'cat', vector: [1, 0, 0, 0], document: 'The cat purrs on the sofa.' },
        { id: 'fern', vector: [0, 0.1, 1, 0.2], document: 'Water the fern every Sunday.' },
      ],
      wait: 'indexed',
    })) as { block_number: number });
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    down = { ...ctx, embedder: createEmbedder({ url, model: 'four', maxAttempts: 1 }) };
    wider = { ...ctx, embedder: createEmbedder({ url: fixture.url, model: 'eight' }) };
  });
  after(async () => {
    await fixture?.close();
    await generation?.close();
  });

  for (const [name, context, why] of [
    ['the embedder is down', () => down, /cannot be reached \(connection refused\)/],
    [
      'the embedder gives another dimension',
      () => wider,
      /the embedder eight gives 8 dimensions, collection mem holds 4/,
    ],
  ] as const) {
    test(`${name}: hybrid answers by keyword and says why; semantic alone fails`, async () => {
      const answer = await search(context(), { collection: 'mem', text: 'fern', mode: 'hybrid', min_block: block });
      assert.equal(answer.mode, 'hybrid');
      assert.match(answer.semantic_missing ?? '', why);
      assert.deepEqual(
        answer.results.map((r) => r.id),
        ['fern'],
      );
      await assert.rejects(search(context(), { collection: 'mem', text: 'fern', mode: 'semantic' }), why);
    });

    test(`${name}: search_rag without mode answers its keyword branch and says why; mode semantic fails`, async () => {
      const answer = await searchRag(context(), { db: 'mem', q: 'fern', mode: 'both' });
      assert.deepEqual(answer.keyword, [
        { source: 'fern', matches: [{ chunk: 0, content: 'Water the fern every Sunday.' }] },
      ]);
      assert.equal(answer.semantic, undefined);
      assert.match(answer.semantic_missing ?? '', why);
      await assert.rejects(searchRag(context(), { db: 'mem', q: 'fern', mode: 'semantic' }), why);
    });
  }

  test('with a working embedder of the right width nothing is missing', async () => {
    const working = { ...generation.ctx, embedder: createEmbedder({ url: fixture.url, model: 'four' }) };
    const answer = await search(working, { collection: 'mem', text: 'fern', mode: 'hybrid' });
    assert.equal(answer.semantic_missing, undefined);
    assert.equal(answer.results[0]?.id, 'fern');
    assert.equal((await searchRag(working, { db: 'mem', q: 'fern', mode: 'both' })).semantic_missing, undefined);
  });
});
