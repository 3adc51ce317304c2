// Fuzzing the surface (issue 8 item 13): generated argument sets for every MCP tool (through the SDK's
// real Client over streamable HTTP) and every REST route, each answered with success or a documented
// problem object: never a crash, a hang, a 5xx other than the documented 501/503s, or a NaN. Short mode
// in `npm test`; ARKIVECTOR_FUZZ=long runs 10,000 argument sets per tool and per route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/errors.ts';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp, type HttpServer } from '../../src/http/index.ts';
import { captureLogger, PROBLEM_TYPE, startChain, type Chain } from '../http/fixture.ts';

const LONG = process.env.ARKIVECTOR_FUZZ === 'long';
const RUNS = Number(process.env.ARKIVECTOR_FUZZ_RUNS ?? (LONG ? 10_000 : 100));
const SEED = Number(process.env.ARKIVECTOR_TEST_SEED ?? 20261130);
/** A request that takes longer than this is a hang (min_block waits are capped far below it). */
const ANSWER_TIMEOUT_MS = 30_000;
/** 5xx answers the contract documents for a node like this one (no signer; a chain that is up). */
const DOCUMENTED_5XX = new Set([501, 503]);

// ---- generators: plausible values mixed with hostile ones --------------------------------------
const hostileNumber = fc.oneof(
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -0, 1, -1, 3.4e38, 3.5e38, 1e39, -1e300, 5e-324, 2 ** 53, -(2 ** 63), 1e308),
  fc.integer({ min: -5, max: 60 }),
);
const hostileString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', 'notes', 'cat', 'fern', 'a/b c?#%é', `0x${'ab'.repeat(32)}`, '../../etc', '%00', '\u0000', '💥'),
  fc.string({ minLength: 60, maxLength: 300 }),
);
const anything = fc.anything({ maxDepth: 3, maxKeys: 4, withNullPrototype: true });
const hugeComponent = fc.constantFrom(1e16, -1e16, 1.0000000000000002e16, 3.5e38, -3.5e38, 1e39, 1e308, -1e308);
// Mostly ordinary values, sometimes beyond the engine's query range (QUERY_VALUE_MAX) or float32's.
const component = fc.oneof(
  { arbitrary: fc.double({ min: -1e4, max: 1e4, noNaN: true }), weight: 8 },
  fc.constantFrom(0, -0, 1, -1, 5e-324, -5e-324, 65504, 70000, 2 ** 31),
  hugeComponent,
);
const vector = fc.oneof(
  { arbitrary: fc.array(component, { minLength: 4, maxLength: 4 }), weight: 4 },
  fc.array(hostileNumber, { minLength: 0, maxLength: 3 }),
  fc.array(hostileNumber, { minLength: 5, maxLength: 6 }),
  fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
  anything,
);
const where = fc.oneof(
  fc.constantFrom(
    "topic = str('pets')",
    'stars >= 4',
    '(topic = "pets" || topic = "plants") && !(stars < 2)',
    'nope = 1',
    'stars = "x"',
    '((((((',
    '$owner = 0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'topic ~ "p*"',
    'stars IN (1 2 3)',
  ),
  fc.string({ maxLength: 40 }),
  anything,
);
const filter = fc.oneof(
  fc.constantFrom({ eq: { topic: 'pets' } }, { gte: { stars: 4 } }, { and: [] }, { not: { in: { stars: [1, 2] } } }),
  fc.dictionary(fc.constantFrom('eq', 'ne', 'gt', 'in', 'glob', 'and', 'or', 'not', 'zz'), anything, { maxKeys: 2 }),
  anything,
);
const minBlock = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(-1, 1.5, 'x', null, 1e20));
const collection = fc.oneof({ arbitrary: fc.constant('notes'), weight: 6 }, hostileString, anything);
const ref = fc.oneof(fc.constantFrom('cat', 'dog', 'fern', 'a/b c?#%é'), hostileString, anything);
const mode = fc.oneof(fc.constantFrom('vector', 'semantic', 'keyword', 'hybrid'), anything);
const k = fc.oneof(fc.integer({ min: 0, max: 60 }), hostileNumber, anything);

