// --compat kuradb over stdio: KuraDB's list_rag and search_rag with their argument handling, grouped
// answers (JSON text + structuredContent) and exact error strings, against a devnet-following gateway.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { publicClient, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { startEmbedder } from '../helpers/embedder.ts';
import { definitionArgs, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const kb: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: false,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { source: 'str', chunk: 'i32' },
};
const chunks = [
  {
    id: 'c1',
    vector: [1, 0, 0, 0],
    document: 'Cats purr when content.',
    attributes: { source: '/notes/cats.md', chunk: 1 },
  },
  {
    id: 'c2',
    vector: [0.9, 0.1, 0, 0],
    document: 'A cat sleeps most of the day.',
    attributes: { source: '/notes/cats.md', chunk: 2 },
  },
  {
    id: 'f1',
    vector: [0, 0.1, 1, 0.2],
    document: 'Ferns grow in shade.',
    attributes: { source: '/notes/ferns.md', chunk: 0 },
  },
  { id: 'loose', vector: [0.5, 0.5, 0.5, 0.5], document: 'A note without a source about cats.' },
];

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

describe('MCP --compat kuradb: list_rag and search_rag', () => {
  let devnet: Devnet;
  let embedder: { url: string; server: Server };
  let client: Client;

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    const alice = walletClient(devnet);
    await alice.createEntity(definitionArgs('agenvoy', kb));
    await alice.mutateEntities({ creates: chunks.map((c) => vectorArgs('agenvoy', c, kb)) });
    client = new Client({ name: 'agenvoy-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        'bin/arkivector.js',
        'serve',
        '--stdio',
        '--compat',
        'kuradb',
        '--rpc',
        devnet.url,
        '--embedder',
        embedder.url,
        '--embedder-model',
        'fake',
        '--log-level',
        'warn',
      ],
      stderr: 'pipe',
    });
    // The node's own words, should it stop before answering (they name the reason; nothing else reads them).
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const ready = await (async () => {
      try {
        await client.connect(transport);
        return await client.callTool({
          name: 'arkivector_count',
          arguments: { collection: 'agenvoy', min_block: devnet.headNumber },
        });
      } catch (error) {
        throw new Error(`${(error as Error).message}; the node's stderr:\n${stderr}`);
      }
    })();
    assert.notEqual(ready.isError, true, text(ready));
  });
  after(async () => {
    await client?.close();
    embedder?.server.close();
    await devnet?.stop();
  });

  test("list_rag: loaded names and registered entries with the definition block's time", async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'list_rag') && tools.some((t) => t.name === 'search_rag'));
    const result = await client.callTool({ name: 'list_rag', arguments: {} });
    const answer = JSON.parse(text(result)) as { loaded: string[]; registered: { db: string; createAt: string }[] };
    assert.deepEqual(result.structuredContent, answer);
    assert.deepEqual(answer.loaded, ['agenvoy']);
    const definitionBlock = await publicClient(devnet).getBlock({ blockNumber: 1n });
    assert.deepEqual(answer.registered, [
      {
        db: 'agenvoy',
        createAt: new Date(Number(definitionBlock.timestamp) * 1000).toISOString().replace('.000Z', 'Z'),
      },
    ]);
  });

  test('search_rag: both modes by default, grouped by source with chunk numbers; the id stands in for a missing source', async () => {
    const result = await client.callTool({ name: 'search_rag', arguments: { db: ' agenvoy ', q: 'cats', limit: 3 } });
    const answer = JSON.parse(text(result)) as {
      keyword: { source: string; matches: { chunk: number; content: string }[] }[];
      semantic: { source: string; matches: { chunk: number }[] }[];
    };
    assert.deepEqual(result.structuredContent, answer);
    assert.deepEqual(answer.keyword.map((g) => g.source).sort(), ['/notes/cats.md', 'loose']);
    assert.deepEqual(answer.keyword.find((g) => g.source === '/notes/cats.md')!.matches, [
      { chunk: 1, content: 'Cats purr when content.' },
    ]);
    assert.equal(defined(answer.semantic[0], 'answer.semantic[0]').source, '/notes/cats.md');
    assert.deepEqual(
      defined(answer.semantic[0], 'answer.semantic[0]').matches.map((m) => m.chunk),
      [1, 2],
    );
    assert.equal(
      answer.semantic.reduce((n, g) => n + g.matches.length, 0),
      3,
      'limit caps each mode',
    );
  });

  test('search_rag: one mode; empty branches omitted; an out-of-range limit falls back to 10', async () => {
    const keywordOnly = JSON.parse(
      text(
        await client.callTool({
          name: 'search_rag',
          arguments: { db: 'agenvoy', q: 'shade', mode: 'keyword', limit: 500 },
        }),
      ),
    );
    assert.deepEqual(keywordOnly, {
      keyword: [{ source: '/notes/ferns.md', matches: [{ chunk: 0, content: 'Ferns grow in shade.' }] }],
    });
    const none = JSON.parse(
      text(await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy', q: 'zebra', mode: 'keyword' } })),
    );
    assert.deepEqual(none, {});
    const semantic = JSON.parse(
      text(
        await client.callTool({
          name: 'search_rag',
          arguments: { db: 'agenvoy', q: 'plants', mode: 'semantic', limit: 0 },
        }),
      ),
    ) as { semantic: { matches: unknown[] }[] };
    assert.equal(
      semantic.semantic.reduce((n, g) => n + g.matches.length, 0),
      4,
      'limit 0 fell back to 10 (all 4 chunks)',
    );
  });

  test('search_rag: a limit that is not an integer from 1 to 100 (1.5, "5", null) falls back to 10', async () => {
    for (const limit of [1.5, '5', null, true]) {
      const result = await client.callTool({
        name: 'search_rag',
        arguments: { db: 'agenvoy', q: 'plants', mode: 'keyword', limit },
      });
      assert.equal(result.isError, false, `limit ${JSON.stringify(limit)}: ${text(result)}`);
    }
  });

  test("errors: KuraDB's exact strings", async () => {
    const empty = await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy', q: '   ' } });
    assert.deepEqual([empty.isError, text(empty)], [true, 'invalid argument: q is required']);
    const missing = await client.callTool({ name: 'search_rag', arguments: { db: 'nope', q: 'cats' } });
    assert.deepEqual([missing.isError, text(missing)], [true, 'invalid argument: "nope" not exist']);
    // KuraDB checks the database before the query text.
    const both = await client.callTool({ name: 'search_rag', arguments: { db: 'nope', q: '' } });
    assert.deepEqual([both.isError, text(both)], [true, 'invalid argument: "nope" not exist']);
    const badMode = await client.callTool({
      name: 'search_rag',
      arguments: { db: 'agenvoy', q: 'cats', mode: 'fuzzy' },
    });
    assert.equal(badMode.isError, true);
  });
});
