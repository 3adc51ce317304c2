// --compat kuradb over stdio: KuraDB's list_rag and search_rag with their argument handling, grouped
// answers (JSON text + structuredContent) and exact error strings, against a devnet-following gateway.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Devnet } from '../../src/devnet/index.ts';
import { publicClient, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { startEmbedder } from '../helpers/embedder.ts';
import { definitionArgs, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';
import { chunks, kb, writeAgenvoyDb } from '../helpers/kuradb.ts';
import { TEXT_MAX_CHARS } from '../../src/service/limits.ts';

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

describe('MCP --compat kuradb: list_rag and search_rag', () => {
  let devnet: Devnet;
  let embedder: { url: string; server: Server; requests: unknown[] };
  let client: Client;

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    await writeAgenvoyDb(devnet);
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
          arguments: { db: 'agenvoy', q: 'notes', mode: 'semantic', limit: 0 },
        }),
      ),
    ) as { semantic: { matches: { content: string }[] }[] };
    assert.equal(
      semantic.semantic.reduce((n, g) => n + g.matches.length, 0),
      4,
      'limit 0 fell back to 10 (all 4 chunks with content)',
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

  test("search_rag semantic: KuraDB's 0.3 cut-off on cosine similarity; a chunk without content is passed over, not counted", async () => {
    const semantic = async (limit: number) =>
      JSON.parse(
        text(
          await client.callTool({
            name: 'search_rag',
            arguments: { db: 'agenvoy', q: 'cats', mode: 'semantic', limit },
          }),
        ),
      ) as { semantic: { source: string; matches: { chunk: number; content: string }[] }[] };
    // "cats" embeds to [1,0,0,0]: c1 1.0, blank 0.99995 (no content), c2 0.994, loose 0.5, the fern 0 (< 0.3).
    assert.deepEqual((await semantic(2)).semantic, [
      {
        source: '/notes/cats.md',
        matches: [
          { chunk: 1, content: 'Cats purr when content.' },
          { chunk: 2, content: 'A cat sleeps most of the day.' },
        ],
      },
    ]);
    const all = (await semantic(10)).semantic;
    assert.deepEqual(
      all.map((g) => g.source),
      ['/notes/cats.md', 'loose'],
      'the fern scores 0: below the cut-off',
    );
    assert.ok(all.every((g) => g.matches.every((m) => m.content !== '')));
  });

  test('search_rag: mode is declared keyword | semantic; other spellings are read case-insensitively', async () => {
    const { tools } = await client.listTools();
    const schema = tools.find((t) => t.name === 'search_rag')!.inputSchema as unknown as {
      properties: { mode: { enum: string[] } };
      required: string[];
    };
    assert.deepEqual(schema.properties.mode.enum, ['keyword', 'semantic']);
    assert.deepEqual(schema.required.sort(), ['db', 'q']);
    for (const mode of ['KEYWORD', ' Keyword ']) {
      const result = await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy', q: 'shade', mode } });
      assert.deepEqual(
        JSON.parse(text(result)),
        {
          keyword: [{ source: '/notes/ferns.md', matches: [{ chunk: 0, content: 'Ferns grow in shade.' }] }],
        },
        mode,
      );
    }
    const semantic = JSON.parse(
      text(await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy', q: 'ferns', mode: 'Semantic' } })),
    );
    assert.deepEqual(Object.keys(semantic), ['semantic']);
    for (const mode of ['', 'both', 'BOTH']) {
      const both = JSON.parse(
        text(await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy', q: 'cats', mode } })),
      );
      assert.deepEqual(Object.keys(both), ['keyword', 'semantic'], JSON.stringify(mode));
    }
  });

  test('list_rag: loaded is what this process can query; a collection defined after start is in both lists and searchable', async () => {
    const alice = walletClient(devnet);
    await alice.createEntity(definitionArgs('later', kb));
    await alice.mutateEntities({ creates: [vectorArgs('later', defined(chunks[2], 'chunks[2]'), kb)] });
    const ready = await client.callTool({
      name: 'arkivector_count',
      arguments: { collection: 'later', min_block: devnet.headNumber },
    });
    assert.notEqual(ready.isError, true, text(ready));
    const answer = JSON.parse(text(await client.callTool({ name: 'list_rag', arguments: {} }))) as {
      loaded: string[];
      registered: { db: string }[];
    };
    assert.deepEqual(answer.loaded, ['agenvoy', 'later']);
    assert.deepEqual(
      answer.registered.map((r) => r.db),
      answer.loaded,
    );
    const found = await client.callTool({
      name: 'search_rag',
      arguments: { db: 'later', q: 'shade', mode: 'keyword' },
    });
    assert.equal(found.isError, false, text(found));
  });

  test('search_rag: a q over TEXT_MAX_CHARS is refused before any work (no embedding, no search)', async () => {
    const asked = embedder.requests.length;
    // A 3.5 MB query: the bound applies before the text is embedded or tokenised.
    const huge = await client.callTool({
      name: 'search_rag',
      arguments: { db: 'agenvoy', q: 'cats purr '.repeat(350_000) },
    });
    assert.deepEqual(
      [huge.isError, text(huge)],
      [true, `invalid argument: q is longer than ${TEXT_MAX_CHARS} characters`],
    );
    const edge = await client.callTool({
      name: 'search_rag',
      arguments: { db: 'agenvoy', q: `cats${' '.repeat(TEXT_MAX_CHARS - 4)}`, mode: 'keyword' },
    });
    assert.equal(edge.isError, false, text(edge));
    assert.equal(embedder.requests.length, asked, 'nothing was embedded');
  });

  test("errors: KuraDB's exact strings", async () => {
    const noQ = await client.callTool({ name: 'search_rag', arguments: { db: 'agenvoy' } });
    assert.deepEqual([noQ.isError, text(noQ)], [true, 'invalid argument: q is required']);
    const noDb = await client.callTool({ name: 'search_rag', arguments: { q: 'cats' } });
    assert.deepEqual([noDb.isError, text(noDb)], [true, 'invalid argument: db is required']);
    const emptyDb = await client.callTool({ name: 'search_rag', arguments: { db: ' ', q: 'cats' } });
    assert.deepEqual([emptyDb.isError, text(emptyDb)], [true, 'invalid argument: "" not exist']);
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
    assert.deepEqual(
      [badMode.isError, text(badMode)],
      [true, `invalid argument: mode must be 'keyword' or 'semantic' (got "fuzzy")`],
    );
  });
});
