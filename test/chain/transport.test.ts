// The chain transport against a real local HTTP endpoint that misbehaves like public RPCs do: HTTP 429 with
// Retry-After, JSON-RPC -32016 "over rate limit", 5xx and dropped connections are retried with backoff;
// JSON-RPC errors are not; URLs are redacted in errors.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  RPC_ANSWER_MAX_BYTES,
  RpcAnswerTooLargeError,
  RpcResponseError,
  RpcUnavailableError,
  createHttpTransport,
  redactUrl,
} from '../../src/chain/index.ts';
import { defined } from '../helpers/defined.ts';

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: { id: number; method: string } | { id: number; method: string }[],
) => void;

describe('chain transport', () => {
  const script: Handler[] = [];
  let hits = 0;
  let lastAuthorization: string | undefined;
  let url = '';
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      hits++;
      lastAuthorization = req.headers.authorization;
      const next = script.shift();
      if (!next) throw new Error('unexpected request');
      next(req, res, JSON.parse(text));
    });
  });
  const ok =
    (result: unknown): Handler =>
    (_req, res, body) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            Array.isArray(body)
              ? body.map((b) => ({ jsonrpc: '2.0', id: b.id, result }))
              : { jsonrpc: '2.0', id: body.id, result },
          ),
        );
  const rpcError =
    (code: number, message: string): Handler =>
    (_req, res, body) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: (body as { id: number }).id, error: { code, message } }));

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://user:secret@127.0.0.1:${(server.address() as AddressInfo).port}/v3/apikey123`;
  });
  after(() => server.close());

  test('rate limits: HTTP 429 (Retry-After) and -32016 are retried, then the answer comes through', async () => {
    hits = 0;
    script.push(
      (_req, res) => res.writeHead(429, { 'retry-after': '0' }).end('slow down'),
      rpcError(-32016, 'over rate limit'),
      ok('0x2a'),
    );
    const retries: string[] = [];
    const transport = createHttpTransport({ url, backoffMs: 1, onRetry: (info) => retries.push(info.reason) });
    try {
      assert.equal(await transport.request('eth_blockNumber'), '0x2a');
      assert.equal(
        lastAuthorization,
        `Basic ${Buffer.from('user:secret').toString('base64')}`,
        'URL credentials travel as Basic auth',
      );
      assert.equal(hits, 3);
      assert.equal(retries.length, 2);
      assert.match(defined(retries[0], 'retries[0]'), /rate limiting \(HTTP 429\)/);
      assert.match(defined(retries[1], 'retries[1]'), /rate limiting \(-32016\)/);
    } finally {
      await transport.close();
    }
  });

  test('server errors and dropped connections are retried; after the attempts, RpcUnavailableError without credentials', async () => {
    hits = 0;
    script.push(
      (_req, res) => res.writeHead(503).end(),
      (req) => req.socket.destroy(),
      (_req, res) => res.writeHead(502).end(),
    );
    const transport = createHttpTransport({ url, attempts: 3, backoffMs: 1 });
    try {
      await assert.rejects(transport.request('eth_blockNumber'), (error: Error) => {
        assert.ok(error instanceof RpcUnavailableError);
        assert.doesNotMatch(error.message, /secret|apikey123|user/);
        return true;
      });
      assert.equal(hits, 3);
    } finally {
      await transport.close();
    }
  });

  test('JSON-RPC errors are answers, not outages: no retry; batches keep per-call errors in order', async () => {
    hits = 0;
    script.push(rpcError(-32000, 'execution reverted'));
    const transport = createHttpTransport({ url, backoffMs: 1 });
    try {
      await assert.rejects(
        transport.request('eth_call'),
        (error: Error) => error instanceof RpcResponseError && error.code === -32000,
      );
      assert.equal(hits, 1);
      script.push((_req, res, body) => {
        const calls = body as { id: number }[];
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify([
            { jsonrpc: '2.0', id: defined(calls[1], 'calls[1]').id, error: { code: -32601, message: 'nope' } },
            { jsonrpc: '2.0', id: defined(calls[0], 'calls[0]').id, result: 'first' },
          ]),
        );
      });
      const answers = await transport.batch([
        { method: 'a', params: [] },
        { method: 'b', params: [] },
      ]);
      assert.equal(answers[0], 'first');
      assert.ok(answers[1] instanceof RpcResponseError && answers[1].code === -32601);
    } finally {
      await transport.close();
    }
  });

  test('an answer over the size limit is refused while it streams in, the connection dropped, not retried', async () => {
    hits = 0;
    const total = 4 * RPC_ANSWER_MAX_BYTES;
    let written = 0;
    let closed: () => void = () => undefined;
    const dropped = new Promise<void>((resolve) => (closed = resolve));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    script.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', closed);
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const transport = createHttpTransport({ url, backoffMs: 1 });
    try {
      const before = process.memoryUsage().rss;
      await assert.rejects(transport.request('eth_getBlockByNumber'), RpcAnswerTooLargeError);
      await dropped;
      assert.equal(hits, 1, 'not retried');
      assert.ok(written < total, `the client hung up after ${written} of ${total} bytes`);
      assert.ok(process.memoryUsage().rss - before < 3 * RPC_ANSWER_MAX_BYTES, 'the answer was not held whole');
      // A declared length over the limit is refused before any of it is read.
      script.push((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total) });
        res.write('[');
        res.on('close', closed);
      });
      await assert.rejects(transport.request('eth_blockNumber'), RpcAnswerTooLargeError);
      assert.equal(hits, 2);
    } finally {
      await transport.close();
    }
  });

  test('redactUrl keeps scheme and host only', () => {
    assert.equal(redactUrl('https://user:pw@rpc.example:8545/v3/KEY?token=x'), 'https://rpc.example:8545/…');
    assert.equal(redactUrl('http://127.0.0.1:8545'), 'http://127.0.0.1:8545');
    assert.equal(redactUrl('not a url'), '<invalid url>');
  });
});
