// Every read answer names the hash of its as_of_block (REST and MCP structured content alike), read from
// what the indexer applied: the chain's own header at that number carries the same hash.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { numberToHex } from 'viem';
import { rpcResult } from '../helpers/devnet.ts';
import { call, startChain, type Chain, type Node } from './fixture.ts';

describe('http: as_of_block_hash on every read answer (DB-chain)', () => {
  let chain: Chain;
  let node: Node;
  let client: Client;

  before(async () => {
    chain = await startChain({ protocol: 'dbchain' });
    node = await chain.node();
    client = new Client({ name: 'block-hash-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`)));
  });
  after(async () => {
    await client.close();
    await chain.close();
  });

  const hashOf = async (block: number) =>
    (await rpcResult<{ hash: string }>(chain.devnet, 'eth_getBlockByNumber', [numberToHex(block), false])).hash;

  async function assertNamesItsBlock(body: { as_of_block: number; as_of_block_hash: string | null }) {
    assert.equal(typeof body.as_of_block, 'number', JSON.stringify(body));
    assert.match(String(body.as_of_block_hash), /^0x[0-9a-f]{64}$/);
    assert.equal(body.as_of_block_hash, await hashOf(body.as_of_block));
  }

  test('REST: search, get, count, list entities and list collections', async () => {
    const base = `${node.url}/v1/collections`;
    const answers = [
      await call(`${base}/notes/search`, { method: 'POST', json: { vector: [1, 0, 0, 0], k: 2 } }),
      await call(`${base}/notes/entities/cat`),
      await call(`${base}/notes/count`, { method: 'POST', json: { where: "topic = 'pets'" } }),
      await call(`${base}/notes/entities?limit=2`),
      await call(base),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      await assertNamesItsBlock(answer.body);
    }
  });

  test('a later page of a listing names the hash of the first page’s block', async () => {
    const first = await call(`${node.url}/v1/collections/notes/entities?limit=1`);
    const next = await call(
      `${node.url}/v1/collections/notes/entities?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.as_of_block, first.body.as_of_block);
    assert.equal(next.body.as_of_block_hash, first.body.as_of_block_hash);
  });

  test('MCP: the read tools carry it in their structured content', async () => {
    for (const [name, args] of [
      ['arkivector_search', { collection: 'notes', vector: [1, 0, 0, 0], k: 1 }],
      ['arkivector_get', { collection: 'notes', ref: 'dog' }],
      ['arkivector_count', { collection: 'notes' }],
      ['arkivector_list_entities', { collection: 'notes' }],
      ['arkivector_list_collections', {}],
    ] as const) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.ok(!result.isError, JSON.stringify(result.content));
      await assertNamesItsBlock(result.structuredContent as { as_of_block: number; as_of_block_hash: string });
    }
  });
});
