// Agent memory end to end (issue 9, item 7), with the real MCP SDK Client over stdio and nothing but the
// tools: an agent-memory node (`serve --stdio` with a signer, the fixture embedder and the embedded devnet
// kept in --data-dir) starts from an empty chain, lists (empty), creates a collection without dim,
// remembers text (document only) and recalls it by text; a second, read-only node following that chain
// reads it with min_block; the first node restarts and the memory is still there (the devnet's state
// file); a node embedding with another model is refused on every text path (embedder_mismatch).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DEVNET_STATE_FILES } from '../../src/config.ts';
import { devAccounts } from '../../src/devnet/accounts.ts';
import { PROTOCOLS } from '../helpers/generations.ts';
import { type EmbedderFixture, startEmbedder, wordEmbedding } from '../helpers/embedder.ts';
import { defined } from '../helpers/defined.ts';
import { freePort, ok, problem, startStdioNode as startNode, type StdioNode as Node } from '../helpers/stdioNode.ts';

const KEY = defined(devAccounts(1)[0], 'devAccounts(1)[0]').privateKey;

for (const protocol of PROTOCOLS)
  describe(`agent memory over stdio, from an empty chain (${protocol})`, () => {
    let dir: string;
    let port: number;
    let embedder: EmbedderFixture;
    let memoryArgs: string[];
    let first: Node | undefined;
    let written: { block_number: number };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'arkivector-agent-memory-'));
      port = await freePort();
      // Two models with the same dimension: only the recorded model name can tell them apart.
      embedder = await startEmbedder({ models: { 'memory-model': wordEmbedding, 'other-model': wordEmbedding } });
      memoryArgs = [
        '--protocol',
        protocol,
        '--no-demo',
        '--data-dir',
        dir,
        '--devnet-port',
        String(port),
        '--block-time',
        '1',
        '--embedder',
        embedder.url,
        '--embedder-model',
        'memory-model',
      ];
      first = await startNode(memoryArgs, { ARKIVECTOR_PRIVATE_KEY: KEY });
    });
    after(async () => {
      await first?.client.close();
      await embedder?.close();
      await rm(dir, { recursive: true, force: true });
    });

    test('the instructions tell the memory flow and read-after-write on another node', () => {
      const instructions = first!.client.getInstructions() ?? '';
      assert.match(instructions, /arkivector_create_collection/);
      assert.match(instructions, /omit dim/);
      assert.match(instructions, /document only/);
      assert.match(instructions, /min_block[^\n]*another/);
      assert.match(instructions, /arkivector_list_entities[^\n]*cursor/);
      assert.match(instructions, /arkivector_delete[^\n]*dry run/);
    });

    test('list (empty) -> create without dim -> create again (same answer) -> conflict', async () => {
      const { client } = first!;
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('arkivector_create_collection'), names.join());
      const listed = ok<{ collections: unknown[] }>(
        await client.callTool({ name: 'arkivector_list_collections', arguments: {} }),
      );
      assert.deepEqual(listed.collections, []);

      const definition = {
        name: 'memory',
        metric: 'cosine',
        attributes: { topic: 'str' },
        description: "the agent's memory",
      };
      const created = ok<{
        created: boolean;
        dim: number;
        embedder: unknown;
        key: string;
        block_number: number;
        tx_hashes: string[];
      }>(await client.callTool({ name: 'arkivector_create_collection', arguments: definition }));
      assert.equal(created.created, true);
      assert.equal(created.dim, 4, 'the fixture model embeds in 4 dimensions');
      assert.deepEqual(created.embedder, { model: 'memory-model', dim: 4 });
      assert.equal(created.tx_hashes.length, 1);

      const again = ok<typeof created>(
        await client.callTool({ name: 'arkivector_create_collection', arguments: definition }),
      );
      assert.deepEqual(
        [again.created, again.key, again.tx_hashes, again.dim],
        [false, created.key, [], 4],
        'an identical create answers the existing collection and writes nothing',
      );
      assert.ok(again.block_number >= created.block_number);

      for (const other of [
        { ...definition, metric: 'l2' },
        { ...definition, attributes: { topic: 'str', stars: 'i32' } },
        { ...definition, dim: 8 },
      ]) {
        const refused = problem(await client.callTool({ name: 'arkivector_create_collection', arguments: other }));
        assert.deepEqual([refused.code, refused.status], ['conflict', 409], JSON.stringify(other));
      }

      const shown = ok<{ collections: { name: string; dim: number; embedder: unknown }[] }>(
        await client.callTool({ name: 'arkivector_list_collections', arguments: {} }),
      );
      assert.deepEqual(
        shown.collections.map((c) => [c.name, c.dim, c.embedder]),
        [['memory', 4, { model: 'memory-model', dim: 4 }]],
      );
    });

    test('remember text (document only, embedded in one batch) -> recall by text', async () => {
      const { client } = first!;
      const before = embedder.requests.length;
      const upserted = ok<{ results: { id: string; op: string }[]; block_number: number }>(
        await client.callTool({
          name: 'arkivector_upsert',
          arguments: {
            collection: 'memory',
            entities: [
              { id: 'pet', document: 'The user has a cat called Miso.', attributes: { topic: 'pets' } },
              { id: 'plant', document: 'Water the fern every Sunday.', attributes: { topic: 'home' } },
              { id: 'job', document: 'The user works as a translator.', attributes: { topic: 'work' } },
            ],
          },
        }),
      );
      assert.deepEqual(
        upserted.results.map((r) => [r.id, r.op]),
        [
          ['pet', 'create'],
          ['plant', 'create'],
          ['job', 'create'],
        ],
      );
      written = upserted;
      const sent = embedder.requests.slice(before).map((r) => (r.body as { model: string; input: string[] }).input);
      assert.deepEqual(
        sent,
        [['The user has a cat called Miso.', 'Water the fern every Sunday.', 'The user works as a translator.']],
        'the documents go to the embedder in one batch',
      );

      const found = ok<{ results: { id: string; document: string }[]; mode: string }>(
        await client.callTool({
          name: 'arkivector_search',
          arguments: { collection: 'memory', text: "What is my cat's name?", k: 1, include_document: true },
        }),
      );
      assert.equal(found.mode, 'semantic');
      assert.deepEqual(
        found.results.map((r) => [r.id, r.document]),
        [['pet', 'The user has a cat called Miso.']],
      );
    });

    test('a second, read-only node following the same chain reads the memory with min_block', async () => {
      const reader = await startNode([
        '--rpc',
        `http://127.0.0.1:${port}`,
        '--protocol',
        protocol,
        '--embedder',
        embedder.url,
        '--embedder-model',
        'memory-model',
      ]);
      try {
        const names = (await reader.client.listTools()).tools.map((t) => t.name);
        assert.ok(
          !names.includes('arkivector_create_collection') && !names.includes('arkivector_upsert'),
          names.join(),
        );
        const found = ok<{ results: { id: string }[]; as_of_block: number }>(
          await reader.client.callTool({
            name: 'arkivector_search',
            arguments: { collection: 'memory', text: 'fern', k: 1, min_block: written.block_number },
          }),
        );
        assert.ok(found.as_of_block >= written.block_number);
        assert.deepEqual(
          found.results.map((r) => r.id),
          ['plant'],
        );
        const refused = problem(
          await reader.client.callTool({
            name: 'arkivector_create_collection',
            arguments: { name: 'x', metric: 'l2' },
          }),
        );
        assert.equal(refused.code, 'signer_not_configured');
      } finally {
        await reader.client.close();
      }
    });

    test('the first node restarts on its kept chain: the memory is still there', async () => {
      await first!.client.close();
      first = undefined;
      assert.ok(
        existsSync(join(dir, DEVNET_STATE_FILES[protocol])),
        'the embedded devnet keeps its chain in --data-dir',
      );
      first = await startNode(memoryArgs, { ARKIVECTOR_PRIVATE_KEY: KEY });
      const { client } = first;
      const listed = ok<{ collections: { name: string; stats: { live_entities: number } }[] }>(
        await client.callTool({ name: 'arkivector_list_collections', arguments: { min_block: written.block_number } }),
      );
      assert.deepEqual(
        listed.collections.map((c) => [c.name, c.stats.live_entities]),
        [['memory', 3]],
        first.stderr(),
      );
      const found = ok<{ results: { id: string }[] }>(
        await client.callTool({
          name: 'arkivector_search',
          arguments: { collection: 'memory', text: 'my cat', k: 1, min_block: written.block_number },
        }),
      );
      assert.deepEqual(
        found.results.map((r) => r.id),
        ['pet'],
      );
      // Created again after the restart (an agent's "create if missing"): nothing new is written.
      const again = ok<{ created: boolean }>(
        await client.callTool({
          name: 'arkivector_create_collection',
          arguments: {
            name: 'memory',
            metric: 'cosine',
            attributes: { topic: 'str' },
            description: "the agent's memory",
          },
        }),
      );
      assert.equal(again.created, false);
    });

    test('a node embedding with another model: embedder_mismatch on search, text upsert and search_rag', async () => {
      const other = await startNode(
        [
          '--rpc',
          `http://127.0.0.1:${port}`,
          '--embedder',
          embedder.url,
          '--embedder-model',
          'other-model',
          '--compat',
          'kuradb',
        ],
        { ARKIVECTOR_PRIVATE_KEY: KEY },
      );
      try {
        const { client } = other;
        const at = { min_block: written.block_number };
        for (const mode of ['semantic', 'hybrid']) {
          const refused = problem(
            await client.callTool({
              name: 'arkivector_search',
              arguments: { collection: 'memory', text: 'my cat', mode, ...at },
            }),
          );
          assert.deepEqual([refused.code, refused.status], ['embedder_mismatch', 400], mode);
          assert.match(refused.detail, /memory-model.*other-model/);
        }
        // Words still match: keyword search needs no embedder.
        const keyword = ok<{ results: { id: string }[] }>(
          await client.callTool({
            name: 'arkivector_search',
            arguments: { collection: 'memory', text: 'translator', mode: 'keyword', ...at },
          }),
        );
        assert.deepEqual(
          keyword.results.map((r) => r.id),
          ['job'],
        );
        const before = embedder.requests.length;
        const upsert = problem(
          await client.callTool({
            name: 'arkivector_upsert',
            arguments: { collection: 'memory', entities: [{ id: 'pet2', document: 'The cat likes tuna.' }] },
          }),
        );
        assert.deepEqual([upsert.code, upsert.status], ['embedder_mismatch', 400]);
        assert.equal(embedder.requests.length, before, 'refused before anything is embedded');
        for (const mode of ['semantic', 'both']) {
          const rag = (await client.callTool({
            name: 'search_rag',
            arguments: { db: 'memory', q: 'my cat', mode },
          })) as CallToolResult;
          assert.equal(rag.isError, true, JSON.stringify(rag.content));
          assert.match(
            (rag.content[0] as { text: string }).text,
            /embedded with memory-model, this node embeds with other-model/,
          );
        }
        const rag = ok<{ keyword: { source: string }[] }>(
          await client.callTool({ name: 'search_rag', arguments: { db: 'memory', q: 'translator', mode: 'keyword' } }),
        );
        assert.deepEqual(
          rag.keyword.map((g) => g.source),
          ['job'],
        );
      } finally {
        await other.client.close();
      }
    });
  });
