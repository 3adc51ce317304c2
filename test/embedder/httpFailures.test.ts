// An embeddings server (--embedder URL) that fails, against real loopback servers started here: nothing
// listening, HTTP 500, an answer that is not JSON, vectors of another width than before, no answer at all.
// Each failure names its cause and the ways out (check the server, the local model, mode "keyword"), in
// the error, its problem fields and the embedder's state (GET /v1/status), the same shape as the local
// model's; no credential or path of the URL appears anywhere. A server that comes back is seen again.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createEmbedder, type EmbedderState } from '../../src/embedder/index.ts';
import { ArkivectorError } from '../../src/errors.ts';
import { assertProblem, call, startChain, type Chain } from '../http/fixture.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server whose every answer is `handler`'s; `close` also ends the connections it holds. */
async function serve(handler: Handler): Promise<{ url: string; port: number; server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    server,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An OpenAI embeddings answer of one `width`-wide vector per input. */
function embeddings(res: ServerResponse, body: string, width: number): void {
  const { input } = JSON.parse(body) as { input: string[] };
  const data = input.map((_, index) => ({
    object: 'embedding',
    index,
    embedding: Array.from({ length: width }, () => 0.5),
  }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = await serve(() => {});
  await s.close();
  return s.port;
}

const MODEL = 'nomic-embed-text';
const fast = { backoffMs: 1, maxAttempts: 2 };

/** The failure says its cause and every way out, naming the server without its credentials or path. */
function assertWaysOut(error: unknown, cause: string, port: number, detail: RegExp): ArkivectorError {
  assert.ok(error instanceof ArkivectorError, String(error));
  assert.equal(error.code, 'embedder_unavailable');
  assert.equal(error.meta.cause, cause);
  const ways = String(error.meta.ways_out);
  assert.match(error.message, detail);
  assert.ok(error.message.endsWith(ways), `the message ends with the ways out: ${error.message}`);
  assert.ok(ways.startsWith('Ways out: '), ways);
  for (const way of [
    `check the embeddings server at http://127.0.0.1:${port}/…`,
    '--embedder local (the default model',
    '--embedder local:MODEL',
    'mode "keyword"',
  ])
    assert.ok(ways.includes(way), `${way} missing: ${ways}`);
  return error;
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => assert.fail('expected embedder_unavailable'),
    (e: unknown) => e,
  );

describe('--embedder URL failures name the cause and the ways out', () => {
  test('nothing listens: refused, start the server or fix host and port', async () => {
    const port = await closedPort();
    const embedder = createEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: MODEL, ...fast });
    const error = assertWaysOut(await failure(embedder.embed('x')), 'refused', port, /connection refused/);
    assert.match(String(error.meta.ways_out), /start the server, or correct the host and port/);
    const state = embedder.state?.() as EmbedderState;
    assert.equal(state.state, 'failed');
    assert.equal(state.cause, 'refused');
    assert.equal(state.ways_out, error.meta.ways_out);
    assert.match(
      state.error ?? '',
      /^the embedder at http:\/\/127\.0\.0\.1:\d+\/… cannot be reached \(connection refused\)/,
    );
  });

  test('HTTP 500 after the retries: http_status with the upstream status, see its log', async () => {
    const s = await serve((_req, res) =>
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"CUDA out of memory"}}'),
    );
    try {
      const embedder = createEmbedder({ url: s.url, model: MODEL, ...fast });
      const error = assertWaysOut(
        await failure(embedder.embed('x')),
        'http_status',
        s.port,
        /HTTP 500: CUDA out of memory/,
      );
      assert.equal(error.meta.upstream_status, 500);
      assert.match(String(error.meta.ways_out), /failed inside: see its log/);
    } finally {
      await s.close();
    }
  });

  test('HTTP 404 of an unknown model: check --embedder-model', async () => {
    const s = await serve((_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"model not found"}}'),
    );
    try {
      const error = assertWaysOut(
        await failure(createEmbedder({ url: s.url, model: MODEL, ...fast }).embed('x')),
        'http_status',
        s.port,
        /HTTP 404/,
      );
      assert.ok(String(error.meta.ways_out).includes(`--embedder-model ${MODEL}`), String(error.meta.ways_out));
    } finally {
      await s.close();
    }
  });

  test('an answer that is not JSON: bad_answer, check the URL is an embeddings endpoint', async () => {
    const s = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>router login</html>'),
    );
    try {
      const error = assertWaysOut(
        await failure(createEmbedder({ url: s.url, model: MODEL, ...fast }).embed('x')),
        'bad_answer',
        s.port,
        /no data list/,
      );
      assert.match(String(error.meta.ways_out), /not an OpenAI-compatible embeddings answer/);
    } finally {
      await s.close();
    }
  });

  test('vectors of another width than before: wrong_dimension', async () => {
    let width = 4;
    const s = await serve((_req, res, body) => embeddings(res, body, width));
    try {
      const embedder = createEmbedder({ url: s.url, model: MODEL, ...fast });
      assert.equal(await embedder.dimension(), 4);
      width = 3;
      const error = assertWaysOut(await failure(embedder.embed('x')), 'wrong_dimension', s.port, /3 numbers.*4/);
      assert.match(String(error.meta.ways_out), /another width/);
      assert.equal(embedder.state?.().cause, 'wrong_dimension');
    } finally {
      await s.close();
    }
  });

  test('no answer at all: timeout', async () => {
    const s = await serve(() => {});
    try {
      const embedder = createEmbedder({ url: s.url, model: MODEL, backoffMs: 1, maxAttempts: 1, timeoutMs: 300 });
      const error = assertWaysOut(await failure(embedder.embed('x')), 'timeout', s.port, /no answer within 300 ms/);
      assert.match(String(error.meta.ways_out), /no answer in time/);
    } finally {
      await s.close();
    }
  });

  test('credentials and the path of the URL never appear in the error or the state', async () => {
    const port = await closedPort();
    const embedder = createEmbedder({
      url: `http://user:hunter2-pw@127.0.0.1:${port}/tenant-SECRET77/v1`,
      model: MODEL,
      apiKey: 'sk-KEY-0042',
      ...fast,
    });
    const error = assertWaysOut(await failure(embedder.embed('x')), 'refused', port, /connection refused/);
    const seen = JSON.stringify({ message: error.message, meta: error.meta, state: embedder.state?.() });
    for (const secret of ['hunter2-pw', 'user:', 'SECRET77', 'sk-KEY'])
      assert.ok(!seen.includes(secret), `${secret}: ${seen}`);
  });

  test('a server that comes back is seen again: the state returns to ready (also without a text call)', async () => {
    let up = false;
    const s = await serve((_req, res, body) =>
      up ? embeddings(res, body, 4) : res.writeHead(503, { 'content-type': 'application/json' }).end('{}'),
    );
    try {
      const states: EmbedderState[] = [];
      let onReady: () => void = () => {};
      const ready = new Promise<void>((resolve) => {
        onReady = resolve;
      });
      const embedder = createEmbedder({
        url: s.url,
        model: MODEL,
        ...fast,
        reprobeMs: 0,
        onState: (state) => {
          states.push(state);
          if (state.state === 'ready') onReady();
        },
      });
      assert.equal(embedder.state?.().state, 'idle');
      await failure(embedder.embed('x'));
      up = true;
      // Reading the state (as GET /v1/status does) of a failure older than reprobeMs asks the server again.
      assert.equal(embedder.state?.().state, 'failed');
      await ready;
      assert.deepEqual(embedder.state?.(), { state: 'ready', source: `http://127.0.0.1:${s.port}/…`, dim: 4 });
      assert.deepEqual(
        states.map((x) => x.state),
        ['failed', 'ready'],
      );
    } finally {
      await s.close();
    }
  });
});

