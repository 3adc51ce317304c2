// End to end over stdio: the real MCP SDK Client spawns `arkivector serve --stdio` following a devnet
// (seeded with the demo collections through the SDK) and calls every tool: listing, happy paths with
// values checked, each error code a tool can reach, and min_block waiting and timing out.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  encodeCollectionEntity,
  encodeVectorEntity,
  validateCollectionDefinition,
} from '../../src/collections/index.ts';
import { DEMO_NOTE_ENTITIES, seedDemo } from '../../src/node/demo.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { startEmbedder } from '../helpers/embedder.ts';
import { defined } from '../helpers/defined.ts';

const problemOf = (result: CallToolResult) => {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.content.length, 1);
  return JSON.parse((result.content[0] as { text: string }).text) as {
    code: string;
    status: number;
    detail: string;
    [k: string]: unknown;
  };
};
const structured = <T>(result: CallToolResult) => {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal(result.content.length, 1);
  return result.structuredContent as T;
};

describe('MCP over stdio: arkivector serve --stdio', () => {
  let devnet: Devnet;
  let embedder: { url: string; server: Server };
  let client: Client;
  let stderr = '';

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    await seedDemo(devnet.url, defined(devnet.accounts[0], 'devnet.accounts[0]').privateKey);
    const recorded = { dim: 4, metric: 'cosine' as const, embedder: { model: 'another-model' } };
    await walletClient(devnet).createEntity({ ...encodeCollectionEntity('recorded', recorded), expiresIn: 100_000 });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        'bin/arkivector.js',
        'serve',
        '--stdio',
        '--rpc',
        devnet.url,
        '--min-block-timeout',
        '2',
        '--embedder',
        embedder.url,
        '--embedder-model',
        'fake-embedder',
        '--log-level',
        'warn',
      ],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    await client.connect(transport);
    // The node answers as soon as it starts; wait (through the tools) until it has indexed the seed.
    const head = devnet.headNumber;
    const listed = await client.callTool({ name: 'arkivector_list_collections', arguments: { min_block: head } });
    assert.notEqual(listed.isError, true, `${JSON.stringify(listed.content)}\n${stderr}`);
  });
  after(async () => {
    await client?.close();
    embedder?.server.close();
    await devnet?.stop();
  });

  test('tools/list: the read tools with read-only annotations and output schemas; no upsert without a signer', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'arkivector_count',
      'arkivector_get',
      'arkivector_list_collections',
      'arkivector_list_entities',
      'arkivector_search',
      'arkivector_verify',
    ]);
    for (const tool of tools) {
      assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      assert.equal(tool.annotations?.destructiveHint, false, tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok((tool.description ?? '').length > 40, tool.name);
    }
    const search = tools.find((t) => t.name === 'arkivector_search')!;
    const k = defined(
      (search.inputSchema.properties as Record<string, { minimum?: number; maximum?: number; default?: number }>).k,
      'the k property',
    );
    assert.deepEqual([k.minimum, k.maximum, k.default], [1, 50, 10]);
    assert.ok((client.getInstructions() ?? '').includes('min_block'));
  });

  test("arkivector_list_collections: the specification's text format and structured collections", async () => {
    const result = await client.callTool({ name: 'arkivector_list_collections', arguments: {} });
    const answer = structured<{
      collections: { name: string; dim: number; stats: { live_entities: number } }[];
      as_of_block: number;
    }>(result as CallToolResult);
    assert.deepEqual(
      answer.collections.map((c) => [c.name, c.dim, c.stats.live_entities]),
      [
        ['demo.docs', 8, 200],
        ['notes', 4, 3],
        ['recorded', 4, 0],
      ],
    );
    const text = defined((result.content as { text: string }[])[0], '(result.content as { text: string }[])[0]').text;
    assert.equal(
      text,
      [
        '3 collection(s)',
        '- demo.docs: halfvec(8), index hnsw halfvec_cosine_ops, 200 live entities, sync live',
        '- notes: halfvec(4), index hnsw halfvec_cosine_ops, 3 live entities, sync live',
        '- recorded: halfvec(4), index hnsw halfvec_cosine_ops, 0 live entities, sync live',
      ].join('\n'),
    );
  });

  test('arkivector_search: the specification example returns cat then dog with scores, attributes and documents', async () => {
    const result = (await client.callTool({
      name: 'arkivector_search',
      arguments: {
        collection: 'notes',
        vector: [1, 0.05, 0, 0],
        k: 2,
        where: "topic = str('pets')",
        include_document: true,
      },
    })) as CallToolResult;
    const answer = structured<{
      results: {
        id: string;
        score: number;
        distance: number;
        document: string;
        attributes: Record<string, { type: string; value: unknown }>;
      }[];
      search_mode: string;
      open_collection: boolean;
      as_of_block: number;
      sync_state: string;
    }>(result);
    assert.deepEqual(
      answer.results.map((r) => r.id),
      ['cat', 'dog'],
    );
    assert.ok(Math.abs(defined(answer.results[0], 'answer.results[0]').distance - (1 - 1 / Math.sqrt(1.0025))) < 1e-3);
    assert.ok(
      Math.abs(
        defined(answer.results[0], 'answer.results[0]').score +
          defined(answer.results[0], 'answer.results[0]').distance -
          1,
      ) < 1e-9,
    );
    assert.deepEqual(defined(answer.results[0], 'answer.results[0]').attributes, {
      stars: { type: 'i32', value: 5 },
      topic: { type: 'str', value: 'pets' },
    });
    assert.equal(defined(answer.results[0], 'answer.results[0]').document, 'Cats purr.');
    assert.equal(answer.open_collection, false);
    assert.equal(answer.sync_state, 'live');
    const text = (result.content[0] as { text: string }).text;
    assert.match(text, /^2 result\(s\) as of block \d+/);
    assert.match(text, /\n1\. cat score 0\.99\d+ distance 0\.00\d+ stars=5 topic="pets"\n {3}Cats purr\./);
  });

  test('arkivector_verify: a stdio node checks answers against its own chain (this v1 one: unverifiable, said why)', async () => {
    const request = { collection: 'notes', vector: [1, 0, 0, 0], k: 1 };
    const searched = await client.callTool({ name: 'arkivector_search', arguments: request });
    const answer = structured<Record<string, unknown>>(searched as CallToolResult);
    const result = (await client.callTool({
      name: 'arkivector_verify',
      arguments: { collection: 'notes', answer, request },
    })) as CallToolResult;
    const report = structured<{ verdict: string; checks: { check: string; verdict: string; reason?: string }[] }>(
      result,
    );
    assert.equal(report.verdict, 'unverifiable', JSON.stringify(report));
    assert.equal(report.checks.find((c) => c.check === 'block')?.verdict, 'verified');
    assert.match(report.checks.find((c) => c.check === 'chain')?.reason ?? '', /Arkiv v1/);
    assert.match((result.content[0] as { text: string }).text, /^unverifiable: search answer of notes at block \d+/);
  });

  test('arkivector_search: JSON filter, keyword mode (BM25) and semantic mode through the embedder', async () => {
    const filtered = structured<{ results: { id: string }[] }>(
      (await client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'notes', vector: [0, 0, 1, 0], filter: { gte: { stars: 4 } } },
      })) as CallToolResult,
    );
    assert.deepEqual(filtered.results.map((r) => r.id).sort(), ['cat', 'dog']);
    const keyword = structured<{ results: { id: string }[]; mode: string }>(
      (await client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'notes', text: 'shade', mode: 'keyword' },
      })) as CallToolResult,
    );
    assert.deepEqual([keyword.mode, keyword.results.map((r) => r.id)], ['keyword', ['fern']]);
    const semantic = structured<{ results: { id: string }[]; mode: string }>(
      (await client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'notes', text: 'something that purrs', k: 1 },
      })) as CallToolResult,
    );
    assert.deepEqual([semantic.mode, semantic.results.map((r) => r.id)], ['semantic', ['cat']]);
  });

  test('arkivector_get by id and by key; arkivector_count with where', async () => {
    const byId = structured<{ entity: { key: string; id: string; document?: string; owner: string } }>(
      (await client.callTool({
        name: 'arkivector_get',
        arguments: { collection: 'notes', ref: 'fern', include_document: true },
      })) as CallToolResult,
    );
    assert.equal(byId.entity.document, defined(DEMO_NOTE_ENTITIES[2], 'DEMO_NOTE_ENTITIES[2]').document);
    assert.equal(byId.entity.owner, defined(devnet.accounts[0], 'devnet.accounts[0]').address.toLowerCase());
    const byKey = structured<{ entity: { id: string; document?: string } }>(
      (await client.callTool({
        name: 'arkivector_get',
        arguments: { collection: 'notes', ref: byId.entity.key },
      })) as CallToolResult,
    );
    assert.deepEqual([byKey.entity.id, byKey.entity.document], ['fern', undefined]);
    const counted = structured<{ count: number }>(
      (await client.callTool({
        name: 'arkivector_count',
        arguments: { collection: 'demo.docs', where: 'topic = "music" && rank < 100' },
      })) as CallToolResult,
    );
    assert.equal(counted.count, 20);
  });

  test('errors: every code a read tool can reach comes back as an isError problem object', async () => {
    const call = async (name: string, args: Record<string, unknown>) =>
      problemOf((await client.callTool({ name, arguments: args })) as CallToolResult);
    assert.equal(
      (await call('arkivector_search', { collection: 'nope', vector: [1, 0, 0, 0] })).code,
      'collection_not_found',
    );
    assert.equal((await call('arkivector_get', { collection: 'notes', ref: 'unicorn' })).code, 'entity_not_found');
    const mismatch = await call('arkivector_search', { collection: 'notes', vector: [1, 0, 0] });
    assert.deepEqual(
      [mismatch.code, mismatch.status, mismatch.expected, mismatch.got],
      ['dimension_mismatch', 400, 4, 3],
    );
    const badFilter = await call('arkivector_count', { collection: 'notes', where: 'topic = ' });
    assert.equal(badFilter.code, 'invalid_filter');
    assert.equal(typeof badFilter.position, 'number');
    assert.equal(
      (await call('arkivector_count', { collection: 'notes', where: 'colour = "red"' })).code,
      'invalid_filter',
    );
    assert.equal(
      (await call('arkivector_search', { collection: 'notes', vector: [1, 0, 0, 0], k: 51 })).code,
      'invalid_argument',
    );
    assert.equal((await call('arkivector_search', { collection: 'notes', mode: 'vector' })).code, 'invalid_argument');
    const mismatchModel = await call('arkivector_search', { collection: 'recorded', text: 'cats' });
    assert.deepEqual(
      [mismatchModel.code, mismatchModel.expected, mismatchModel.configured],
      ['embedder_mismatch', 'another-model', 'fake-embedder'],
    );
    const late = await call('arkivector_count', { collection: 'notes', min_block: devnet.headNumber + 1000 });
    assert.deepEqual([late.code, late.status], ['not_yet_indexed', 503]);
    assert.equal(typeof late.as_of_block, 'number');
  });

  test('min_block: a read waits for a block that is not mined yet and then reflects it', async () => {
    const next = devnet.headNumber + 1;
    const pending = client.callTool({ name: 'arkivector_count', arguments: { collection: 'notes', min_block: next } });
    const definition = validateCollectionDefinition({
      dim: 4,
      metric: 'cosine',
      attributes: { topic: 'str', stars: 'i32' },
    });
    const encoded = encodeVectorEntity(
      {
        collection: 'notes',
        id: 'owl',
        vector: [0, 1, 0, 0],
        document: 'Owls hoot.',
        attributes: { topic: 'birds', stars: 4 },
      },
      definition,
    );
    await walletClient(devnet).createEntity({
      payload: encoded.payload,
      contentType: encoded.contentType,
      attributes: encoded.attributes,
      expiresIn: 3600,
    });
    const answer = structured<{ count: number; as_of_block: number }>((await pending) as CallToolResult);
    assert.ok(answer.as_of_block >= next);
    assert.equal(answer.count, 4);
  });
});

describe('MCP over stdio: no embedder configured', () => {
  test('error: embedder_not_configured for text without mode keyword', async () => {
    const devnet = await startTestDevnet();
    const client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    try {
      await seedDemo(devnet.url, defined(devnet.accounts[0], 'devnet.accounts[0]').privateKey);
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [
            'bin/arkivector.js',
            'serve',
            '--stdio',
            '--rpc',
            devnet.url,
            '--embedder',
            'none',
            '--log-level',
            'warn',
          ],
          stderr: 'ignore',
        }),
      );
      const result = (await client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'notes', text: 'cats', min_block: devnet.headNumber },
      })) as CallToolResult;
      assert.equal(problemOf(result).code, 'embedder_not_configured');
    } finally {
      await client.close();
      await devnet.stop();
    }
  });
});
