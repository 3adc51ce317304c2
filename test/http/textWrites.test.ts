// Collections and text over REST (issue 9, items 1 and 2): the same service operations as the MCP tools,
// on in-process gateways with a signer following a devnet. With the fixture embedder: POST
// /v1/collections without dim, idempotent or conflict; entities written as text and found by text;
// embedder_mismatch on every text route of a collection recorded with another model. Without an
// embedder: dim is required and a text write is embedder_not_configured.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setImmediate as macrotask } from 'node:timers/promises';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { search } from '../../src/service/index.ts';
import { publicClient, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { type EmbedderFixture, startEmbedder, wordEmbedding } from '../helpers/embedder.ts';
import { definitionArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const recorded: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: true,
  writers: [],
  attributes: {},
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  embedder: { model: 'another-model' },
};
const threeDims: CollectionDefinition = { ...recorded, dim: 3, embedder: undefined };

type Answer = { status: number; body: Record<string, unknown> };

describe('REST: collections and text writes', () => {
  let devnet: Devnet;
  let embedder: EmbedderFixture;
  let withEmbedder: Gateway;
  let without: Gateway;
  let dir: string;

  const call = async (gateway: Gateway, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${gateway.httpUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder({ models: { 'memory-model': wordEmbedding } });
    await walletClient(devnet, 0).createEntity(definitionArgs('recorded', recorded));
    await walletClient(devnet, 0).createEntity(definitionArgs('three', threeDims));
    dir = await mkdtemp(join(tmpdir(), 'arkivector-text-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    const node = (extra: string[]) =>
      startGateway(
        parseServeConfig(
          [
            '--rpc',
            devnet.url,
            '--http',
            '127.0.0.1:0',
            '--private-key-file',
            join(dir, 'key'),
            '--min-block-timeout',
            '30',
            ...extra,
          ],
          {},
        ),
        createLogger('silent'),
      );
    withEmbedder = await node(['--embedder', embedder.url, '--embedder-model', 'memory-model']);
    without = await node(['--embedder', 'none']);
    for (const gateway of [withEmbedder, without])
      assert.equal((await call(gateway, `/v1/collections?min_block=${devnet.headNumber}`)).status, 200);
  });
  after(async () => {
    await withEmbedder?.close();
    await without?.close();
    await embedder?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('POST /v1/collections without dim takes the embedder dimension; again: the same; different: 409', async () => {
    const definition = { name: 'notes.text', metric: 'cosine', attributes: { topic: 'str' } };
    const made = await call(withEmbedder, '/v1/collections', definition);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.deepEqual(
      [made.body.created, made.body.dim, made.body.embedder],
      [true, 4, { model: 'memory-model', dim: 4 }],
    );
    const again = await call(withEmbedder, '/v1/collections', definition);
    assert.deepEqual(
      [again.status, again.body.created, again.body.key, again.body.tx_hashes],
      [200, false, made.body.key, []],
    );
    const other = await call(withEmbedder, '/v1/collections', { ...definition, open: true });
    assert.deepEqual([other.status, other.body.code], [409, 'conflict']);
    // Another signer's collection of the same definition is not this node's to answer.
    const theirs = await call(withEmbedder, '/v1/collections', {
      name: 'three',
      dim: 3,
      metric: 'cosine',
      open: true,
    });
    assert.deepEqual([theirs.status, theirs.body.code], [409, 'conflict']);
    assert.match(String(theirs.body.detail), /owned by/);
    // The shell's `collection create --embedder-model NAME` without --dim: the node's model gives dim.
    const named = await call(withEmbedder, '/v1/collections', {
      name: 'named',
      metric: 'l2',
      embedder: { model: 'memory-model' },
    });
    assert.deepEqual(
      [named.status, named.body.dim, named.body.embedder],
      [200, 4, { model: 'memory-model', dim: 4 }],
      JSON.stringify(named.body),
    );
    const foreign = await call(withEmbedder, '/v1/collections', {
      name: 'foreign',
      metric: 'l2',
      embedder: { model: 'someone-elses' },
    });
    assert.deepEqual([foreign.status, foreign.body.code], [400, 'invalid_argument']);
    assert.deepEqual(foreign.body.errors, [{ path: 'dim', message: 'required' }]);
  });

  test('text entities: embedded by the node, found by text on REST', async () => {
    const made = await call(withEmbedder, '/v1/collections', { name: 'diary', metric: 'cosine' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const written = await call(withEmbedder, '/v1/collections/diary/entities', {
      entities: [
        { id: 'a', document: 'Fed the cat at noon.' },
        { id: 'b', document: 'Repotted the fern.' },
        { id: 'c', vector: [0, 0, 0, 1], document: 'Given as a vector.' },
      ],
    });
    assert.equal(written.status, 200, JSON.stringify(written.body));
    const found = await call(withEmbedder, '/v1/collections/diary/search', {
      text: 'plants',
      k: 1,
      include_document: true,
      min_block: written.body.block_number,
    });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.deepEqual(
      (found.body.results as { id: string; document: string }[]).map((r) => [r.id, r.document]),
      [['b', 'Repotted the fern.']],
    );
    const empty = await call(withEmbedder, '/v1/collections/diary/entities', {
      entities: [{ id: 'd', document: ' ' }],
    });
    assert.deepEqual([empty.status, empty.body.code], [400, 'invalid_argument']);
  });

  test('a collection recorded with another model: embedder_mismatch on text search and text upsert', async () => {
    for (const mode of ['semantic', 'hybrid']) {
      const refused = await call(withEmbedder, '/v1/collections/recorded/search', { text: 'cat', mode });
      assert.deepEqual([refused.status, refused.body.code], [400, 'embedder_mismatch'], mode);
    }
    const before = embedder.requests.length;
    const upsert = await call(withEmbedder, '/v1/collections/recorded/entities', {
      entities: [{ id: 'x', document: 'a cat' }],
    });
    assert.deepEqual([upsert.status, upsert.body.code], [400, 'embedder_mismatch']);
    assert.equal(embedder.requests.length, before, 'refused before anything is embedded');
    // Vectors are the caller's business: they are still written.
    const vector = await call(withEmbedder, '/v1/collections/recorded/entities', {
      entities: [{ id: 'v', vector: [1, 0, 0, 0] }],
    });
    assert.equal(vector.status, 200, JSON.stringify(vector.body));
  });

  test('a text write into a collection of another dimension: dimension_mismatch naming the embedder', async () => {
    const refused = await call(withEmbedder, '/v1/collections/three/entities', {
      entities: [
        { id: 'x', vector: [1, 0, 0] },
        { id: 'y', document: 'a cat' },
      ],
    });
    assert.deepEqual([refused.status, refused.body.code], [400, 'dimension_mismatch']);
    assert.match(String(refused.body.detail), /entities\[1\]: the embedder memory-model gives 4 dimensions/);
  });

  test('a text search with min_block waits for a collection created elsewhere before checking its model', async () => {
    // Freeze this node's view, then create the collection behind its back (another node's write).
    await withEmbedder.indexer.stop();
    let pending: Promise<unknown> | undefined;
    try {
      const hash = await walletClient(devnet, 2).createEntity(
        definitionArgs('elsewhere', { ...recorded, embedder: { model: 'memory-model' } }),
      );
      const receipt = await publicClient(devnet).waitForTransactionReceipt({ hash: hash.txHash });
      pending = search(withEmbedder.ctx, {
        collection: 'elsewhere',
        text: 'cat',
        min_block: Number(receipt.blockNumber),
      });
      // Every microtask has run by the next macrotask: an answer given without waiting would be settled.
      const state = await Promise.race([
        pending.then(
          () => 'answered',
          (error: Error) => `failed: ${error.message}`,
        ),
        macrotask().then(() => 'waiting'),
      ]);
      assert.equal(state, 'waiting');
    } finally {
      withEmbedder.indexer.start();
    }
    const answer = (await pending) as { results: unknown[]; as_of_block: number };
    assert.deepEqual(answer.results, []);
  });

  test('GET /v1/status names the embedder: the endpoint model, or null with --embedder none', async () => {
    assert.deepEqual((await call(withEmbedder, '/v1/status')).body.embedder, {
      model: 'memory-model',
      kind: 'http',
      state: 'ready',
      source: `http://127.0.0.1:${new URL(embedder.url).port}/…`,
      dim: 4,
    });
    assert.equal((await call(without, '/v1/status')).body.embedder, null);
  });

  test('without an embedder: dim is required, and a text write is embedder_not_configured', async () => {
    const noDim = await call(without, '/v1/collections', { name: 'nodim', metric: 'l2' });
    assert.deepEqual([noDim.status, noDim.body.code], [400, 'invalid_argument']);
    assert.deepEqual(noDim.body.errors, [{ path: 'dim', message: 'required' }]);
    const text = await call(without, '/v1/collections/three/entities', { entities: [{ id: 't', document: 'words' }] });
    assert.deepEqual([text.status, text.body.code], [400, 'embedder_not_configured']);
    assert.match(String(text.body.detail), /pass vector, or start the node /);
    // Every way to configure one, on every text path that needs it.
    const search = await call(without, '/v1/collections/three/search', { text: 'words', mode: 'semantic' });
    assert.deepEqual([search.status, search.body.code], [400, 'embedder_not_configured']);
    for (const detail of [text.body.detail, search.body.detail, noDim.body.detail])
      for (const way of [
        '--embedder local',
        'local:PATH',
        '--embedder URL --embedder-model NAME',
        'without --embedder none',
      ])
        assert.ok(String(detail).includes(way), `${way} missing from ${detail}`);
    const nothing = await call(without, '/v1/collections/three/entities', { entities: [{ id: 'n' }] });
    assert.deepEqual([nothing.status, nothing.body.code], [400, 'invalid_argument']);
  });
});
