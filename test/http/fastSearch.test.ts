// The search route's fast path (src/http/fastSearch.ts) answers what the Hono route answers: the same
// status, content type, challenge and body bytes, for answers and for every error the route can give,
// on a real node over a devnet. A query string sends the same request through Hono (the fast path takes
// plain paths only); a counting wrapper around the app's fast path shows which of the two answered.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp, type HttpServer } from '../../src/http/index.ts';
import { type Chain, captureLogger, startChain } from './fixture.ts';

const TOKEN = 'fast-path-reader-0123456789';

let chain: Chain;
const servers: HttpServer[] = [];
let taken = 0;

/** A node whose fast path counts the requests it takes. */
async function node(tokens: boolean): Promise<string> {
  const access = await loadAccessPolicy({
    publicRead: false,
    host: '127.0.0.1',
    ...(tokens ? { tokensEnv: `read:${TOKEN}` } : {}),
  });
  const { logger } = captureLogger();
  const metrics = createMetrics(chain.ctx);
  const app = createHttpApp({ ctx: chain.ctx, access, metrics, logger, mcp: { ctx: chain.ctx, logger } });
  const fast = app.fastPath;
  assert.ok(fast, 'the app registers a fast path');
  app.fastPath = (incoming, outgoing) => {
    const answered = fast(incoming, outgoing);
    if (answered) taken++;
    return answered;
  };
  const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
  servers.push(server);
  return server.url;
}

before(async () => {
  chain = await startChain();
});
after(async () => {
  for (const server of servers) await server.close();
  await chain?.close();
});

interface Answer {
  status: number;
  type: string | null;
  challenge: string | null;
  retry: string | null;
  body: string;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    challenge: response.headers.get('www-authenticate'),
    retry: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

/** The answer of the fast path and of the Hono route to the same request; asserts which path took each. */
async function both(base: string, collection: string, body: string, headers: Record<string, string> = {}) {
  const before = taken;
  const fast = await post(`${base}/v1/collections/${collection}/search`, body, headers);
  assert.equal(taken, before + 1, 'the plain request took the fast path');
  const routed = await post(`${base}/v1/collections/${collection}/search?via=hono`, body, headers);
  assert.equal(taken, before + 1, 'the request with a query string went through Hono');
  return { fast, routed };
}

describe('the search fast path', () => {
  test('answers a search byte for byte as the Hono route does', async () => {
    const base = await node(false);
    for (const body of [
      { vector: [1, 0, 0, 0], k: 3 },
      { vector: [0, 0.2, 1, 0.1], k: 10, include_document: true },
      { vector: [1, 0, 0, 0], k: 2, where: 'topic = "pets"' },
      { text: 'cats', mode: 'keyword', k: 2 },
    ]) {
      const { fast, routed } = await both(base, 'notes', JSON.stringify(body));
      assert.equal(fast.status, 200, fast.body);
      // sync_state can move between two answers at 0.2 s blocks; the rest must be the same bytes.
      const stable = (text: string) => text.replace(/"sync_state":"[a-z]+"/, '');
      assert.deepEqual({ ...fast, body: stable(fast.body) }, { ...routed, body: stable(routed.body) });
    }
  });

  test('answers every error as the Hono route does', async () => {
    const base = await node(false);
    const cases: [string, string][] = [
      ['notes', '{"vector": [1, 0, 0'], // not JSON
      ['notes', '[1, 2]'], // not an object
      ['notes', '{"vector": [1, 0, 0, 0], "k": 0}'], // invalid k
      ['notes', '{"vector": [1, 0]}'], // wrong dimension
      ['notes', '{"k": 3}'], // neither vector nor text
      ['notes', '{"vector": [1, 0, 0, 0], "collection": "other"}'], // body and path disagree
      ['missing', '{"vector": [1, 0, 0, 0]}'], // no such collection
      ['notes', '{"vector": [1, 0, 0, 0], "where": "topic = "}'], // bad filter
      ['notes', ''], // empty body: {} (neither vector nor text)
    ];
    for (const [collection, body] of cases) {
      const { fast, routed } = await both(base, collection, body);
      assert.ok(fast.status >= 400, `${body}: ${fast.status}`);
      assert.deepEqual(fast, routed, body);
    }
  });

  test('refuses tokens and origins as the Hono route does', async () => {
    const base = await node(true);
    const body = JSON.stringify({ vector: [1, 0, 0, 0], k: 1 });
    const cases: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${TOKEN}` },
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: 'Basic abc' },
      { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' },
    ];
    for (const headers of cases) {
      const { fast, routed } = await both(base, 'notes', body, headers);
      const stable = (text: string) => text.replace(/"sync_state":"[a-z]+"/, '');
      assert.deepEqual({ ...fast, body: stable(fast.body) }, { ...routed, body: stable(routed.body) });
    }
  });

  test('leaves requests it does not take to Hono', async () => {
    const base = await node(false);
    const before = taken;
    const body = JSON.stringify({ vector: [1, 0, 0, 0], k: 1 });
    // Chunked (no Content-Length), a percent-encoded name, another method, another route.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    const chunked = await fetch(`${base}/v1/collections/notes/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 200);
    await chunked.text();
    assert.equal((await post(`${base}/v1/collections/n%6Ftes/search`, body)).status, 200);
    assert.equal((await fetch(`${base}/v1/collections/notes/search`)).status, 404);
    assert.equal((await post(`${base}/v1/collections/notes/count`, '{}')).status, 200);
    assert.equal(taken, before);
  });

  test('any JSON body gets the Hono route answer (property)', async () => {
    const base = await node(false);
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            vector: fc.oneof(
              fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 5 }),
              fc.jsonValue(),
            ),
            k: fc.oneof(fc.integer({ min: -1, max: 12 }), fc.jsonValue()),
            mode: fc.constantFrom('vector', 'keyword', 'semantic', 'hybrid', 'other'),
            text: fc.string({ maxLength: 8 }),
          },
          { requiredKeys: [] },
        ),
        async (args) => {
          const { fast, routed } = await both(base, 'notes', JSON.stringify(args));
          const stable = (text: string) => text.replace(/"sync_state":"[a-z]+"/, '');
          assert.deepEqual({ ...fast, body: stable(fast.body) }, { ...routed, body: stable(routed.body) });
        },
      ),
      { numRuns: 40 },
    );
  });
});