/** An argument object with some of `fields`, and sometimes a stray key. */
const args = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      fc.record(fields, { requiredKeys: [] }),
      fc.option(fc.tuple(fc.string({ maxLength: 8 }), anything), { nil: undefined }),
    )
    .map(([record, stray]) => (stray ? { ...record, [stray[0]]: stray[1] } : record) as Record<string, unknown>);

const searchArgs = args({
  collection,
  vector,
  text: fc.oneof(fc.constantFrom('cats', 'purr', ''), hostileString),
  mode,
  k,
  where,
  filter,
  include_document: fc.oneof(fc.boolean(), anything),
  min_block: minBlock,
});
const countArgs = args({ collection, where, filter, min_block: minBlock });
const getArgs = args({ collection, ref, include_document: fc.oneof(fc.boolean(), anything), min_block: minBlock });
const listArgs = args({ min_block: minBlock });
const upsertArgs = args({
  collection,
  entities: fc.oneof(
    fc.array(args({ id: hostileString, vector, document: hostileString, attributes: anything, ttl: anything }), {
      maxLength: 3,
    }),
    anything,
  ),
  wait: fc.oneof(fc.constantFrom('indexed', 'receipt', 'none'), anything),
});
const deleteArgs = args({ collection, refs: fc.oneof(fc.array(ref, { maxLength: 3 }), anything), dry_run: anything });
// Cursors: hostile text, base64url of arbitrary JSON, and well-formed ones for blocks the node never had.
const cursor = fc.oneof(
  hostileString,
  anything.map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
  fc
    .record({
      v: fc.constantFrom(1, 2),
      b: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constantFrom(-1, 2 ** 60)),
      m: fc.integer({ min: 0, max: 50 }),
      k: fc.constantFrom(`0x${'ab'.repeat(32)}`, 'cat'),
      q: fc.constantFrom('0123456789abcdef', 'zz'),
    })
    .map((c) => Buffer.from(JSON.stringify(c)).toString('base64url')),
);
const listEntitiesArgs = args({
  collection,
  where,
  filter,
  limit: k,
  cursor,
  order: fc.oneof(fc.constantFrom('newest', 'oldest'), anything),
  include_document: fc.oneof(fc.boolean(), anything),
  min_block: minBlock,
});
const deleteWhereArgs = args({ collection, where, filter, dry_run: anything });
const createArgs = args({
  name: collection,
  dim: k,
  metric: fc.oneof(fc.constantFrom('cosine', 'l2', 'ip'), anything),
  attributes: anything,
  open: anything,
});
const ragArgs = args({
  db: collection,
  q: hostileString,
  mode: fc.oneof(fc.constantFrom('keyword', 'semantic', 'both'), anything),
  limit: k,
});

