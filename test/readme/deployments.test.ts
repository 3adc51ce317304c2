// README "Deployments" as test input: the write daemon's and the public node's command lines, run as
// written (the real `arkivector serve` as a child process) against a DB-chain devnet, with the listener moved
// from 0.0.0.0:8787 to 127.0.0.1:0 (tests listen on loopback only) and URL the devnet's. Each must give what
// its row promises: tokens with read / write scopes, writes that spend the node's wallet; reads for anyone
// and nothing writable. The agent-memory row (stdio) is driven by the MCP SDK Client over stdio.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Devnet } from '../../src/devnet/index.ts';
import { hashSecret } from '../../src/http/index.ts';
import { defined } from '../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { startEmbedder, type EmbedderFixture } from '../helpers/embedder.ts';
import { spawnGateway, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { codeSpans, docSection, tableRows } from '../helpers/readme.ts';
import { ok, startStdioNode } from '../helpers/stdioNode.ts';
import { assertProblem, call } from '../http/fixture.ts';

const ROWS = new Map(
  tableRows(docSection('deploy.md', 'Deployments'), 'who').map(([who = '', command = '', gets = '']) => [
    who,
    { command: defined(codeSpans(command)[0], command), note: command, gets },
  ]),
);
const row = (who: string) => defined(ROWS.get(who), `Deployments row "${who}"`);

const READER = 'deploy-reader-0123456789';
const WRITER = 'deploy-writer-0123456789';

/** The row's `arkivector serve …` arguments, on loopback and against `rpc`. */
function serveArgs(command: string, rpc: string, tokensFile: string): { args: string[]; env: Record<string, string> } {
  const words = command.split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0]?.includes('=')) {
    const [name = '', value = ''] = defined(words.shift(), 'env').split('=');
    env[name] = value;
  }
  assert.deepEqual(words.slice(0, 2), ['arkivector', 'serve'], command);
  const args = words
    .slice(2)
    .map((word) =>
      word === '0.0.0.0:8787' ? '127.0.0.1:0' : word === 'URL' ? rpc : word === 'tokens.json' ? tokensFile : word,
    );
  return { args, env };
}

