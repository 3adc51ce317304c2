// Memories that last: on both generations a node with a signer (in-process, MCP over streamable HTTP) creates a
// collection and writes a memory without any ttl. On the DB-chain both are permanent on chain (expiresAt
// 2^64−1) and every answer says "never"; on v1, which has no permanent entity, both live V1_UNTIL_DELETED_BTL
// blocks and the answers give that block. The instructions, the tool description and /v1/status say so, with
// the cost; a ttl given still sets a finite lifetime.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Hex } from 'viem';
import { PERMANENT_BTL, V1_UNTIL_DELETED_BTL } from '../../src/chain/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { publicClient, rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { PROTOCOLS } from '../helpers/generations.ts';
import { readmeSection } from '../helpers/readme.ts';
import { ok } from '../helpers/stdioNode.ts';

test('README Agent memory: the lifetimes it states are the ones written', () => {
  const section = readmeSection('Agent memory');
  const v1 = /\(`V1_UNTIL_DELETED_BTL`, ([\d,]+) blocks/.exec(section)?.[1];
  assert.equal(v1?.replace(/,/g, ''), String(V1_UNTIL_DELETED_BTL));
  assert.equal(V1_UNTIL_DELETED_BTL * 2n, (100n * 36_525n * 86_400n) / 100n, '100 years of 2 s blocks');
  assert.match(section, /permanent on the DB-chain \(`expiresAt`\s+2\^64−1/);
  assert.equal(PERMANENT_BTL, 2n ** 64n - 1n);
});

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

for (const protocol of PROTOCOLS)
  describe(`a memory written without a ttl lasts until deleted (${protocol})`, () => {
    let devnet: Devnet;
    let gateway: Gateway;
    let client: Client;
    let dir: string;

    /** The entity's expiry as the chain itself holds it. */
    async function chainExpiry(key: string): Promise<bigint> {
      if (protocol === 'dbchain') {
        const entity = await rpcResult<{ expiresAt: Hex }>(devnet, 'arkiv_getEntity', [key]);
        return BigInt(entity.expiresAt);
      }
      return (await publicClient(devnet).getEntity(key as Hex)).expiresAtBlock as bigint;
    }

    before(async () => {
      devnet = await startTestDevnet({ protocol });
      dir = await mkdtemp(join(tmpdir(), 'arkivector-lifetime-'));
      await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'account 1').privateKey}\n`);
      const args = ['--rpc', devnet.url, '--http', '127.0.0.1:0', '--private-key-file', join(dir, 'key')];
      gateway = await startGateway(parseServeConfig([...args, '--embedder', 'none'], {}), createLogger('silent'));
      client = new Client({ name: 'arkivector-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.httpUrl}/mcp`)));
    });
    after(async () => {
      await client?.close();
      await gateway?.close();
      await devnet?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    test('the instructions, the upsert tool and /v1/status say how long a memory lasts and what it costs', async () => {
      const instructions = client.getInstructions() ?? '';
      const line = instructions.split('\n').find((l) => l.startsWith('- Lifetime:')) ?? '';
      assert.match(line, /without ttl[^.]*kept until deleted/, instructions);
      assert.match(line, protocol === 'dbchain' ? /permanent/ : /100 years/);
      assert.match(line, /paid by (this node's wallet|the signer)/);
      assert.match(line, /expires_at_block/);
      const upsertTool = (await client.listTools()).tools.find((t) => t.name === 'arkivector_upsert');
      const entities = upsertTool?.inputSchema.properties?.entities as {
        items: { properties: { ttl: { description: string } } };
      };
      assert.match(entities.items.properties.ttl.description, /else kept until deleted/);
      const status = (await (await fetch(`${gateway.httpUrl}/v1/status`)).json()) as {
        memory_lifetime: { without_ttl: string | number; cost: string };
      };
      assert.deepEqual(
        status.memory_lifetime.without_ttl,
        protocol === 'dbchain' ? 'never' : Number(V1_UNTIL_DELETED_BTL),
      );
      assert.match(status.memory_lifetime.cost, /transaction paid by the signer/);
    });

    test('create + upsert without a ttl: permanent on chain (DB-chain) or 100 years (v1), and the answers say when', async () => {
      const created = ok<{ key: string; block_number: number }>(
        await client.callTool({
          name: 'arkivector_create_collection',
          arguments: { name: 'memory', dim: 3, metric: 'cosine' },
        }),
      );
      const lasting = (block: number) =>
        protocol === 'dbchain' ? PERMANENT_BTL : BigInt(block) + V1_UNTIL_DELETED_BTL;
      assert.equal(await chainExpiry(created.key), lasting(created.block_number), 'the definition lasts too');

      const result = await client.callTool({
        name: 'arkivector_upsert',
        arguments: {
          collection: 'memory',
          entities: [
            { id: 'likes-tea', vector: [1, 0, 0], document: 'The user likes tea.' },
            { id: 'short-lived', vector: [0, 1, 0], document: 'Meeting at noon.', ttl: { blocks: 100 } },
          ],
        },
      });
      const written = ok<{
        block_number: number;
        results: { id: string; key: string; expires_at_block: number | string | null }[];
      }>(result);
      const [kept, brief] = written.results;
      assert.equal(await chainExpiry(defined(kept, 'kept').key), lasting(written.block_number));
      assert.equal(await chainExpiry(defined(brief, 'brief').key), BigInt(written.block_number + 100));
      const never = protocol === 'dbchain' ? 'never' : written.block_number + Number(V1_UNTIL_DELETED_BTL);
      assert.equal(kept?.expires_at_block, never);
      assert.equal(brief?.expires_at_block, written.block_number + 100);
      const text = textOf(result);
      assert.match(
        text,
        protocol === 'dbchain'
          ? /- likes-tea: create 0x[0-9a-f]+, kept until deleted/
          : /- likes-tea: create 0x[0-9a-f]+, expires at block \d+/,
      );
      assert.match(
        text,
        new RegExp(`- short-lived: create 0x[0-9a-f]+, expires at block ${written.block_number + 100}`),
      );

      const got = await client.callTool({
        name: 'arkivector_get',
        arguments: { collection: 'memory', ref: 'likes-tea', min_block: written.block_number },
      });
      assert.equal(ok<{ entity: { expires_at_block: number | string } }>(got).entity.expires_at_block, never);
      if (protocol === 'dbchain') assert.match(textOf(got), /never expires/);
      const found = ok<{ results: { id: string; expires_at_block: number | string }[] }>(
        await client.callTool({
          name: 'arkivector_search',
          arguments: { collection: 'memory', vector: [1, 0, 0], k: 2 },
        }),
      );
      assert.deepEqual(
        found.results.map((r) => [r.id, r.expires_at_block]),
        [
          ['likes-tea', never],
          ['short-lived', written.block_number + 100],
        ],
      );
    });
  });
