// Progress notifications over streamable HTTP stay with the call that asked for them: two sessions
// upsert at the same time with the same JSON-RPC ids and progress tokens (each session numbers its
// requests from the same start), while a third searches in a loop; each upsert sees its own three steps
// and its own result, and the searcher sees no notification at all.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { definitionArgs } from '../helpers/writes.ts';

const open: CollectionDefinition = {
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  writers: [],
  dim: 3,
  metric: 'cosine',
  open: true,
  attributes: {},
};

async function connect(url: string, errors: Error[]): Promise<Client> {
  const client = new Client({ name: 'progress-isolation', version: '1.0.0' });
  // A notification for a token this session never sent is reported here (the SDK's Client drops it).
  client.onerror = (error) => void errors.push(error);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

describe('MCP over HTTP: progress stays with its call', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let dir: string;

  before(async () => {
    devnet = await startTestDevnet();
    await walletClient(devnet, 0).createEntity(definitionArgs('shared', open));
    dir = await mkdtemp(join(tmpdir(), 'arkivector-key-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    const args = ['--rpc', devnet.url, '--http', '127.0.0.1:0', '--private-key-file', join(dir, 'key')];
    gateway = await startGateway(
      parseServeConfig([...args, '--ws', devnet.wsUrl, '--min-block-timeout', '10'], {}),
      createLogger('silent'),
    );
  });
  after(async () => {
    await gateway?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('two concurrent upserts with the same progress token each see only their own steps', async () => {
    const url = defined(gateway.httpUrl, 'httpUrl');
    const errors: Error[] = [];
    const [a, b, searcher] = [await connect(url, errors), await connect(url, errors), await connect(url, errors)];
    try {
      const head = devnet.headNumber;
      const listed = (await searcher.callTool({
        name: 'arkivector_list_collections',
        arguments: { min_block: head },
      })) as CallToolResult;
      assert.equal(listed.isError, false, JSON.stringify(listed.content));
      const upsert = async (client: Client, id: string) => {
        const steps: [number, number | undefined][] = [];
        const result = (await client.callTool(
          { name: 'arkivector_upsert', arguments: { collection: 'shared', entities: [{ id, vector: [1, 0, 0] }] } },
          undefined,
          { onprogress: (p) => steps.push([p.progress, p.total]) },
        )) as CallToolResult;
        assert.equal(result.isError, false, JSON.stringify(result.content));
        return { steps, ids: (result.structuredContent as { results: { id: string }[] }).results.map((r) => r.id) };
      };
      let writing = true;
      let searches = 0;
      const search = async () => {
        while (writing) {
          const found = (await searcher.callTool({
            name: 'arkivector_search',
            arguments: { collection: 'shared', vector: [1, 0, 0], k: 2 },
          })) as CallToolResult;
          assert.equal(found.isError, false, JSON.stringify(found.content));
          searches++;
        }
      };
      const searching = search();
      const [fromA, fromB] = await Promise.all([upsert(a, 'from-a'), upsert(b, 'from-b')]).finally(() => {
        writing = false;
      });
      await searching;
      const steps = [
        [1, 3],
        [2, 3],
        [3, 3],
      ];
      assert.deepEqual(fromA, { steps, ids: ['from-a'] });
      assert.deepEqual(fromB, { steps, ids: ['from-b'] });
      assert.ok(searches > 0);
      assert.deepEqual(
        errors.map((e) => e.message),
        [],
      );
    } finally {
      for (const client of [a, b, searcher]) await client.close();
    }
  });
});