async function mcpTools(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = new Client({ name: 'readme-deployments', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe('README: Deployments, each command as written', () => {
  let devnet: Devnet;
  let dir: string;
  let tokensFile: string;
  let embedder: EmbedderFixture;
  let key: string;
  const gateways: GatewayProcess[] = [];
  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain', blockTime: 1 });
    dir = await mkdtemp(join(tmpdir(), 'arkivector-deployments-'));
    tokensFile = join(dir, 'tokens.json');
    await writeFile(
      tokensFile,
      JSON.stringify([
        { name: 'reader', sha256: hashSecret(READER), scopes: ['read'] },
        { name: 'writer', sha256: hashSecret(WRITER), scopes: ['read', 'write'] },
      ]),
    );
    embedder = await startEmbedder();
    key = defined(devnet.accounts[1], 'dev account 1').privateKey;
  });
  after(async () => {
    for (const gateway of gateways) await gateway.stop();
    await embedder.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('write daemon: bearer tokens with read / write scopes; REST and MCP writes spend the wallet', async () => {
    const daemon = row('write daemon');
    assert.match(daemon.note, /key in `ARKIVECTOR_PRIVATE_KEY`/);
    const { args } = serveArgs(daemon.command, devnet.url, tokensFile);
    const gateway = await spawnGateway(args, { ARKIVECTOR_PRIVATE_KEY: key });
    gateways.push(gateway);
    const { url } = gateway;
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
    assertProblem(await call(`${url}/v1/collections`), 401, 'unauthorized');
    assert.equal((await call(`${url}/v1/collections`, { headers: bearer(READER) })).status, 200);
    const definition = { name: 'daemon', dim: 2, metric: 'cosine' };
    assertProblem(
      await call(`${url}/v1/collections`, { method: 'POST', headers: bearer(READER), json: definition }),
      403,
      'forbidden',
    );
    const address = defined(devnet.accounts[1], 'dev account 1').address;
    const balance = async () => BigInt(await rpcResult<string>(devnet, 'eth_getBalance', [address, 'latest']));
    const before = await balance();
    const created = await call(`${url}/v1/collections`, { method: 'POST', headers: bearer(WRITER), json: definition });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const upserted = await call(`${url}/v1/collections/daemon/entities`, {
      method: 'POST',
      headers: bearer(WRITER),
      json: { entities: [{ id: 'a', vector: [1, 0] }] },
    });
    assert.equal(upserted.status, 200, JSON.stringify(upserted.body));
    assert.ok((await balance()) < before, "the writes were paid from the node's wallet");
    const found = await call(`${url}/v1/collections/daemon/search`, {
      method: 'POST',
      headers: bearer(READER),
      json: { vector: [1, 0], min_block: upserted.body.block_number },
    });
    assert.deepEqual(
      found.body.results.map((r: { id: string }) => r.id),
      ['a'],
    );
    const tools = await mcpTools(url, bearer(WRITER));
    for (const name of ['arkivector_upsert', 'arkivector_delete']) assert.ok(tools.includes(name), tools.join());
    await assert.rejects(mcpTools(url), 'MCP without a token is refused too');
  });

  test('read-only public node: anyone may read; nothing can be written', async () => {
    const { args } = serveArgs(row('read-only public node').command, devnet.url, tokensFile);
    const gateway = await spawnGateway(args);
    gateways.push(gateway);
    const { url } = gateway;
    assert.equal((await call(`${url}/v1/collections`)).status, 200);
    // "Anyone": a caller that is not local (through a proxy: a loopback node trusts only local callers).
    const remote = { 'x-forwarded-for': '203.0.113.9' };
    assert.equal((await call(`${url}/v1/collections`, { headers: remote })).status, 200);
    assert.equal((await call(`${url}/v1/status`, { headers: remote })).body.signer, null);
    assertProblem(
      await call(`${url}/v1/collections`, { method: 'POST', json: { name: 'x', dim: 2, metric: 'cosine' } }),
      501,
      'signer_not_configured',
    );
    assertProblem(
      await call(`${url}/v1/collections/daemon/entities/a?dry_run=false`, { method: 'DELETE' }),
      501,
      'signer_not_configured',
    );
    const tools = await mcpTools(url);
    assert.ok(tools.includes('arkivector_search'));
    assert.deepEqual(
      tools.filter((name) => /create|upsert|delete/.test(name)),
      [],
    );
  });

  test('agent memory: MCP over stdio with the write tools, read-only without a key', async () => {
    const memory = row('agent memory (one agent host)');
    const { args, env } = serveArgs(
      memory.command.replace('--embedder URL', `--embedder ${embedder.url}`),
      devnet.url,
      tokensFile,
    );
    assert.deepEqual(Object.keys(env), ['ARKIVECTOR_PRIVATE_KEY']);
    assert.deepEqual(args.slice(0, 1), ['--stdio']);
    const withKey = await startStdioNode(args.slice(1), { ARKIVECTOR_PRIVATE_KEY: key });
    const withoutKey = await startStdioNode(args.slice(1));
    try {
      const names = (await withKey.client.listTools()).tools.map((t) => t.name);
      for (const name of ['arkivector_create_collection', 'arkivector_upsert', 'arkivector_delete'])
        assert.ok(names.includes(name), names.join());
      const readOnly = (await withoutKey.client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(
        readOnly.filter((name) => /create|upsert|delete/.test(name)),
        [],
      );
      // It writes and searches text (the embedder of the command line).
      ok(
        await withKey.client.callTool({
          name: 'arkivector_create_collection',
          arguments: { name: 'memory', metric: 'cosine', wait: 'indexed' },
        }),
      );
      const written = ok<{ block_number: number }>(
        await withKey.client.callTool({
          name: 'arkivector_upsert',
          arguments: { collection: 'memory', entities: [{ id: 'pet', document: 'the cat is called Miso' }] },
        }),
      );
      const found = ok<{ results: { id: string }[] }>(
        await withoutKey.client.callTool({
          name: 'arkivector_search',
          arguments: { collection: 'memory', text: 'cat', min_block: written.block_number },
        }),
      );
      assert.deepEqual(
        found.results.map((r) => r.id),
        ['pet'],
      );
    } finally {
      await withKey.client.close();
      await withoutKey.client.close();
    }
  });
});
