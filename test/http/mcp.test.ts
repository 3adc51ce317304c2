// MCP streamable HTTP on /mcp (stateless) through the SDK's real Client: the tool list with annotations
// and output schemas, tool results whose structuredContent equals the REST body of the same request,
// errors as problem objects, 405 for GET/DELETE, bearer tokens, and tool metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MAX_BATCH_SIZE as MCP_BATCH_MAX } from '@modelcontextprotocol/sdk/server/requestBody.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadAccessPolicy } from '../../src/http/index.ts';
import { assertProblem, call, startChain, type Chain, type Node } from './fixture.ts';

const READ_TOOLS = [
  'arkivector_count',
  'arkivector_get',
  'arkivector_list_collections',
  'arkivector_list_entities',
  'arkivector_search',
];

/**
 * The MCP answer equals the REST answer of the same request, asked a moment later. `sync_state` alone may
 * move between the two on a loaded machine (`stalled` three block times of 0.2 s after the last step), so it
 * is compared as one of the states rather than equal.
 */
function assertSameAnswer(viaMcp: unknown, viaRest: unknown): void {
  const { sync_state: mcpState, ...mcp } = viaMcp as { sync_state?: string };
  const { sync_state: restState, ...rest } = viaRest as { sync_state?: string };
  assert.deepEqual(mcp, rest);
  for (const state of [mcpState, restState])
    assert.ok(['live', 'stalled', 'catching_up'].includes(String(state)), String(state));
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'arkivector-http-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

describe('http: MCP streamable HTTP', () => {
  let chain: Chain;
  let node: Node;
  let client: Client;

  before(async () => {
    chain = await startChain();
    node = await chain.node();
    client = await connect(node.url);
  });
  after(async () => {
    await client.close();
    await chain.close();
  });

  const callTool = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  test('tools/list: names, read-only annotations and output schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), READ_TOOLS);
    for (const tool of tools) {
      assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      assert.equal(tool.annotations?.openWorldHint, false, tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok(
        tool.outputSchema?.properties && 'as_of_block' in tool.outputSchema.properties,
        `${tool.name} declares as_of_block`,
      );
    }
    const search = tools.find((t) => t.name === 'arkivector_search')!;
    assert.ok(search.inputSchema.properties && 'vector' in search.inputSchema.properties);
    assert.ok(search.outputSchema?.properties && 'search_mode' in search.outputSchema.properties);
  });

  test('tools/call: structuredContent equals the REST body of the same request', async () => {
    const args = { vector: [1, 0.05, 0, 0], k: 2, where: "topic = str('pets')", include_document: true };
    const viaMcp = await callTool('arkivector_search', { collection: 'notes', ...args });
    const viaRest = await call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: args });
    assert.equal(viaMcp.isError, false, 'isError is sent on successes too');
    assertSameAnswer(viaMcp.structuredContent, viaRest.body);
    assert.equal(viaMcp.content.length, 1);
    assert.match((viaMcp.content[0] as { text: string }).text, /^2 result\(s\) as of block/);

    const count = await callTool('arkivector_count', { collection: 'notes', where: 'stars >= 4' });
    assertSameAnswer(
      count.structuredContent,
      (await call(`${node.url}/v1/collections/notes/count`, { method: 'POST', json: { where: 'stars >= 4' } })).body,
    );
    assert.equal((count.structuredContent as { count: number }).count, 2);

    const get = await callTool('arkivector_get', { collection: 'notes', ref: 'fern', include_document: true });
    assertSameAnswer(
      get.structuredContent,
      (await call(`${node.url}/v1/collections/notes/entities/fern?include_document=true`)).body,
    );

    const list = await callTool('arkivector_list_collections', {});
    assertSameAnswer(list.structuredContent, (await call(`${node.url}/v1/collections`)).body);
  });

  test('error: a failing tool call is an isError result carrying the REST problem object', async () => {
    const result = await callTool('arkivector_search', { collection: 'notes', vector: [1, 0] });
    assert.equal(result.isError, true);
    const problem = JSON.parse((result.content[0] as { text: string }).text);
    const rest = await call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: { vector: [1, 0] } });
    assert.deepEqual(problem, rest.body);
    assert.equal(problem.code, 'dimension_mismatch');
  });

  test('GET and DELETE /mcp answer 405 in stateless mode', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await call(`${node.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'POST');
      assert.equal(answer.body.jsonrpc, '2.0');
    }
  });

  test('behavior: a malformed JSON-RPC body gets a JSON-RPC error, not a crash', async () => {
    const answer = await call(`${node.url}/mcp`, {
      method: 'POST',
      body: '{',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, -32700);
  });

  test("limits: a JSON-RPC batch holds at most 100 messages (the SDK's MAX_BATCH_SIZE, README)", async () => {
    const batch = (n: number) =>
      call(`${node.url}/mcp`, {
        method: 'POST',
        json: Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })),
        headers: { accept: 'application/json, text/event-stream' },
      });
    // The README's number: a change of the SDK's cap must change the README too.
    assert.equal(MCP_BATCH_MAX, 100);
    const atCap = await batch(MCP_BATCH_MAX);
    assert.equal(atCap.status, 200);
    const over = await batch(MCP_BATCH_MAX + 1);
    assert.equal(over.status, 400);
    assert.equal(over.body.error.code, -32600);
    assert.match(over.body.error.message, new RegExp(`exceed ${MCP_BATCH_MAX} messages`));
  });

  test('/metrics: tool calls by tool and outcome', async () => {
    await callTool('arkivector_count', { collection: 'nope' });
    const text = (await call(`${node.url}/metrics`)).body as string;
    assert.match(text, /arkivector_mcp_tool_calls_total\{tool="arkivector_search",outcome="ok"\} [1-9]/);
    assert.match(text, /arkivector_mcp_tool_calls_total\{tool="arkivector_search",outcome="error"\} [1-9]/);
    assert.match(text, /arkivector_mcp_tool_calls_total\{tool="arkivector_count",outcome="error"\} [1-9]/);
    assert.match(text, /arkivector_mcp_tool_call_duration_seconds_count\{tool="arkivector_get",outcome="ok"\} [1-9]/);
    assert.match(text, /arkivector_http_requests_total\{method="POST",route="\/mcp",status="200"\} [1-9]/);
  });

  test('access: bearer tokens on /mcp', async () => {
    const guarded = await chain.node({
      access: await loadAccessPolicy({ tokensEnv: 'read:mcp-reader', publicRead: false, host: '0.0.0.0' }),
    });
    assertProblem(
      await call(`${guarded.url}/mcp`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
      401,
      'unauthorized',
    );
    await assert.rejects(connect(guarded.url), /401|nauthorized/);
    const authed = await connect(guarded.url, { authorization: 'Bearer mcp-reader' });
    try {
      const { tools } = await authed.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), READ_TOOLS);
      const count = (await authed.callTool({
        name: 'arkivector_count',
        arguments: { collection: 'notes' },
      })) as CallToolResult;
      assert.equal((count.structuredContent as { count: number }).count, 4);
    } finally {
      await authed.close();
    }
  });
});
