// Access control (README, "Access"): the policy functions on their own, then the same rules through real
// nodes: tokens from a file and from ARKIVECTOR_TOKENS with scopes, --public-read, and the trust-local
// mode of a loopback bind with its Origin/Host checks.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AccessError,
  assertSafeExposure,
  authorize,
  hashSecret,
  isLoopbackHost,
  loadAccessPolicy,
  parseTokensEnv,
  parseTokensFile,
  type AccessPolicy,
} from '../../src/http/index.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { assertProblem, call, startChain, type Chain } from './fixture.ts';
import { defined } from '../helpers/defined.ts';

const READER = 'r-secret-0123456789';
const WRITER = 'w-secret-0123456789';
const tokensJson = JSON.stringify([
  { name: 'reader', sha256: hashSecret(READER), scopes: ['read'] },
  { name: 'writer', sha256: hashSecret(WRITER), scopes: ['write'] },
]);

// Authorization is decided before the writer is used, so refusals only need a node that has one.
const STUB_WRITER = { address: '0x0000000000000000000000000000000000000001' } as unknown as ServiceContext['writer'];

/** One MCP JSON-RPC request over plain HTTP (stateless server: no initialize needed). */
async function mcpCall(url: string, method: string, params: object) {
  const answer = await call(`${url}/mcp`, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream' },
    json: { jsonrpc: '2.0', id: 1, method, params },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

const bearerOf = (secret: string) => ({ authorization: `Bearer ${secret}` });

const expectAccessError = (fn: () => unknown, code: 'unauthorized' | 'forbidden') =>
  assert.throws(fn, (error: unknown) => error instanceof AccessError && error.code === code);

describe('http/auth: policy', () => {
  test('isLoopbackHost: localhost, 127.0.0.0/8, ::1 in every spelling; nothing else', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.255.0.9', '::1', '[::1]', '::ffff:127.0.0.1'])
      assert.ok(isLoopbackHost(host), host);
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '128.0.0.1',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
      '[::2]',
      '',
    ])
      assert.ok(!isLoopbackHost(host), host);
  });

  test('parseTokensFile: names, digests and scopes; write implies read', () => {
    const [reader, writer] = parseTokensFile(tokensJson);
    assert.ok(reader && writer, 'two tokens parsed');
    assert.equal(reader.name, 'reader');
    assert.deepEqual([...reader.scopes], ['read']);
    assert.deepEqual([...writer.scopes].sort(), ['read', 'write']);
    assert.equal(reader.digest.toString('hex'), hashSecret(READER));
  });

  test('error: malformed token files name the entry, never its digest', () => {
    const digest = hashSecret('x');
    assert.throws(() => parseTokensFile('{'), /not valid JSON/);
    assert.throws(() => parseTokensFile('{}'), /JSON list/);
    assert.throws(
      () => parseTokensFile(JSON.stringify([{ name: 'a', sha256: 'abc', scopes: ['read'] }])),
      /entry 0 \(a\): sha256/,
    );
    assert.throws(
      () => parseTokensFile(JSON.stringify([{ name: 'a', sha256: digest, scopes: ['admin'] }])),
      (e: Error) => /unknown scope/.test(e.message) && !e.message.includes(digest),
    );
    assert.throws(() => parseTokensFile(JSON.stringify([{ name: 'a', sha256: digest, scopes: [] }])), /non-empty/);
  });

  test('parseTokensEnv: scope:secret pairs, read+write, secrets never in errors', () => {
    const tokens = parseTokensEnv('read:abc, read+write:def:with:colons,write:ghi');
    assert.deepEqual(
      tokens.map((t) => t.name),
      ['env-0', 'env-1', 'env-2'],
    );
    assert.deepEqual(
      tokens.map((t) => [...t.scopes].sort().join('+')),
      ['read', 'read+write', 'read+write'],
    );
    assert.equal(defined(tokens[1], 'tokens[1]').digest.toString('hex'), hashSecret('def:with:colons'));
    assert.throws(
      () => parseTokensEnv('admin:topsecret'),
      (e: Error) => /entry 0: unknown scope/.test(e.message) && !e.message.includes('topsecret'),
    );
    assert.throws(
      () => parseTokensEnv('read:ok,topsecret'),
      (e: Error) => /entry 1: expected scope:secret/.test(e.message) && !e.message.includes('topsecret'),
    );
    assert.throws(() => parseTokensEnv('read:'), /expected scope:secret/);
  });

  test('loadAccessPolicy: file and env together; the same secret twice is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-tokens-'));
    try {
      const file = join(dir, 'tokens.json');
      await writeFile(file, tokensJson);
      const policy = await loadAccessPolicy({
        tokensFile: file,
        tokensEnv: 'read:env-secret',
        publicRead: false,
        host: '0.0.0.0',
      });
      assert.deepEqual(
        policy.tokens.map((t) => t.name),
        ['reader', 'writer', 'env-0'],
      );
      assert.equal(policy.loopback, false);
      await assert.rejects(
        loadAccessPolicy({ tokensFile: file, tokensEnv: `read:${READER}`, publicRead: false, host: '0.0.0.0' }),
        /configured twice/,
      );
      await assert.rejects(
        loadAccessPolicy({ tokensFile: join(dir, 'missing.json'), publicRead: false, host: '127.0.0.1' }),
        /ENOENT/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('assertSafeExposure: refuses a non-loopback bind with no tokens and no --public-read', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
      const open = await loadAccessPolicy({ publicRead: false, host });
      assert.throws(() => assertSafeExposure(host, open), /refusing to serve on .* without access control/);
      assert.doesNotThrow(() => assertSafeExposure(host, { ...open, publicRead: true }));
      assert.doesNotThrow(() => assertSafeExposure(host, { ...open, tokens: parseTokensEnv('read:x') }));
    }
    for (const host of ['127.0.0.1', '::1', 'localhost']) {
      const policy = await loadAccessPolicy({ publicRead: false, host });
      assert.doesNotThrow(() => assertSafeExposure(host, policy));
    }
  });

  test('authorize: tokens, scopes, public read and trust-local', async () => {
    const tokens = parseTokensFile(tokensJson);
    const guarded: AccessPolicy = { tokens, publicRead: false, host: '0.0.0.0', loopback: false };
    expectAccessError(() => authorize(guarded, {}, 'read'), 'unauthorized');
    expectAccessError(() => authorize(guarded, { authorization: 'Bearer nope' }, 'read'), 'unauthorized');
    expectAccessError(() => authorize(guarded, { authorization: `Basic ${READER}` }, 'read'), 'unauthorized');
    assert.equal(authorize(guarded, { authorization: `Bearer ${READER}` }, 'read').principal, 'reader');
    assert.equal(authorize(guarded, { authorization: `bearer  ${WRITER}` }, 'read').principal, 'writer');
    expectAccessError(() => authorize(guarded, { authorization: `Bearer ${READER}` }, 'write'), 'forbidden');

    const publicRead: AccessPolicy = { ...guarded, publicRead: true };
    assert.equal(authorize(publicRead, {}, 'read').principal, 'anonymous');
    expectAccessError(() => authorize(publicRead, {}, 'write'), 'unauthorized');
    expectAccessError(() => authorize(publicRead, { authorization: 'Bearer wrong' }, 'read'), 'unauthorized');

    const local: AccessPolicy = { tokens: [], publicRead: false, host: '127.0.0.1', loopback: true };
    assert.deepEqual([...authorize(local, { host: '127.0.0.1:8787' }, 'write').scopes].sort(), ['read', 'write']);
    assert.equal(authorize(local, { host: '[::1]:8787', origin: 'http://[::1]:8787' }, 'write').principal, 'local');
    // Another port of the same machine is another origin (issue 24, item 15).
    expectAccessError(
      () => authorize(local, { host: '[::1]:8787', origin: 'http://localhost:3000' }, 'write'),
      'forbidden',
    );
    expectAccessError(
      () => authorize(guarded, { host: 'node.example', origin: 'https://other.example', ...bearerOf(WRITER) }, 'read'),
      'forbidden',
    );
    // A proxy passes the host the page asked for in X-Forwarded-Host, over TLS it terminated.
    const proxied = { host: '127.0.0.1:8787', forwardedHost: 'node.example', origin: 'https://node.example' };
    assert.equal(authorize(guarded, { ...proxied, ...bearerOf(READER) }, 'read').principal, 'reader');
    expectAccessError(() => authorize(local, { host: 'evil.example:8787' }, 'read'), 'forbidden');
    expectAccessError(
      () => authorize(local, { host: '127.0.0.1:8787', origin: 'https://evil.example' }, 'read'),
      'forbidden',
    );
    expectAccessError(() => authorize(local, { host: '127.0.0.1:8787', origin: 'null' }, 'read'), 'forbidden');

    // --public-read turns local trust off for writes; a proxied request is never local.
    const localPublic: AccessPolicy = { ...local, publicRead: true };
    assert.equal(authorize(localPublic, { host: '127.0.0.1:8787' }, 'read').principal, 'anonymous');
    expectAccessError(() => authorize(localPublic, { host: '127.0.0.1:8787' }, 'write'), 'unauthorized');
    expectAccessError(() => authorize(local, { host: '127.0.0.1:8787', forwarded: true }, 'read'), 'forbidden');

    // Nothing trusts the network when bound elsewhere without tokens.
    expectAccessError(() => authorize({ ...local, host: '0.0.0.0', loopback: false }, {}, 'read'), 'unauthorized');
  });
});