describe('--embedder URL failures over REST and in /v1/status', () => {
  let chain: Chain;
  before(async () => {
    chain = await startChain();
  });
  after(() => chain?.close());

  test('a text search answers 502 with cause and ways_out; /v1/status says the same', async () => {
    const port = await closedPort();
    const embedder = createEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: MODEL, maxAttempts: 1 });
    const node = await chain.node({ ctx: { embedder } });
    const answer = await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { text: 'cats', mode: 'semantic', k: 1 },
    });
    assertProblem(answer, 502, 'embedder_unavailable');
    assert.equal(answer.body.cause, 'refused');
    assert.match(answer.body.ways_out, /^Ways out: check the embeddings server at /);
    assert.ok(answer.body.detail.endsWith(answer.body.ways_out));
    const status = (await call(`${node.url}/v1/status`)).body.embedder;
    assert.equal(status.kind, 'http');
    assert.equal(status.state, 'failed');
    assert.equal(status.cause, 'refused');
    assert.equal(status.ways_out, answer.body.ways_out);
  });
  test('after a failed call the MCP instructions say the embeddings server failed and what to do meanwhile', async () => {
    const port = await closedPort();
    const embedder = createEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: MODEL, maxAttempts: 1 });
    const node = await chain.node({ ctx: { embedder } });
    const initialize = async (): Promise<string> => {
      const response = await fetch(`${node.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
        }),
      });
      const body = (await response.json()) as { result: { instructions: string } };
      return body.result.instructions;
    };
    assert.doesNotMatch(await initialize(), /Its last call failed/);
    await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { text: 'cats', mode: 'semantic', k: 1 },
    });
    const instructions = await initialize();
    assert.match(instructions, /Its last call failed: .*connection refused/, instructions);
    assert.match(instructions, /mode "keyword" meanwhile/);
  });
});
