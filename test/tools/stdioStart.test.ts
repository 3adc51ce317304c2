// The first call after a stdio start (issue 8, item 9): the real MCP Client spawns `arkivector serve
// --stdio` and calls a tool at once, while the node is still `starting`. The read must wait for the first
// applied block (within --min-block-timeout) instead of answering not_yet_indexed. To make "still
// starting" certain rather than likely, the node reaches the devnet through a loopback relay that holds
// every chain read except eth_chainId until the server has provably received the call (a ping sent after
// it came back: stdio requests are read in order).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Devnet } from '../../src/devnet/index.ts';
import { seedDemo } from '../../src/node/demo.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

/** A JSON-RPC relay to `target` that holds requests (but eth_chainId) until `release()`. */
async function heldRelay(target: string): Promise<{ url: string; release(): void; server: Server }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (!/^\s*\{[^{}]*"method"\s*:\s*"eth_chainId"/.test(body)) await gate;
    try {
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    } catch {
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release, server };
}

describe('MCP over stdio: the first call after start', () => {
  let devnet: Devnet;
  let relay: Awaited<ReturnType<typeof heldRelay>>;
  let client: Client;
  let stderr = '';

  before(async () => {
    devnet = await startTestDevnet();
    await seedDemo(devnet.url, defined(devnet.accounts[0], 'devnet.accounts[0]').privateKey);
    relay = await heldRelay(devnet.url);
    const transport = new StdioClientTransport({
      command: process.execPath,
      // --protocol: `auto` would ask the node at start, and this relay holds every chain read but eth_chainId.
      args: [
        'bin/arkivector.js',
        'serve',
        '--stdio',
        '--rpc',
        relay.url,
        '--protocol',
        'v1',
        '--min-block-timeout',
        '60',
      ],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    relay?.release();
    await client?.close();
    relay?.server.close();
    await devnet?.stop();
  });

  test('a read sent while the node is starting waits for the first block and answers', async () => {
    const listed = client.callTool({ name: 'arkivector_list_collections', arguments: {} });
    const searched = client.callTool({
      name: 'arkivector_search',
      arguments: { collection: 'notes', vector: [1, 0, 0, 0], k: 1 },
    });
    // Both requests were read by the server before this ping's answer; only then may the chain answer.
    await client.ping();
    relay.release();
    const list = (await listed) as CallToolResult;
    assert.notEqual(list.isError, true, `${JSON.stringify(list.content)}\n${stderr}`);
    const names = (list.structuredContent as { collections: { name: string }[] }).collections.map((c) => c.name);
    assert.deepEqual(names.sort(), ['demo.docs', 'notes']);
    // An answer that carries a block is not `starting` (README, "Consistency": nothing applied yet).
    const first = list.structuredContent as { as_of_block: number; sync_state: string };
    assert.equal(typeof first.as_of_block, 'number');
    assert.notEqual(first.sync_state, 'starting', JSON.stringify(first));
    const found = (await searched) as CallToolResult;
    assert.notEqual(found.isError, true, JSON.stringify(found.content));
    assert.equal((found.structuredContent as { results: { id: string }[] }).results[0]?.id, 'cat');
  });
});
