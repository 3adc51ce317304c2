// Tool calls the caller got wrong, through the SDK's real Client over streamable HTTP: a tool that is
// not listed answers the real reason (signer_not_configured, forbidden, or the protocol's unknown-tool
// error), never `internal` and never an error log line; schema errors are the same problem object as
// REST's for the same arguments; per-caller rate limits answer rate_limited with Retry-After.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createArkivV1Writer } from '../../src/chain/index.ts';
import { ArkivectorError, ERROR_STATUS, problemFor } from '../../src/errors.ts';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp } from '../../src/http/index.ts';
import {
  createRateLimiter,
  defaultRateLimit,
  RATE_LIMIT_DEFAULT_PER_MINUTE,
  RateLimitedError,
} from '../../src/http/rateLimit.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { assertProblem, call, captureLogger, startChain, type Chain } from '../http/fixture.ts';
import { defined } from '../helpers/defined.ts';

// Refusals come before the writer is used, so a node that has one only needs its address.
const STUB_WRITER = { address: '0x0000000000000000000000000000000000000001' } as unknown as ServiceContext['writer'];
const READER = 'reader-secret-7f3a';

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'arkivector-calls-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const problemOf = (result: unknown) => {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r));
  return JSON.parse((r.content[0] as { text: string }).text);
};

