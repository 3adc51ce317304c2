// Memory that just works (issue 21): `arkivector serve --stdio` with a key and nothing else — no
// --embedder, no embeddings server — run by the real MCP SDK Client. The default local model is a folder
// put into the model cache by hand (the tiny model written here, under all-MiniLM-L6-v2's cache path),
// with fetching pointed at nothing: the node creates a collection without dim, stores text, recalls the
// related memory first by meaning, and finds it again after a restart on its kept chain. A node with
// --embedder none says so in its instructions and tool descriptions.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { devAccounts } from '../../src/devnet/accounts.ts';
import { DEFAULT_LOCAL_MODEL, modelFolder, parseLocalModel } from '../../src/embedder/local/index.ts';
import { defined } from '../helpers/defined.ts';
import { freePort, ok, problem, type StdioNode, startStdioNode } from '../helpers/stdioNode.ts';
import { TINY_DIM, writeTinyModel } from '../helpers/tinyModel.ts';

const KEY = defined(devAccounts(1)[0], 'devAccounts(1)[0]').privateKey;

describe('agent memory with the default local embedder, over stdio', () => {
  let dir: string;
  let env: Record<string, string>;
  let args: string[];
  let node: StdioNode | undefined;
  let written: number;
  let port: number | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-local-memory-'));
    const cache = join(dir, 'cache');
    const ref = parseLocalModel('');
    assert.equal(ref.kind, 'hub');
    if (ref.kind === 'hub') await writeTinyModel(modelFolder(join(cache, 'arkivector', 'models'), ref.model));
    // The cache is this test's; a fetch would go to a port nothing listens on (and is never needed).
    env = { ARKIVECTOR_PRIVATE_KEY: KEY, XDG_CACHE_HOME: cache, ARKIVECTOR_MODEL_HUB: 'http://127.0.0.1:9' };
    port = await freePort();
    args = ['--no-demo', '--data-dir', join(dir, 'data'), '--devnet-port', String(port), '--block-time', '1'];
    node = await startStdioNode(args, env);
  });
  after(async () => {
    await node?.client.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the instructions and tool descriptions name the local model', async () => {
    const { client } = defined(node, 'node');
    const instructions = client.getInstructions() ?? '';
    assert.match(instructions, new RegExp(`embeds text in this process with the model ${DEFAULT_LOCAL_MODEL}`));
    assert.match(instructions, /omit dim/);
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'arkivector_search');
    assert.match(search?.description ?? '', new RegExp(`embeds text with ${DEFAULT_LOCAL_MODEL}`));
  });

  test('create without dim, remember text, recall the related memory first by meaning', async () => {
    const { client } = defined(node, 'node');
    const created = ok<{ dim: number; embedder: unknown }>(
      await client.callTool({ name: 'arkivector_create_collection', arguments: { name: 'memory', metric: 'cosine' } }),
    );
    assert.deepEqual([created.dim, created.embedder], [TINY_DIM, { model: DEFAULT_LOCAL_MODEL, dim: TINY_DIM }]);
    const upserted = ok<{ block_number: number }>(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: {
          collection: 'memory',
          entities: [
            { id: 'plant', document: 'Water the fern every Sunday.' },
            { id: 'pet', document: 'The user has a cat called Miso.' },
            { id: 'job', document: 'The user works as a translator.' },
          ],
        },
      }),
    );
    written = upserted.block_number;
    for (const [query, first] of [
      ["What is my cat's name?", 'pet'],
      ['garden plants', 'plant'],
      ['what is my job', 'job'],
    ] as const) {
      const found = ok<{ results: { id: string }[]; mode: string }>(
        await client.callTool({ name: 'arkivector_search', arguments: { collection: 'memory', text: query, k: 3 } }),
      );
      assert.equal(found.mode, 'semantic');
      assert.equal(found.results[0]?.id, first, `${query}: ${JSON.stringify(found.results)}`);
    }
  });

  test('after a restart on the kept chain the memory is still there', async () => {
    await node?.client.close();
    node = await startStdioNode(args, env);
    const found = ok<{ results: { id: string }[] }>(
      await node.client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'memory', text: 'my kitten', k: 1, min_block: written },
      }),
    );
    assert.deepEqual(
      found.results.map((r) => r.id),
      ['pet'],
      node.stderr(),
    );
  });

  test('a node whose model cannot be fetched: text calls answer embedder_unavailable, everything else works', async () => {
    const empty = await startStdioNode(['--rpc', `http://127.0.0.1:${port}`], {
      XDG_CACHE_HOME: join(dir, 'empty-cache'),
      ARKIVECTOR_MODEL_HUB: 'http://127.0.0.1:9',
    });
    try {
      const at = { collection: 'memory', min_block: written };
      const refused = problem(
        await empty.client.callTool({ name: 'arkivector_search', arguments: { ...at, text: 'my cat' } }),
      );
      assert.deepEqual([refused.code, refused.status], ['embedder_unavailable', 502]);
      assert.match(refused.detail, /cannot load all-MiniLM-L6-v2: .*onnx\/model\.onnx from http:\/\/127\.0\.0\.1:9\//);
      const keyword = ok<{ results: { id: string }[] }>(
        await empty.client.callTool({
          name: 'arkivector_search',
          arguments: { ...at, text: 'translator', mode: 'keyword' },
        }),
      );
      assert.deepEqual(
        keyword.results.map((r) => r.id),
        ['job'],
      );
    } finally {
      await empty.client.close();
    }
  });
});

describe('instructions and tool descriptions follow the embedder', () => {
  test('--embedder none: no text embedding promised anywhere', async () => {
    const none = await startStdioNode(['--no-demo', '--devnet-port', '0', '--embedder', 'none'], {
      ARKIVECTOR_PRIVATE_KEY: KEY,
    });
    try {
      const instructions = none.client.getInstructions() ?? '';
      assert.match(instructions, /has no embedder \(--embedder none\)/);
      assert.doesNotMatch(instructions, /omit dim|document only|embeds text/);
      const described = Object.fromEntries((await none.client.listTools()).tools.map((t) => [t.name, t.description]));
      assert.match(described.arkivector_search ?? '', /no embedder, so text needs mode "keyword"/);
      assert.match(described.arkivector_upsert ?? '', /no embedder, so a document alone is refused/);
      assert.match(
        described.arkivector_create_collection ?? '',
        /dim \(1-\d+\) is required: this node has no embedder/,
      );
    } finally {
      await none.client.close();
    }
  });
});
