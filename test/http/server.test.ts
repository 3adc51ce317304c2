// serveHttp: binds (ephemeral ports, IPv6 URLs), reports bind failures, and closes even while clients
// hold keep-alive connections. Uses a bare Hono app: the socket layer does not depend on the routes.
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { Hono } from 'hono';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp } from '../../src/http/index.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { captureLogger } from './fixture.ts';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS } from '../../src/httpDefault.ts';

const app = new Hono().get('/ping', (c) => c.text('pong'));

async function ipv6LoopbackAvailable(): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, '::1', () => probe.close(() => resolve(true)));
  });
}

describe('http/server: serveHttp', () => {
  test('default: port 0 picks a free port; url and port agree; close resolves with open keep-alive sockets', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
    assert.ok(server.port > 0);
    assert.equal(server.url, `http://127.0.0.1:${server.port}`);
    const answer = await fetch(`${server.url}/ping`);
    assert.equal(await answer.text(), 'pong');
    await server.close();
    await assert.rejects(fetch(`${server.url}/ping`));
  });

  test(`keep-alive: idle connections stay open ${HTTP_KEEP_ALIVE_TIMEOUT_MS / 1000} s, and the answer tells clients so`, async () => {
    // Node's 5 s default closed sockets just as pooled clients reused them ("fetch failed" under load).
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
    try {
      const answer = await fetch(`${server.url}/ping`);
      await answer.text();
      assert.equal(answer.headers.get('keep-alive'), `timeout=${HTTP_KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    } finally {
      await server.close();
    }
  });

  test('args: host: IPv6 addresses are bracketed in the url', async (t) => {
    if (!(await ipv6LoopbackAvailable())) return t.skip('no IPv6 loopback in this environment');
    for (const host of ['::1', '[::1]']) {
      const server = await serveHttp({ host, port: 0, app });
      try {
        assert.equal(server.url, `http://[::1]:${server.port}`);
        assert.equal(await (await fetch(`${server.url}/ping`)).text(), 'pong');
      } finally {
        await server.close();
      }
    }
  });

  test('error: a port in use rejects instead of hanging', async () => {
    const first = await serveHttp({ host: '127.0.0.1', port: 0, app });
    try {
      await assert.rejects(serveHttp({ host: '127.0.0.1', port: first.port, app }), /EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});

/** A raw TCP connection to the server that sends `bytes` (nothing by default) and then waits. */
function rawSocket(port: number, bytes = ''): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      if (bytes) socket.write(bytes);
      resolve(socket);
    });
    socket.on('error', () => undefined);
    // Read (and drop) what the server sends, so its closing FIN is seen.
    socket.resume();
    socket.once('error', reject);
  });
}

/** Resolves with the milliseconds until `socket` closes, rejects after `boundMs`. */
function closedWithin(socket: Socket, boundMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`socket still open after ${boundMs} ms`)), boundMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

describe('http/server: connection limits (issue 24, item 2)', () => {
  // Small limits so the test runs in a second or two; the defaults are the documented constants.
  const limits = { maxConnections: 20, headersTimeoutMs: 1_000, requestTimeoutMs: 1_500, checkIntervalMs: 200 };

  test('idle sockets beyond the cap cannot lock new clients out: the oldest idle one is closed instead', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app, ...limits });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < limits.maxConnections + 50; i++) sockets.push(await rawSocket(server.port));
      const answer = await fetch(`${server.url}/ping`);
      assert.equal(await answer.text(), 'pong');
      // The cap held: at most maxConnections sockets (the fetch's own included) are still open.
      await Promise.all(sockets.slice(0, 50).map((s) => closedWithin(s, 5_000)));
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });

  test('a socket that sends nothing, or headers that never end, is closed after the headers timeout', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app, ...limits });
    try {
      const silent = await rawSocket(server.port);
      const slowHeaders = await rawSocket(server.port, 'GET /ping HTTP/1.1\r\nHost: x\r\n');
      const bound = limits.headersTimeoutMs + 10 * limits.checkIntervalMs + 2_000;
      // A keep-alive connection idle between requests is not cut by the headers timeout (keep-alive governs it).
      const kept = await rawSocket(server.port);
      let received = '';
      kept.on('data', (chunk: Buffer) => (received += chunk.toString()));
      const ask = async () => {
        const before = (received.match(/pong/g) ?? []).length;
        kept.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
        for (let i = 0; i < 100 && (received.match(/pong/g) ?? []).length === before; i++)
          await new Promise((r) => setTimeout(r, 20));
        return (received.match(/pong/g) ?? []).length > before;
      };
      assert.ok(await ask());
      await Promise.all([closedWithin(silent, bound), closedWithin(slowHeaders, bound)]);
      assert.ok(!kept.destroyed, 'the kept-alive socket is still open');
      assert.ok(await ask(), 'and answers its next request');
      kept.destroy();
    } finally {
      await server.close();
    }
  });

  test('a body that never ends is cut after the request timeout', async () => {
    const slowApp = new Hono().post('/echo', async (c) => c.text(String((await c.req.arrayBuffer()).byteLength)));
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app: slowApp, ...limits });
    try {
      const socket = await rawSocket(
        server.port,
        'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
      );
      await closedWithin(socket, limits.requestTimeoutMs + 10 * limits.checkIntervalMs + 2_000);
    } finally {
      await server.close();
    }
  });

  test('a client that goes away mid-body is logged as "client disconnected", not as a failed request', async () => {
    // The body is read before the service is asked anything: a context that is never read suffices.
    const ctx = {} as ServiceContext;
    const { lines, logger } = captureLogger();
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const nodeApp = createHttpApp({ ctx, access, metrics: createMetrics(ctx), logger, mcp: { ctx, logger } });
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app: nodeApp, ...limits });
    try {
      const socket = await rawSocket(
        server.port,
        'POST /v1/collections/notes/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"k":\r\n',
      );
      for (let i = 0; i < 50 && lines.length === 0; i++) {
        if (i === 2) socket.destroy();
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(
        lines.map((l) => [l.level, l.message]),
        [['info', 'client disconnected']],
      );
    } finally {
      await server.close();
    }
  });
});
