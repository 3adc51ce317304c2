// Plain tools/call requests on /mcp (tools/plainCall.ts) are answered without a server of their own:
// their answer is byte for byte the one the SDK's server gives (the same request with an empty _meta goes
// through it), and nothing of one caller reaches another's call made at the same time: not its scopes,
// not its JSON-RPC id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { loadAccessPolicy } from '../../src/http/index.ts';
import { startChain, STUB_WRITER, type Chain, type Node } from './fixture.ts';

const READER = 'plain-reader-secret';
const WRITER = 'plain-writer-secret';
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
};

/** One raw POST to /mcp: status, content type and the body as sent. */
async function post(url: string, token: string, message: unknown) {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify(message),
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** sync_state (and the text's "sync …") may move between two requests on a loaded machine. */
const steady = (text: string) => text.replace(/"sync_state":"\w+"/g, '"sync_state":_').replace(/sync \w+/g, 'sync _');

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'plain-call-test', version: '0.0.0' });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const problemCode = (result: unknown) => {
  const r = result as CallToolResult;
  return r.isError ? (JSON.parse((r.content[0] as { text: string }).text) as { code: string }).code : 'ok';
};

describe('http: plain tools/call on /mcp', () => {
  let chain: Chain;
  let node: Node;

  before(async () => {
    chain = await startChain();
    // A signer that only says it exists: write calls are authorized and validated, never signed here.
    node = await chain.node({
      ctx: { writer: STUB_WRITER },
      access: await loadAccessPolicy({
        tokensEnv: `read:${READER},read+write:${WRITER}`,
        publicRead: false,
        host: '127.0.0.1',
      }),
    });
  });
  after(async () => chain.close());

  const vector = fc.array(fc.oneof(fc.double({ min: -2, max: 2, noNaN: true }), fc.constant(0)), {
    minLength: 0,
    maxLength: 5,
  });
  const where = fc.constantFrom(undefined, "topic = str('pets')", 'stars >= 4', 'stars >>= 4', 'nope = 1');
  const call = fc.oneof(
    fc.record({
      name: fc.constant('arkivector_search'),
      arguments: fc.record(
        {
          collection: fc.constantFrom('notes', 'missing'),
          vector,
          k: fc.integer({ min: -1, max: 12 }),
          where,
          include_document: fc.boolean(),
        },
        { requiredKeys: ['collection'] },
      ),
    }),
    fc.record({
      name: fc.constant('arkivector_count'),
      arguments: fc.record({ collection: fc.constantFrom('notes', 'missing'), where }, { requiredKeys: [] }),
    }),
    fc.record({
      name: fc.constantFrom('arkivector_get', 'arkivector_list_entities', 'arkivector_list_collections'),
      arguments: fc.record(
        { collection: fc.constant('notes'), ref: fc.constantFrom('cat', 'fern', 'gone'), limit: fc.integer() },
        { requiredKeys: [] },
      ),
    }),
    // Write tools: authorized by scope, then refused by validation (the stub signer never signs).
    fc.record({
      name: fc.constantFrom('arkivector_upsert', 'arkivector_delete', 'arkivector_create_collection'),
      arguments: fc.record({ collection: fc.constant('notes'), entities: fc.constant('x') }, { requiredKeys: [] }),
    }),
    // Not plain: unknown tools and arguments the SDK's schema refuses take the SDK's path both times.
    fc.record({ name: fc.constantFrom('arkivector_nope'), arguments: fc.constant({}) }),
    fc.record({ name: fc.constant('arkivector_count'), arguments: fc.constantFrom(null, [], 'notes') }),
  );

  test('a plain call answers the bytes the SDK server answers for it', async () => {
    await fc.assert(
      fc.asyncProperty(
        call,
        fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.string({ maxLength: 8 })),
        fc.constantFrom(READER, WRITER),
        async (params, id, token) => {
          const plain = await post(node.url, token, { jsonrpc: '2.0', id, method: 'tools/call', params });
          const viaSdk = await post(node.url, token, {
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { ...params, _meta: {} },
          });
          assert.equal(plain.status, viaSdk.status);
          assert.equal(plain.type, viaSdk.type);
          assert.equal(steady(plain.text), steady(viaSdk.text));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('concurrent callers with different scopes each get their own tools and authorization', async () => {
    const reader = await connect(node.url, READER);
    const writer = await connect(node.url, WRITER);
    try {
      const rounds = Array.from({ length: 12 }, async () => {
        const [readerTools, writerTools, readerWrite, writerWrite, readerRead] = await Promise.all([
          reader.listTools(),
          writer.listTools(),
          reader.callTool({ name: 'arkivector_upsert', arguments: { collection: 'notes' } }),
          writer.callTool({ name: 'arkivector_upsert', arguments: { collection: 'notes' } }),
          reader.callTool({ name: 'arkivector_count', arguments: { collection: 'notes' } }),
        ]);
        assert.equal(
          readerTools.tools.some((t) => t.name === 'arkivector_upsert'),
          false,
        );
        assert.equal(
          writerTools.tools.some((t) => t.name === 'arkivector_upsert'),
          true,
        );
        assert.equal(problemCode(readerWrite), 'forbidden');
        assert.equal(problemCode(writerWrite), 'invalid_argument');
        assert.equal(problemCode(readerRead), 'ok');
      });
      await Promise.all(rounds);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  test('concurrent calls with the same JSON-RPC id each get their own answer', async () => {
    // Every session numbers its requests from the same start: the id is only unique within one request.
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        post(node.url, i % 2 ? READER : WRITER, {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'arkivector_search',
            arguments: { collection: 'notes', vector: [1, 0, 0, 0], k: 1 + (i % 4) },
          },
        }),
      ),
    );
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 200);
      const message = JSON.parse(answer.text) as { id: number; result: CallToolResult };
      assert.equal(message.id, 1);
      assert.equal((message.result.structuredContent as { results: unknown[] }).results.length, 1 + (i % 4));
    });
  });
});
