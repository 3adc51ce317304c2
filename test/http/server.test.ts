// serveHttp: binds (ephemeral ports, IPv6 URLs), reports bind failures, and closes even while clients
// hold keep-alive connections. Uses a bare Hono app: the socket layer does not depend on the routes.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { Hono } from 'hono';
import { serveHttp } from '../../src/http/index.ts';
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
