// Slow and oversized clients cannot lock others out (real sockets on 127.0.0.x): a body trickling in below
// the minimum rate is cut, one address holds at most its share of connections (another address still gets
// in), a full node closes its slowest body before refusing a fresh client, and a request over Node's
// header limit is answered 431 without resetting the connection under a client still sending.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { Hono } from 'hono';
import { serveHttp } from '../../src/http/index.ts';
import { addressGroup } from '../../src/http/connectionGuard.ts';

/** Bodies the app has started reading, and who waits for a count of them. */
let reading = 0;
const readers: { count: number; resolve: () => void }[] = [];
const bodiesBeingRead = (count: number) =>
  new Promise<void>((resolve) => {
    if (reading >= count) resolve();
    else readers.push({ count, resolve });
  });
const app = new Hono()
  .get('/ping', (c) => c.text('pong'))
  .post('/echo', async (c) => {
    reading++;
    for (const r of readers.splice(0))
      if (reading >= r.count) r.resolve();
      else readers.push(r);
    return c.text(String((await c.req.arrayBuffer()).byteLength));
  });

/** A connected socket from `localAddress`, having written `data`; errors are kept, never thrown. */
async function socketFrom(port: number, localAddress = '127.0.0.1', data = ''): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  if (data) socket.write(data);
  return socket;
}

/** Resolves when the socket closes; fails after `ms`. */
const closedWithin = (socket: Socket, ms: number) =>
  new Promise<void>((resolve, reject) => {
    if (socket.destroyed) return resolve();
    const timer = setTimeout(() => reject(new Error(`socket still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** GET /ping on a fresh socket from `localAddress`: the answer's text, or undefined when refused. */
async function ping(port: number, localAddress = '127.0.0.1'): Promise<string | undefined> {
  const socket = await socketFrom(port, localAddress, 'GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  await closedWithin(socket, 10_000);
  return received.includes('pong') ? 'pong' : undefined;
}

const slowBody = 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"a":';

describe('http/server: slow and oversized clients', () => {
  // Long Node timeouts, so only the new rules can close what these tests hold open.
  const base = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, checkIntervalMs: 100 };

  test('a body arriving below the minimum rate is cut once the grace has passed', async () => {
    const server = await serveHttp({
      host: '127.0.0.1',
      port: 0,
      app,
      ...base,
      bodyMinBytesPerS: 1000,
      bodyGraceMs: 300,
    });
    try {
      const slow = await socketFrom(server.port, '127.0.0.1', slowBody);
      await closedWithin(slow, 10_000);
      // A body sent whole is answered.
      const whole = await socketFrom(
        server.port,
        '127.0.0.1',
        'POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc',
      );
      let received = '';
      whole.on('data', (chunk: Buffer) => (received += chunk.toString()));
      await closedWithin(whole, 10_000);
      assert.match(received, /^HTTP\/1\.1 200[\s\S]*\r\n\r\n3$/);
    } finally {
      await server.close();
    }
  });

  test('one address holds at most its share of connections; another address still gets in', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app, ...base, maxConnectionsPerAddress: 3 });
    const held: Socket[] = [];
    try {
      const before = reading;
      for (let i = 0; i < 3; i++) held.push(await socketFrom(server.port, '127.0.0.2', slowBody));
      await bodiesBeingRead(before + 3);
      // The fourth from that address closes its slowest body (none is idle), not someone else's.
      const fourth = await socketFrom(server.port, '127.0.0.2', slowBody);
      await Promise.race(held.map((s) => closedWithin(s, 10_000)));
      assert.equal(held.filter((s) => !s.destroyed).length, 2);
      assert.equal(fourth.destroyed, false);
      assert.equal(await ping(server.port, '127.0.0.3'), 'pong');
      fourth.destroy();
    } finally {
      for (const s of held) s.destroy();
      await server.close();
    }
  });

  test('a full node closes its slowest body before refusing a fresh client', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app, ...base, maxConnections: 5 });
    const held: Socket[] = [];
    try {
      // Five bodies from five addresses, none idle: every place is taken by a request in flight.
      const before = reading;
      for (let i = 0; i < 5; i++) held.push(await socketFrom(server.port, `127.0.0.${10 + i}`, slowBody));
      await bodiesBeingRead(before + 5);
      for (let i = 0; i < 3; i++) assert.equal(await ping(server.port, '127.0.0.20'), 'pong');
      assert.ok(held.some((s) => s.destroyed));
    } finally {
      for (const s of held) s.destroy();
      await server.close();
    }
  });

  test('a request over the header limit is answered 431, and a client still sending is not reset', async () => {
    const server = await serveHttp({ host: '127.0.0.1', port: 0, app, ...base });
    try {
      const socket = await socketFrom(server.port);
      const errors: string[] = [];
      socket.on('error', (error: NodeJS.ErrnoException) => errors.push(String(error.code)));
      const closed = closedWithin(socket, 10_000);
      const request = `GET /api/search?db=x&q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
      // The client learns of the answer part way through its request and keeps sending the rest.
      socket.write(request.slice(0, 20_000));
      const answer = await new Promise<string>((resolve) =>
        socket.once('data', (chunk: Buffer) => resolve(String(chunk))),
      );
      for (let at = 20_000; at < request.length && !socket.destroyed; at += 10_000) {
        socket.write(request.slice(at, at + 10_000));
        await new Promise((resolve) => setImmediate(resolve));
      }
      socket.end();
      await closed;
      assert.match(answer, /^HTTP\/1\.1 431 /);
      assert.deepEqual(errors, [], 'no reset, no broken pipe');
    } finally {
      await server.close();
    }
  });

  test('addresses group by IPv4 address and by IPv6 /64', () => {
    assert.equal(addressGroup('127.0.0.1'), '127.0.0.1');
    assert.equal(addressGroup('::ffff:10.0.0.7'), '10.0.0.7');
    assert.equal(addressGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  });
});
