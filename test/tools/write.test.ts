// The write path end to end: a gateway with a signer (in-process `startGateway`, following a devnet) is
// driven with the MCP SDK's real Client over streamable HTTP and with REST: upsert (create, update,
// conflict, closed collection, validation before signing, wait modes, progress), delete (dry run first),
// create collection, and the node without a signer.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { V1_UNTIL_DELETED_BTL } from '../../src/chain/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { KEEPALIVE_EXTEND_BLOCKS, keepDefinitionsAlive } from '../../src/service/index.ts';
import { publicClient, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { definitionArgs, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const base = { index: { m: 16, ef_construction: 64, ef_search: 40 }, writers: [] as `0x${string}`[] };
const open: CollectionDefinition = {
  ...base,
  dim: 3,
  metric: 'cosine',
  open: true,
  attributes: { topic: 'str', stars: 'i32' },
};
const closed: CollectionDefinition = { ...base, dim: 3, metric: 'cosine', open: false, attributes: {} };

type Problem = { code: string; status: number; detail: string; [k: string]: unknown };
const ok = <T>(result: unknown) => {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent as T;
};
const problem = (result: unknown): Problem => {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
  return JSON.parse((r.content[0] as { text: string }).text) as Problem;
};

describe('write path: upsert, delete, create collection', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let client: Client;
  let dir: string;
  let signer: string;

  before(async () => {
    devnet = await startTestDevnet();
    // The node signs with dev account 1; account 0 owns the closed collection, account 2 is another writer.
    await walletClient(devnet, 0).createEntity(definitionArgs('shared', open));
    await walletClient(devnet, 0).createEntity(definitionArgs('private', closed));
    await walletClient(devnet, 2).createEntity(vectorArgs('shared', { id: 'theirs', vector: [0, 0, 1] }, open));
    dir = await mkdtemp(join(tmpdir(), 'arkivector-key-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    signer = defined(devnet.accounts[1], 'devnet.accounts[1]').address.toLowerCase();
    const config = parseServeConfig(
      [
        '--rpc',
        devnet.url,
        '--http',
        '127.0.0.1:0',
        '--private-key-file',
        join(dir, 'key'),
        '--ws',
        devnet.wsUrl,
        '--min-block-timeout',
        '10',
      ],
      {},
    );
    gateway = await startGateway(config, createLogger('silent'));
    client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.httpUrl}/mcp`)));
    ok(await client.callTool({ name: 'arkivector_list_collections', arguments: { min_block: devnet.headNumber } }));
  });
  after(async () => {
    await client?.close();
    await gateway?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('tools/list: upsert and delete are listed with a signer, with their annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.get('arkivector_upsert')?.annotations, {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    assert.equal(byName.get('arkivector_delete')?.annotations?.destructiveHint, true);
    assert.equal(
      (byName.get('arkivector_delete')?.inputSchema.properties as Record<string, { default?: unknown }> | undefined)
        ?.dry_run?.default,
      true,
    );
    const status = (await (await fetch(`${gateway.httpUrl}/v1/status`)).json()) as {
      signer: { address: string; balance_wei: string };
    };
    assert.equal(status.signer.address, signer);
    assert.ok(BigInt(status.signer.balance_wei) > 0n);
  });

  test('upsert: creates, is searchable at once (wait indexed), reports progress, and updates its own ids', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const created = ok<{
      results: { id: string; key: string; op: string }[];
      tx_hashes: string[];
      block_number: number;
    }>(
      await client.callTool(
        {
          name: 'arkivector_upsert',
          arguments: {
            collection: 'shared',
            entities: [
              {
                id: 'memory-1',
                vector: [1, 0, 0],
                document: 'The user prefers refunds by bank transfer.',
                attributes: { topic: 'preferences', stars: 5 },
              },
              {
                id: 'memory-2',
                vector: [0, 1, 0],
                document: 'The user lives in Lisbon.',
                attributes: { topic: 'profile' },
                ttl: { days: 1 },
              },
            ],
          },
        },
        undefined,
        { onprogress: (p) => progress.push(p) },
      ),
    );
    assert.deepEqual(
      created.results.map((r) => [r.id, r.op]),
      [
        ['memory-1', 'create'],
        ['memory-2', 'create'],
      ],
    );
    assert.deepEqual(
      progress.map((p) => [p.progress, p.total]),
      [
        [1, 3],
        [2, 3],
        [3, 3],
      ],
    );
    const receipt = await publicClient(devnet).getTransactionReceipt({ hash: created.tx_hashes[0] as `0x${string}` });
    assert.equal(Number(receipt.blockNumber), created.block_number);
    const found = ok<{ as_of_block: number; results: { id: string; key: string; document: string }[] }>(
      await client.callTool({
        name: 'arkivector_search',
        arguments: { collection: 'shared', vector: [1, 0.1, 0], k: 1, include_document: true },
      }),
    );
    assert.ok(found.as_of_block >= created.block_number);
    assert.deepEqual(
      [defined(found.results[0], 'found.results[0]').id, defined(found.results[0], 'found.results[0]').key],
      ['memory-1', defined(created.results[0], 'created.results[0]').key],
    );
    const entity = await publicClient(devnet).getEntity(
      defined(created.results[1], 'created.results[1]').key as `0x${string}`,
    );
    assert.equal(entity.expiresAtBlock, BigInt(created.block_number + 86_400 / 2), 'ttl days: 1 = 43,200 blocks');

    const updated = ok<{ results: { id: string; key: string; op: string }[]; block_number: number }>(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: {
          collection: 'shared',
          entities: [
            {
              id: 'memory-1',
              vector: [1, 0, 0],
              document: 'The user prefers refunds by card.',
              attributes: { topic: 'preferences', stars: 4 },
            },
          ],
        },
      }),
    );
    assert.deepEqual(updated.results, [
      {
        id: 'memory-1',
        key: defined(created.results[0], 'created.results[0]').key,
        op: 'update',
        // No ttl and no default_ttl: v1's longest lifetime from the update's block.
        expires_at_block: updated.block_number + Number(V1_UNTIL_DELETED_BTL),
      },
    ]);
    const got = ok<{ entity: { document: string; attributes: Record<string, { value: unknown }> } }>(
      await client.callTool({
        name: 'arkivector_get',
        arguments: { collection: 'shared', ref: 'memory-1', include_document: true },
      }),
    );
    assert.equal(got.entity.document, 'The user prefers refunds by card.');
    assert.equal(got.entity.attributes.stars?.value, 4);
  });

  test('upsert: the whole batch is validated before anything is signed', async () => {
    const nonce = await publicClient(devnet).getTransactionCount({
      address: defined(devnet.accounts[1], 'devnet.accounts[1]').address,
    });
    const call = async (args: Record<string, unknown>) =>
      problem(await client.callTool({ name: 'arkivector_upsert', arguments: { collection: 'shared', ...args } }));
    const dim = await call({
      entities: [
        { id: 'a', vector: [1, 0, 0] },
        { id: 'b', vector: [1, 0] },
      ],
    });
    assert.deepEqual([dim.code, dim.expected, dim.got, dim.index], ['dimension_mismatch', 3, 2, 1]);
    assert.match(dim.detail, /^entities\[1\]: /);
    assert.equal(
      (await call({ entities: [{ id: 'a', vector: [1, 0, 0], attributes: { colour: 'red' } }] })).code,
      'invalid_argument',
    );
    assert.equal(
      (
        await call({
          entities: [
            { id: 'a', vector: [1, 0, 0] },
            { id: 'a', vector: [0, 1, 0] },
          ],
        })
      ).code,
      'invalid_argument',
    );
    assert.equal((await call({ entities: [] })).code, 'invalid_argument');
    const conflict = await call({ entities: [{ id: 'theirs', vector: [1, 0, 0] }] });
    assert.deepEqual(
      [conflict.code, conflict.status, conflict.owner],
      ['conflict', 409, defined(devnet.accounts[2], 'devnet.accounts[2]').address.toLowerCase()],
    );
    const closedWrite = problem(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: { collection: 'private', entities: [{ id: 'x', vector: [1, 0, 0] }] },
      }),
    );
    assert.deepEqual([closedWrite.code, closedWrite.status], ['forbidden', 403]);
    assert.equal(
      await publicClient(devnet).getTransactionCount({
        address: defined(devnet.accounts[1], 'devnet.accounts[1]').address,
      }),
      nonce,
      'nothing was sent',
    );
  });

  test('upsert: wait none answers with the key before the receipt; wait receipt with the block', async () => {
    const none = ok<{ results: { key: string }[]; tx_hashes: string[]; block_number: number | null }>(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: { collection: 'shared', wait: 'none', entities: [{ id: 'fast', vector: [0.5, 0.5, 0] }] },
      }),
    );
    assert.equal(none.block_number, null);
    const receipt = await publicClient(devnet).waitForTransactionReceipt({ hash: none.tx_hashes[0] as `0x${string}` });
    assert.equal(
      defined(receipt.logs[0], 'receipt.logs[0]').topics[1],
      defined(none.results[0], 'none.results[0]').key,
      "the key computed from the hash is the chain's",
    );
    const mined = ok<{ block_number: number }>(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: { collection: 'shared', wait: 'receipt', entities: [{ id: 'mined', vector: [0.5, 0, 0.5] }] },
      }),
    );
    assert.equal(typeof mined.block_number, 'number');
  });

  test("delete: dry run by default, then deletes; other writers' entities are refused", async () => {
    const dry = ok<{ dry_run: boolean; results: { id: string }[]; tx_hashes: string[] }>(
      await client.callTool({ name: 'arkivector_delete', arguments: { collection: 'shared', refs: ['memory-2'] } }),
    );
    assert.deepEqual([dry.dry_run, dry.results.map((r) => r.id), dry.tx_hashes], [true, ['memory-2'], []]);
    ok(await client.callTool({ name: 'arkivector_get', arguments: { collection: 'shared', ref: 'memory-2' } }));
    const done = ok<{ dry_run: boolean; block_number: number }>(
      await client.callTool({
        name: 'arkivector_delete',
        arguments: { collection: 'shared', refs: ['memory-2'], dry_run: false },
      }),
    );
    assert.equal(done.dry_run, false);
    assert.equal(
      problem(
        await client.callTool({
          name: 'arkivector_get',
          arguments: { collection: 'shared', ref: 'memory-2', min_block: done.block_number },
        }),
      ).code,
      'entity_not_found',
    );
    assert.equal(
      problem(
        await client.callTool({
          name: 'arkivector_delete',
          arguments: { collection: 'shared', refs: ['theirs'], dry_run: false },
        }),
      ).code,
      'conflict',
    );
    assert.equal(
      problem(
        await client.callTool({ name: 'arkivector_delete', arguments: { collection: 'shared', refs: ['nobody'] } }),
      ).code,
      'entity_not_found',
    );
  });

  test('tx_failed: a write the chain refuses (its entity vanished since the node looked) carries the reason', async () => {
    const first = ok<{ results: { key: string }[] }>(
      await client.callTool({
        name: 'arkivector_upsert',
        arguments: { collection: 'shared', entities: [{ id: 'doomed', vector: [0, 0.5, 0.5] }] },
      }),
    );
    const key = defined(first.results[0], 'first.results[0]').key as `0x${string}`;
    // Freeze the node's view, then delete the entity behind its back with the same key pair.
    await gateway.indexer.stop();
    try {
      await walletClient(devnet, 1).deleteEntity({ entityKey: key });
      const failed = problem(
        await client.callTool({
          name: 'arkivector_delete',
          arguments: { collection: 'shared', refs: [key], dry_run: false },
        }),
      );
      assert.deepEqual([failed.code, failed.status], ['tx_failed', 502]);
      assert.match(String(failed.reason), /entity not found/);
    } finally {
      gateway.indexer.start();
    }
  });

  test('REST: POST /v1/collections creates a collection, POST entities upserts, DELETE removes', async () => {
    const post = async (path: string, body: unknown, method = 'POST') => {
      const response = await fetch(`${gateway.httpUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const made = await post('/v1/collections', {
      name: 'made.here',
      dim: 2,
      metric: 'l2',
      attributes: { kind: 'str' },
      description: 'made over REST',
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const collection = (await (await fetch(`${gateway.httpUrl}/v1/collections/made.here`)).json()) as {
      owner: string;
      metric: string;
      description: string;
    };
    assert.deepEqual([collection.owner, collection.metric, collection.description], [signer, 'l2', 'made over REST']);
    assert.equal((await post('/v1/collections', { name: 'made.here', dim: 2, metric: 'l2' })).body.code, 'conflict');
    const upserted = await post('/v1/collections/made.here/entities', {
      entities: [{ id: 'p', vector: [3, 4], attributes: { kind: 'point' } }],
    });
    assert.equal(upserted.status, 200, JSON.stringify(upserted.body));
    const search = await post('/v1/collections/made.here/search', { vector: [0, 0], k: 1 });
    assert.equal(
      defined((search.body.results as { distance: number }[])[0], '(search.body.results as { distance: number }[])[0]')
        .distance,
      5,
    );
    // Like every other delete, a dry run unless dry_run=false: it says what would go and writes nothing.
    const dry = await post('/v1/collections/made.here/entities/p', undefined, 'DELETE');
    assert.deepEqual([dry.status, dry.body.dry_run, dry.body.tx_hashes], [200, true, []]);
    assert.deepEqual(
      (dry.body.results as { id: string; op: string }[]).map((r) => [r.id, r.op]),
      [['p', 'delete']],
    );
    assert.equal((await post('/v1/collections/made.here/count', {})).body.count, 1);
    const removed = await post('/v1/collections/made.here/entities/p?dry_run=false', undefined, 'DELETE');
    assert.deepEqual([removed.status, removed.body.dry_run], [200, false]);
    const count = await post('/v1/collections/made.here/count', { min_block: removed.body.block_number });
    assert.equal(count.body.count, 0);
  });

  test("keepDefinitionsAlive: extends this signer's definitions that near expiry, and only those", async () => {
    const made = (await (
      await fetch(`${gateway.httpUrl}/v1/collections`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'short.lived', dim: 2, metric: 'cosine', ttl: { blocks: 50 } }),
      })
    ).json()) as { key: `0x${string}`; block_number: number };
    const before = (await publicClient(devnet).getEntity(made.key)).expiresAtBlock!;
    assert.equal(before, BigInt(made.block_number + 50));
    const { extended } = await keepDefinitionsAlive(gateway.ctx);
    assert.deepEqual(
      extended.map((e) => e.collection),
      ['short.lived'],
      "account 0's definitions and the long-lived made.here are not touched",
    );
    assert.equal(
      (await publicClient(devnet).getEntity(made.key)).expiresAtBlock,
      before + BigInt(KEEPALIVE_EXTEND_BLOCKS),
    );
  });

  test('access: tools/list shows the write tools only to callers holding the write scope', async () => {
    const { createHash } = await import('node:crypto');
    const digest = (secret: string) => createHash('sha256').update(secret).digest('hex');
    await writeFile(
      join(dir, 'tokens.json'),
      JSON.stringify([
        { name: 'reader', sha256: digest('read-secret'), scopes: ['read'] },
        { name: 'writer', sha256: digest('write-secret'), scopes: ['write'] },
      ]),
    );
    const config = parseServeConfig(
      [
        '--rpc',
        devnet.url,
        '--http',
        '127.0.0.1:0',
        '--private-key-file',
        join(dir, 'key'),
        '--tokens',
        join(dir, 'tokens.json'),
      ],
      {},
    );
    const guarded = await startGateway(config, createLogger('silent'));
    try {
      const toolsFor = async (secret: string) => {
        const c = new Client({ name: 'arkivector-test', version: '1.0.0' });
        await c.connect(
          new StreamableHTTPClientTransport(new URL(`${guarded.httpUrl}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${secret}` } },
          }),
        );
        try {
          return (await c.listTools()).tools.map((t) => t.name).sort();
        } finally {
          await c.close();
        }
      };
      assert.deepEqual(await toolsFor('read-secret'), [
        'arkivector_count',
        'arkivector_get',
        'arkivector_list_collections',
        'arkivector_list_entities',
        'arkivector_search',
      ]);
      assert.deepEqual(await toolsFor('write-secret'), [
        'arkivector_count',
        'arkivector_create_collection',
        'arkivector_delete',
        'arkivector_get',
        'arkivector_list_collections',
        'arkivector_list_entities',
        'arkivector_search',
        'arkivector_upsert',
      ]);
      const refused = await fetch(`${guarded.httpUrl}/v1/collections/shared/entities`, {
        method: 'POST',
        headers: { authorization: 'Bearer read-secret', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(refused.status, 403);
    } finally {
      await guarded.close();
    }
  });
});