describe('tools: calls the caller got wrong', () => {
  let chain: Chain;
  const clients: Client[] = [];
  before(async () => {
    chain = await startChain();
  });
  after(async () => {
    for (const c of clients) await c.close();
    await chain.close();
  });
  const open = async (url: string, headers?: Record<string, string>) => {
    const c = await connect(url, headers);
    clients.push(c);
    return c;
  };

  test('write tool on a node without a signer: signer_not_configured (501), nothing logged', async () => {
    const node = await chain.node();
    const client = await open(node.url);
    for (const name of ['arkivector_upsert', 'arkivector_delete']) {
      const problem = problemOf(await client.callTool({ name, arguments: { collection: 'notes' } }));
      assert.deepEqual([problem.code, problem.status], ['signer_not_configured', 501]);
    }
    assert.deepEqual(node.logs, []);
  });

  test('write tool with a read token on a signing node: forbidden (403), nothing logged', async () => {
    const access = await loadAccessPolicy({
      tokensEnv: `read:${READER}`,
      publicRead: false,
      host: '0.0.0.0',
    });
    const node = await chain.node({ access, ctx: { writer: STUB_WRITER } });
    const client = await open(node.url, { authorization: `Bearer ${READER}` });
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === 'arkivector_upsert'));
    const problem = problemOf(await client.callTool({ name: 'arkivector_upsert', arguments: {} }));
    assert.deepEqual([problem.code, problem.status], ['forbidden', 403]);
    assert.deepEqual(node.logs, []);
  });

  test('made-up tool and a compat tool without --compat: the protocol error for an unknown tool', async () => {
    const node = await chain.node();
    const client = await open(node.url);
    for (const name of ['arkivector_nope', 'search_rag']) {
      await assert.rejects(
        client.callTool({ name, arguments: {} }),
        (error: unknown) =>
          error instanceof McpError && error.code === ErrorCode.InvalidParams && /not found/.test(error.message),
      );
    }
    assert.deepEqual(node.logs, []);
  });

  test('schema errors: the same problem object (with its errors list) on MCP and REST', async () => {
    const node = await chain.node();
    const client = await open(node.url);
    const cases: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
      ['arkivector_search', { collection: 'notes', k: 0, vector: [1, 0, 0, 0] }, '/v1/collections/notes/search', {}],
      ['arkivector_search', { collection: 'notes', k: 'ten' }, '/v1/collections/notes/search', {}],
      ['arkivector_count', { collection: 'notes', where: 7 }, '/v1/collections/notes/count', {}],
      ['arkivector_search', { collection: 'notes', vector: 'x', mode: 'warp' }, '/v1/collections/notes/search', {}],
    ];
    for (const [tool, args, path] of cases) {
      const viaMcp = problemOf(await client.callTool({ name: tool, arguments: args }));
      const { collection: _, ...body } = args;
      const viaRest = await call(`${node.url}${path}`, { method: 'POST', json: body });
      assertProblem(viaRest, 400, 'invalid_argument');
      assert.deepEqual(viaMcp, viaRest.body, `${tool} ${JSON.stringify(args)}`);
      assert.ok(Array.isArray(viaMcp.errors) && viaMcp.errors.length > 0, 'errors list');
    }
    assert.deepEqual(node.logs, []);
  });

  test('per-entity upsert errors carry the errors list (and index), the same on MCP and REST', async () => {
    const writer = createArkivV1Writer({
      rpcUrl: chain.devnet.url,
      chainId: chain.devnet.chainId,
      privateKey: defined(chain.devnet.accounts[0], 'chain.devnet.accounts[0]').privateKey,
    });
    const node = await chain.node({ ctx: { writer } });
    const client = await open(node.url);
    const head = chain.devnet.headNumber;
    const entities = [
      { id: 'ok-1', vector: [1, 0, 0, 0] },
      { id: 'short', vector: [1, 0] },
    ];
    const viaMcp = problemOf(
      await client.callTool({ name: 'arkivector_upsert', arguments: { collection: 'notes', entities } }),
    );
    const viaRest = await call(`${node.url}/v1/collections/notes/entities`, { method: 'POST', json: { entities } });
    assertProblem(viaRest, 400, 'dimension_mismatch');
    assert.deepEqual(viaMcp, viaRest.body);
    assert.equal(viaMcp.index, 1);
    assert.deepEqual(
      viaMcp.errors.map((e: { path: string }) => e.path),
      ['entities.1'],
    );
    // Validated whole before anything is signed: no block was mined.
    assert.equal(chain.devnet.headNumber, head);
    assert.deepEqual(node.logs, []);
  });

  test('embedder_unavailable is a documented 502 problem on every surface', () => {
    const problem = problemFor(new ArkivectorError('embedder_unavailable', 'the embedder did not answer'));
    assert.deepEqual(
      [problem?.code, problem?.status, problem?.title],
      ['embedder_unavailable', 502, 'Embedder unavailable'],
    );
    assert.equal(ERROR_STATUS.rate_limited, 429);
  });

  test('rate limits: per token, per IP for anonymous reads; 429 rate_limited with Retry-After', async () => {
    const { logger, lines } = captureLogger();
    const access = await loadAccessPolicy({ tokensEnv: `read:${READER}`, publicRead: true, host: '0.0.0.0' });
    const ctx = chain.ctx;
    const app = createHttpApp({
      ctx,
      access,
      metrics: createMetrics(ctx),
      logger,
      mcp: { ctx, logger },
      rateLimitPerMinute: 2,
    });
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
    try {
      const anon = () => call(`${server.url}/v1/collections`);
      assert.equal((await anon()).status, 200);
      assert.equal((await anon()).status, 200);
      const limited = await anon();
      assertProblem(limited, 429, 'rate_limited');
      assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      // The token has its own bucket, and MCP requests count as well.
      const withToken = { authorization: `Bearer ${READER}` };
      const client = await open(server.url, withToken); // initialize + initialized notification: 2 requests
      await assert.rejects(client.listTools(), /429|rate/i);
      // Probes stay open for load balancers.
      assert.equal((await call(`${server.url}/healthz`)).status, 200);
      assert.notEqual((await call(`${server.url}/readyz`)).status, 429, '/readyz is never limited');
      assert.deepEqual(lines, []);
    } finally {
      await server.close();
    }
  });

  test('the README default: --rate-limit off on a loopback bind, 600 per minute elsewhere', async () => {
    const loopback = await loadAccessPolicy({ publicRead: true, host: '127.0.0.1' });
    const exposed = await loadAccessPolicy({ publicRead: true, host: '0.0.0.0' });
    assert.equal(defaultRateLimit(loopback), 0);
    assert.equal(defaultRateLimit(exposed), 600);
    assert.equal(RATE_LIMIT_DEFAULT_PER_MINUTE, 600);
  });

  test('createRateLimiter: refills with time, bounded burst, 0 is off', () => {
    let now = 0;
    const limiter = createRateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) limiter.take('a');
    assert.throws(
      () => limiter.take('a'),
      (e: unknown) => e instanceof RateLimitedError && e.retryAfterSeconds === 1,
    );
    limiter.take('b');
    now += 1000;
    limiter.take('a');
    assert.throws(() => limiter.take('a'), RateLimitedError);
    now += 3_600_000;
    for (let i = 0; i < 60; i++) limiter.take('a');
    assert.throws(() => limiter.take('a'), RateLimitedError);
    const off = createRateLimiter(0, () => now);
    for (let i = 0; i < 1000; i++) off.take('a');
  });
});
