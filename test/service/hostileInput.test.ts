// Bad numbers and deep input (issue 8, item 8): query vectors outside the documented range, and `where` /
// JSON `filter` nesting far past the depth limit, answer invalid_argument / invalid_filter on REST and MCP
// (they used to answer null distances, a 500, or overflow the stack).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CollectionStore, QUERY_VALUE_MAX } from '../../src/engine/index.ts';
import { FILTER_DEPTH_MAX, FILTER_IN_VALUES_MAX, FILTER_TERMS_MAX } from '../../src/query/index.ts';
import { assertProblem, call, startChain, type Chain, type Node } from '../http/fixture.ts';
import { definition, makeRecord } from '../engine/helpers.ts';

const deepWhere = (depth: number) => `${'('.repeat(depth)}stars > 1${')'.repeat(depth)}`;
/** As JSON text: JSON.stringify itself overflows the stack on such objects, a hostile client does not need it. */
const deepFilterText = (depth: number): string => {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '{"not":' : '{"and":[';
    close = (i % 2 ? '}' : ']}') + close;
  }
  return `${open}{"gt":{"stars":1}}${close}`;
};

describe('hostile numbers and nesting', () => {
  let chain: Chain;
  let node: Node;
  let client: Client;

  before(async () => {
    chain = await startChain();
    node = await chain.node();
    client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await chain?.close();
  });

  const search = (body: unknown) => call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: body });
  const mcpProblem = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
    return JSON.parse((r.content[0] as { text: string }).text) as { code: string; status: number };
  };

  test('query vectors outside ±QUERY_VALUE_MAX (or overflowing to Infinity) are invalid_argument', async () => {
    for (const v of [1e39, -3.5e38, QUERY_VALUE_MAX * 10]) {
      assertProblem(await search({ vector: [v, 0, 0, 0], k: 2 }), 400, 'invalid_argument');
      const p = await mcpProblem('arkivector_search', { collection: 'notes', vector: [0, v, 0, 0] });
      assert.deepEqual([p.code, p.status], ['invalid_argument', 400]);
    }
    // 1e400 is Infinity once parsed: the raw body, as a hostile client would send it.
    const raw = await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"vector":[1e400,0,0,0],"k":2}',
    });
    assertProblem(raw, 400, 'invalid_argument');
    // At the limit the answer is finite.
    const edge = await search({ vector: [QUERY_VALUE_MAX, 0, 0, 0], k: 2 });
    assert.equal(edge.status, 200, JSON.stringify(edge.body));
    for (const r of edge.body.results) assert.ok(Number.isFinite(r.distance) && Number.isFinite(r.score));
  });

  test('the engine itself refuses such vectors, for every metric (l2 used to return no results)', async () => {
    for (const metric of ['l2', 'ip', 'cosine'] as const) {
      const store = new CollectionStore('m', definition(2, {}, metric));
      await store.apply({ remove: [], upsert: [makeRecord(1, [1, 0]), makeRecord(2, [0, 1])] });
      assert.throws(() => store.search({ vector: [1e39, 0], k: 1 }), { code: 'invalid_argument' });
      assert.throws(() => store.search({ vector: [Number.NaN, 0], k: 1 }), { code: 'invalid_argument' });
      assert.throws(() => store.hybridSearch({ vector: [Infinity, 0], text: 'x', k: 1 }), {
        code: 'invalid_argument',
      });
    }
  });

  test(`where nested past ${FILTER_DEPTH_MAX} groups (2,000) is invalid_filter, not a stack overflow`, async () => {
    const ok = await search({ vector: [1, 0, 0, 0], k: 2, where: deepWhere(FILTER_DEPTH_MAX) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    for (const depth of [FILTER_DEPTH_MAX + 1, 2000]) {
      const where = deepWhere(depth).slice(0, 4096);
      const answer = await search({ vector: [1, 0, 0, 0], k: 2, where });
      assertProblem(answer, 400, 'invalid_filter');
      assert.equal(typeof answer.body.position, 'number');
    }
    const negated = `${'!('.repeat(1500)}stars > 1${')'.repeat(1500)}`.slice(0, 4096);
    assertProblem(
      await call(`${node.url}/v1/collections/notes/count`, { method: 'POST', json: { where: negated } }),
      400,
      'invalid_filter',
    );
    const p = await mcpProblem('arkivector_count', { collection: 'notes', where: deepWhere(1000) });
    assert.equal(p.code, 'invalid_filter');
  });

  test(`where with more than ${FILTER_TERMS_MAX} conditions is invalid_filter`, async () => {
    const many = (n: number) => Array.from({ length: n }, () => 'stars>1').join('||');
    assert.equal(
      (
        await call(`${node.url}/v1/collections/notes/count`, {
          method: 'POST',
          json: { where: many(FILTER_TERMS_MAX) },
        })
      ).status,
      200,
    );
    assertProblem(
      await call(`${node.url}/v1/collections/notes/count`, {
        method: 'POST',
        json: { where: many(FILTER_TERMS_MAX + 1) },
      }),
      400,
      'invalid_filter',
    );
  });

  test('a JSON filter nested 5,000 deep is invalid_filter with its path, on REST and MCP', async () => {
    const post = (path: string, body: string) =>
      call(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const ok = await post(
      '/v1/collections/notes/search',
      `{"vector":[1,0,0,0],"filter":${deepFilterText(FILTER_DEPTH_MAX)}}`,
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    for (const depth of [FILTER_DEPTH_MAX + 1, 5000]) {
      const answer = await post(
        '/v1/collections/notes/search',
        `{"vector":[1,0,0,0],"filter":${deepFilterText(depth)}}`,
      );
      assertProblem(answer, 400, 'invalid_filter');
      assert.equal(typeof answer.body.path, 'string');
    }
    const mcp = await call(`${node.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"arkivector_count","arguments":{"collection":"notes","filter":${deepFilterText(5000)}}}}`,
    });
    assert.equal(mcp.status, 200);
    const text = typeof mcp.body === 'string' ? mcp.body : JSON.stringify(mcp.body);
    assert.match(text, /invalid_filter/);
    const wide = { or: Array.from({ length: FILTER_TERMS_MAX + 1 }, () => ({ gt: { stars: 1 } })) };
    assertProblem(
      await call(`${node.url}/v1/collections/notes/count`, { method: 'POST', json: { filter: wide } }),
      400,
      'invalid_filter',
    );
  });

  test(`more than ${FILTER_IN_VALUES_MAX} values in the IN lists of a where or the in arrays of a filter is invalid_filter`, async () => {
    const count = (body: unknown) => call(`${node.url}/v1/collections/notes/count`, { method: 'POST', json: body });
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    const want = (await count({ filter: { eq: { stars: 1 } } })).body.count;
    assert.equal(typeof want, 'number');
    // At the limit: answered, and the same as the one value they repeat.
    const atLimit = [
      { filter: { in: { stars: ones(FILTER_IN_VALUES_MAX) } } },
      { where: `stars IN (${ones(FILTER_IN_VALUES_MAX).join(' ')})` },
    ];
    for (const body of atLimit) {
      const r = await count(body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.count, want);
    }
    // One past it, in one list or spread over two.
    const half = FILTER_IN_VALUES_MAX / 2;
    const past = [
      { filter: { in: { stars: ones(FILTER_IN_VALUES_MAX + 1) } } },
      { filter: { or: [{ in: { stars: ones(half) } }, { not: { in: { stars: ones(half + 1) } } }] } },
      { where: `stars IN (${ones(FILTER_IN_VALUES_MAX + 1).join(' ')})` },
      { where: `stars IN (${ones(half).join(' ')}) || stars NOT IN (${ones(half + 1).join(' ')})` },
    ];
    for (const body of past) {
      const r = await count(body);
      assertProblem(r, 400, 'invalid_filter');
      assert.match(String(r.body.detail), new RegExp(`more than ${FILTER_IN_VALUES_MAX} values`));
    }
    const p = await mcpProblem('arkivector_count', {
      collection: 'notes',
      filter: { in: { stars: ones(FILTER_IN_VALUES_MAX + 1) } },
    });
    assert.equal(p.code, 'invalid_filter');
  });

  test('papercuts (issue 14): bare true/false on a bool attribute; a search without vector and text says so', async () => {
    const store = new CollectionStore('flags', definition(2, { featured: 'bool' }));
    await store.apply({
      remove: [],
      upsert: [makeRecord(1, [1, 0], { featured: true }), makeRecord(2, [0, 1], { featured: false })],
    });
    assert.equal(store.count({ where: 'featured = true' }), 1);
    assert.equal(store.count({ where: 'featured != true' }), 1);
    assert.equal(store.count({ where: 'featured IN (true false)' }), 2);
    assert.equal(store.search({ vector: [0, 1], k: 2, where: 'featured = false' }).results[0]?.record.id, 'id-2');
    assert.throws(() => store.count({ where: 'featured = yes' }), { code: 'invalid_filter' });

    const rest = await search({ k: 2 });
    assertProblem(rest, 400, 'invalid_argument');
    assert.match(rest.body.detail, /vector or text/);
    const p = await mcpProblem('arkivector_search', { collection: 'notes' });
    assert.equal(p.code, 'invalid_argument');
    assert.match((p as unknown as { detail: string }).detail, /vector or text: one of them is required/);
  });
});