describe('http/auth: through the HTTP surface', () => {
  let chain: Chain;
  let dir: string;
  before(async () => {
    chain = await startChain();
    dir = await mkdtemp(join(tmpdir(), 'arkivector-tokens-'));
  });
  after(async () => {
    await chain.close();
    await rm(dir, { recursive: true, force: true });
  });

  const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

  test('tokens from --tokens FILE: 401 without or with a bad token, read scope reads, write needs write', async () => {
    const file = join(dir, 'tokens.json');
    await writeFile(file, tokensJson);
    const node = await chain.node({
      access: await loadAccessPolicy({ tokensFile: file, publicRead: false, host: '0.0.0.0' }),
    });

    const none = await call(`${node.url}/v1/collections`);
    assertProblem(none, 401, 'unauthorized');
    assert.match(none.headers.get('www-authenticate')!, /^Bearer realm="arkivector"/);
    const bad = await call(`${node.url}/v1/collections`, { headers: bearer('wrong') });
    assertProblem(bad, 401, 'unauthorized');
    assert.match(bad.headers.get('www-authenticate')!, /error="invalid_token"/);

    const read = await call(`${node.url}/v1/collections`, { headers: bearer(READER) });
    assert.equal(read.status, 200);
    assert.equal(read.body.collections[0].name, 'notes');

    // On a node without a signer the real reason comes first, whoever asks.
    assertProblem(
      await call(`${node.url}/v1/collections/notes/entities`, { method: 'POST', headers: bearer(READER), json: {} }),
      501,
      'signer_not_configured',
    );
    // With a signer, the read token lacks the write scope (refused before the signer is touched).
    const signing = await chain.node({
      access: await loadAccessPolicy({ tokensFile: file, publicRead: false, host: '0.0.0.0' }),
      ctx: { writer: STUB_WRITER },
    });
    const write = await call(`${signing.url}/v1/collections/notes/entities`, {
      method: 'POST',
      headers: bearer(READER),
      json: {},
    });
    assertProblem(write, 403, 'forbidden');
    assert.match(write.headers.get('www-authenticate')!, /error="insufficient_scope", scope="write"/);
    assertProblem(await call(`${signing.url}/v1/collections`, { method: 'POST', json: {} }), 401, 'unauthorized');

    // write implies read; with the scope, the write route reaches the (absent) signer.
    assert.equal(
      (await call(`${node.url}/v1/collections/notes/entities/cat`, { headers: bearer(WRITER) })).status,
      200,
    );
    assertProblem(
      await call(`${node.url}/v1/collections/notes/entities/cat`, { method: 'DELETE', headers: bearer(WRITER) }),
      501,
      'signer_not_configured',
    );

    // Probes stay open for load balancers.
    assert.equal((await call(`${node.url}/healthz`)).status, 200);

    const everything = JSON.stringify(node.logs) + JSON.stringify([none.body, bad.body, read.body, write.body]);
    for (const secret of [READER, WRITER])
      assert.ok(!everything.includes(secret), 'secrets never appear in logs or answers');
  });

  test("KuraDB's /api (--compat kuradb) under the same rules: 401 without a token, the read scope reads; health open", async () => {
    const file = join(dir, 'tokens.json');
    await writeFile(file, tokensJson);
    const access = await loadAccessPolicy({ tokensFile: file, publicRead: false, host: '0.0.0.0' });
    const node = await chain.node({ access, compat: 'kuradb' });
    for (const path of ['/api/list', '/api/search?db=notes&q=cat', '/api/keyword?db=notes&q=cat'])
      assertProblem(await call(`${node.url}${path}`), 401, 'unauthorized');
    const list = await call(`${node.url}/api/list`, { headers: bearer(READER) });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.loaded, ['notes']);
    const search = await call(`${node.url}/api/keyword?db=notes&q=cat`, { headers: bearer(READER) });
    assert.deepEqual(Object.keys(search.body), ['keyword']);
    const health = await fetch(`${node.url}/api/health`);
    assert.deepEqual([health.status, await health.text()], [200, 'OK']);
    // Without --compat kuradb the routes do not exist.
    const plain = await chain.node({ access });
    assertProblem(await call(`${plain.url}/api/list`, { headers: bearer(READER) }), 404, 'not_found');
  });

  test('tokens from ARKIVECTOR_TOKENS: read and read+write scopes', async () => {
    const node = await chain.node({
      access: await loadAccessPolicy({
        tokensEnv: 'read:env-reader,read+write:env-writer',
        publicRead: false,
        host: '0.0.0.0',
      }),
    });
    assert.equal((await call(`${node.url}/v1/status`, { headers: bearer('env-reader') })).status, 200);
    assertProblem(
      await call(`${node.url}/v1/collections`, { method: 'POST', headers: bearer('env-reader'), json: {} }),
      501,
      'signer_not_configured',
    );
    assertProblem(
      await call(`${node.url}/v1/collections`, { method: 'POST', headers: bearer('env-writer'), json: {} }),
      501,
      'signer_not_configured',
    );
    assertProblem(await call(`${node.url}/v1/status`), 401, 'unauthorized');
  });

  test('--public-read: reads open without a token, writes still need one', async () => {
    const node = await chain.node({ access: await loadAccessPolicy({ publicRead: true, host: '0.0.0.0' }) });
    const read = await call(`${node.url}/v1/collections/notes/count`, { method: 'POST', json: {} });
    assert.equal(read.status, 200);
    assert.equal(read.body.count, 4);
    // Another origin is refused even for public data (no page of another origin is served: the node sends no
    // CORS headers, so such a page could not read the answer anyway).
    assertProblem(
      await call(`${node.url}/v1/collections`, { headers: { origin: 'https://app.example' } }),
      403,
      'forbidden',
    );
    // No signer: the write is refused for that reason, not for a missing token.
    assertProblem(await call(`${node.url}/v1/collections`, { method: 'POST', json: {} }), 501, 'signer_not_configured');
  });

  test('--public-read on loopback with a signer: anonymous writes are refused on REST and MCP', async () => {
    const node = await chain.node({
      access: await loadAccessPolicy({ publicRead: true, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
    assert.equal((await call(`${node.url}/v1/collections`)).status, 200);
    for (const [method, path] of [
      ['POST', '/v1/collections'],
      ['POST', '/v1/collections/notes/entities'],
      ['DELETE', '/v1/collections/notes/entities/cat'],
    ] as const) {
      const answer = await call(`${node.url}${path}`, { method, ...(method === 'POST' ? { json: {} } : {}) });
      assertProblem(answer, 401, 'unauthorized');
    }
    const mcp = await mcpCall(node.url, 'tools/list', {});
    assert.deepEqual(
      mcp.result.tools.map((t: { name: string }) => t.name).filter((n: string) => /upsert|delete/.test(n)),
      [],
    );
    const upsert = await mcpCall(node.url, 'tools/call', { name: 'arkivector_upsert', arguments: {} });
    assert.equal(upsert.result.isError, true);
    assert.equal(JSON.parse(upsert.result.content[0].text).code, 'forbidden');
  });

  test('behind a proxy on loopback (any proxy header): no local trust, the console document included', async () => {
    const node = await chain.node({
      access: await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
    assert.equal((await call(`${node.url}/v1/collections`)).status, 200);
    for (const headers of [
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      // Each of these alone marks a proxy too (issue 24, item 16).
      { 'x-real-ip': '203.0.113.9' },
      { via: '1.1 proxy.example' },
      { 'x-forwarded-host': '127.0.0.1' },
    ] as Record<string, string>[]) {
      assertProblem(await call(`${node.url}/v1/collections`, { headers }), 403, 'forbidden');
      assertProblem(await call(`${node.url}/console/node.json`, { headers }), 403, 'forbidden');
      assertProblem(
        await call(`${node.url}/v1/collections/notes/entities`, { method: 'POST', json: {}, headers }),
        403,
        'forbidden',
      );
    }
    // With --public-read, proxied callers read anonymously and still cannot write.
    const open = await chain.node({
      access: await loadAccessPolicy({ publicRead: true, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
    const headers = { 'x-forwarded-for': '203.0.113.9' };
    assert.equal((await call(`${open.url}/v1/collections`, { headers })).status, 200);
    assertProblem(await call(`${open.url}/v1/collections`, { method: 'POST', json: {}, headers }), 401, 'unauthorized');
  });

  test('trust-local (loopback bind, no tokens): every scope locally, any other Origin refused', async () => {
    const node = await chain.node({ access: await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }) });
    assert.equal((await call(`${node.url}/v1/collections`)).status, 200);
    assert.equal((await call(`${node.url}/v1/collections`, { headers: { origin: node.url } })).status, 200);
    assertProblem(
      await call(`${node.url}/v1/collections`, { headers: { origin: `http://localhost:5173` } }),
      403,
      'forbidden',
    );
    assertProblem(
      await call(`${node.url}/v1/collections`, { headers: { origin: 'http://attacker.example' } }),
      403,
      'forbidden',
    );
    const signing = await chain.node({
      access: await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
    assertProblem(
      await call(`${signing.url}/v1/collections/notes/entities`, {
        method: 'POST',
        json: {},
        headers: { origin: 'http://attacker.example' },
      }),
      403,
      'forbidden',
    );
    assertProblem(
      await call(`${node.url}/mcp`, { method: 'POST', json: {}, headers: { origin: 'http://attacker.example' } }),
      403,
      'forbidden',
    );
    // With the write scope granted, the write route gets as far as the missing signer.
    assertProblem(
      await call(`${node.url}/v1/collections/notes/entities`, { method: 'POST', json: {} }),
      501,
      'signer_not_configured',
    );
  });
  test('a page on another localhost port cannot write with a simple text/plain POST; writes must be JSON', async () => {
    const node = await chain.node({
      access: await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
    // What a page on http://localhost:3000 sends with fetch(…, {method: 'POST', body}) and no preflight.
    const simple = (origin?: string) =>
      call(`${node.url}/v1/collections`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8', ...(origin ? { origin } : {}) },
        body: JSON.stringify({ name: 'planted', dim: 4, metric: 'cosine' }),
      });
    assertProblem(await simple('http://localhost:3000'), 403, 'forbidden');
    assertProblem(await simple(), 415, 'unsupported_media_type');
    assertProblem(await simple(node.url), 415, 'unsupported_media_type');
    const upsert = await call(`${node.url}/v1/collections/notes/entities`, {
      method: 'POST',
      headers: { origin: node.url },
      body: '{}',
    });
    assertProblem(upsert, 415, 'unsupported_media_type');
    // Same origin with a JSON body reaches the service (which finds the arguments invalid).
    assertProblem(
      await call(`${node.url}/v1/collections`, { method: 'POST', json: {}, headers: { origin: node.url } }),
      400,
      'invalid_argument',
    );
  });

  test('failed authentications are rate-limited per address: 429 after 10 wrong tokens, whatever --rate-limit', async () => {
    const node = await chain.node({
      access: await loadAccessPolicy({ tokensEnv: `read:${READER}`, publicRead: false, host: '0.0.0.0' }),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await call(`${node.url}/v1/collections`, { headers: bearer(`guess-${i}`) })).status);
    assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
    // Even the right token waits: the address is refused before any token is compared.
    const limited = await call(`${node.url}/v1/collections`, { headers: bearer(READER) });
    assertProblem(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assertProblem(await call(`${node.url}/console/node.json`, { headers: bearer(READER) }), 429, 'rate_limited');
    // Probes and requests without a token are not limited by it.
    assert.equal((await call(`${node.url}/healthz`)).status, 200);
    assertProblem(await call(`${node.url}/v1/collections`), 401, 'unauthorized');
  });

  test('failed authentications on a dual-stack socket count per IPv4 address, not per /64 of the mapped form', async () => {
    // Bound to the IPv4-mapped loopback address, the socket is IPv6 and reports its callers as
    // ::ffff:127.0.0.N, all of them in one /64: they still count one address each.
    const node = await chain.node({
      access: await loadAccessPolicy({ tokensEnv: `read:${READER}`, publicRead: false, host: '0.0.0.0' }),
      host: '::ffff:127.0.0.1',
    });
    const port = Number(new URL(node.url).port);
    const from = (localAddress: string, secret: string) =>
      new Promise<{ status: number; peer: string }>((resolve, reject) => {
        const request = httpGet(
          { host: '127.0.0.1', port, localAddress, path: '/v1/collections', headers: bearer(secret) },
          (answer) => {
            answer.resume();
            answer.on('end', () => resolve({ status: answer.statusCode ?? 0, peer: localAddress }));
          },
        );
        request.on('error', reject);
      });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await from('127.0.0.2', `guess-${i}`)).status);
    assert.deepEqual(statuses, [...Array(10).fill(401), 429]);
    assert.equal((await from('127.0.0.2', READER)).status, 429, 'the guessing address is refused');
    assert.equal((await from('127.0.0.3', READER)).status, 200, 'another IPv4 address is not');
  });
});