/** A generated value as URL text (objects as JSON: String() throws on null-prototype objects). */
const seg = (value: unknown) => encodeURIComponent(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

// ---- checks ----------------------------------------------------------------------------------------
/** Every number in a successful answer is finite (JSON turns NaN/Infinity into null: no nulls where numbers go). */
function assertFiniteNumbers(value: unknown, path = '$'): void {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${path} is ${value}`);
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) assertFiniteNumbers(v, `${path}[${i}]`);
  else if (value && typeof value === 'object')
    for (const [key, v] of Object.entries(value)) {
      if (['score', 'distance', 'count', 'as_of_block'].includes(key))
        assert.equal(typeof v, 'number', `${path}.${key} is ${JSON.stringify(v)}`);
      assertFiniteNumbers(v, `${path}.${key}`);
    }
}

function assertDocumentedProblem(problem: Record<string, unknown>, status: number, where: string): void {
  const code = problem.code as keyof typeof ERROR_STATUS;
  assert.ok(Object.hasOwn(ERROR_STATUS, code), `${where}: undocumented code ${String(code)}`);
  assert.equal(problem.status, status, `${where}: status`);
  assert.equal(ERROR_STATUS[code], status, `${where}: ${code} answered with ${status}`);
  assert.notEqual(code, 'internal', `${where}: internal error: ${JSON.stringify(problem)}`);
  assert.ok(status < 500 || DOCUMENTED_5XX.has(status), `${where}: ${status} ${JSON.stringify(problem)}`);
  assert.equal(typeof problem.detail, 'string');
  if (code === 'invalid_argument') assert.ok(Array.isArray(problem.errors), `${where}: errors list`);
}

describe(`fuzz: the MCP and REST surface (${RUNS} argument sets each, seed ${SEED})`, () => {
  let chain: Chain;
  let server: HttpServer;
  let client: Client;
  const { lines, logger } = captureLogger();

  before(async () => {
    chain = await startChain();
    // min_block waits are cut short so a generated future block cannot stall the run.
    const ctx = { ...chain.ctx, minBlockTimeoutMs: 20 };
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const app = createHttpApp({
      ctx,
      access,
      metrics: createMetrics(ctx),
      logger,
      mcp: { ctx, logger, compat: 'kuradb' },
    });
    server = await serveHttp({ host: '127.0.0.1', port: 0, app });
    client = new Client({ name: 'arkivector-fuzz', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await client.close();
    await server.close();
    await chain.close();
    // A caller's mistake is never a server error in the log.
    assert.deepEqual(
      lines.filter((l) => l.level === 'error'),
      [],
    );
  });

  const tools: [string, fc.Arbitrary<Record<string, unknown>>][] = [
    ['arkivector_list_collections', listArgs],
    ['arkivector_search', searchArgs],
    ['arkivector_get', getArgs],
    ['arkivector_count', countArgs],
    ['arkivector_list_entities', listEntitiesArgs],
    ['arkivector_upsert', upsertArgs],
    ['arkivector_delete', deleteArgs],
    ['list_rag', args({})],
    ['search_rag', ragArgs],
  ];
  for (const [name, arbitrary] of tools) {
    test(`MCP ${name}`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async (input) => {
          const result = (await client.callTool({ name, arguments: input }, undefined, {
            timeout: ANSWER_TIMEOUT_MS,
          })) as CallToolResult;
          const text = (result.content[0] as { text: string }).text;
          if (result.isError) {
            // KuraDB's tools answer KuraDB's plain strings (tools/kuradb.ts), the others a problem object.
            if (name.endsWith('_rag')) assert.match(text, /^(invalid argument|[a-z])/);
            else assertDocumentedProblem(JSON.parse(text), JSON.parse(text).status, `${name} ${JSON.stringify(input)}`);
          } else {
            assert.ok(!/\bNaN\b/.test(text), `${name}: NaN in ${text}`);
            assertFiniteNumbers(result.structuredContent);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
      );
    });
  }

  test('search vectors with components outside float32 range: invalid_argument, never NaN', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(component, hugeComponent), { minLength: 4, maxLength: 4 }), async (v) => {
        const result = (await client.callTool({
          name: 'arkivector_search',
          arguments: { collection: 'notes', vector: v, k: 3 },
        })) as CallToolResult;
        const text = (result.content[0] as { text: string }).text;
        if (result.isError) assertDocumentedProblem(JSON.parse(text), JSON.parse(text).status, JSON.stringify(v));
        else assert.ok(!/\bNaN\b/.test(text), `NaN for ${JSON.stringify(v)}: ${text}`);
      }),
      { numRuns: Math.min(RUNS, 200), seed: SEED, includeErrorInReport: true },
    );
  });

  const routes: [
    string,
    string,
    (input: Record<string, unknown>) => { path: string; body?: string },
    fc.Arbitrary<Record<string, unknown>>,
  ][] = [
    ['GET', '/v1/collections', (a) => ({ path: `/v1/collections?min_block=${seg(a.min_block)}` }), listArgs],
    [
      'GET',
      '/v1/collections/:c',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}?min_block=${seg(a.min_block)}`,
      }),
      countArgs,
    ],
    [
      'POST',
      '/v1/collections/:c/search',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/search`,
        body: JSON.stringify({ ...a, collection: undefined }),
      }),
      searchArgs,
    ],
    [
      'POST',
      '/v1/collections/:c/count',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/count`,
        body: JSON.stringify({ ...a, collection: undefined }),
      }),
      countArgs,
    ],
    [
      'GET',
      '/v1/collections/:c/entities/:ref',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/entities/${seg(a.ref)}?include_document=${seg(a.include_document)}`,
      }),
      getArgs,
    ],
    ['POST', '/v1/collections', (a) => ({ path: '/v1/collections', body: JSON.stringify(a) }), createArgs],
    [
      'POST',
      '/v1/collections/:c/entities',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/entities`,
        body: JSON.stringify(a),
      }),
      upsertArgs,
    ],
    [
      'DELETE',
      '/v1/collections/:c/entities/:ref',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/entities/${seg(a.ref)}?dry_run=${seg(a.dry_run)}`,
      }),
      args({ collection, ref, dry_run: anything }),
    ],
    [
      'GET',
      '/v1/collections/:c/entities',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/entities?${[
          'where',
          'filter',
          'limit',
          'cursor',
          'order',
          'include_document',
          'min_block',
        ]
          .filter((name) => a[name] !== undefined)
          .map((name) => `${name}=${seg(a[name])}`)
          .join('&')}`,
      }),
      listEntitiesArgs,
    ],
    [
      'DELETE',
      '/v1/collections/:c/entities',
      (a) => ({
        path: `/v1/collections/${seg(a.collection)}/entities?where=${seg(a.where)}&filter=${seg(a.filter)}&dry_run=${seg(a.dry_run)}`,
      }),
      deleteWhereArgs,
    ],
    ['GET', '/v1/status', () => ({ path: '/v1/status' }), args({})],
  ];
  test('REST GET /api/search (KuraDB): 200 with the branches, else 400/500 {"error"}', async () => {
    await fc.assert(
      fc.asyncProperty(ragArgs, async (a) => {
        const query = ['db', 'q', 'mode', 'limit']
          .filter((name) => a[name] !== undefined)
          .map((name) => `${name === 'mode' ? 'target' : name}=${seg(a[name])}`)
          .join('&');
        const response = await fetch(`${server.url}/api/search?${query}`, {
          signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        });
        const body = JSON.parse(await response.text()) as Record<string, unknown>;
        if (response.status === 200) {
          for (const key of Object.keys(body)) assert.ok(key === 'keyword' || key === 'semantic', query);
          assertFiniteNumbers(body);
        } else {
          assert.ok(response.status === 400 || response.status === 500, `${response.status} ${query}`);
          assert.deepEqual(Object.keys(body), ['error'], query);
          assert.equal(typeof body.error, 'string', query);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  });

  // Raw bodies that are not JSON objects reach the same parser.
  const rawBody = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', '[]', 'null', '"x"', '{', '\u0000', '{"k":1e999}'),
  );
  for (const [method, template, request, arbitrary] of routes) {
    test(`REST ${method} ${template}`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, fc.option(rawBody, { freq: 8, nil: undefined }), async (input, raw) => {
          const { path, body } = request(input);
          const response = await fetch(`${server.url}${path}`, {
            method,
            headers: { 'content-type': 'application/json' },
            body: method === 'POST' ? (raw ?? body) : undefined,
            signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
          });
          const text = await response.text();
          const where = `${method} ${path} ${raw ?? body ?? ''}`.slice(0, 500);
          if (response.status === 200) {
            assert.ok(!/\bNaN\b/.test(text), `${where}: NaN`);
            assertFiniteNumbers(JSON.parse(text));
          } else {
            assert.equal(response.headers.get('content-type'), PROBLEM_TYPE, where);
            assertDocumentedProblem(JSON.parse(text), response.status, where);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
      );
    });
  }
});
