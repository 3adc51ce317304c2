// Agenvoy against `serve --compat kuradb --kuradb-endpoint-file`, replayed byte for byte: Agenvoy's KuraDB
// tools (pardnchiu/Agenvoy internal/runtime/kuradb) read the base URL from ~/.config/kuradb/endpoint
// (trimmed), send Go's net/http GET requests (Host, `User-Agent: Go-http-client/1.1`, `Accept-Encoding:
// gzip`, the query as url.Values.Encode: sorted keys, `+` for spaces) on one kept-alive connection, look
// at the status code only, hand the body (at most 1 MiB) to the model and turn a non-2xx into
// `kuradb <path>: status <n>: <body>`. Its health probe is GET /api/health every minute.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Devnet } from '../../src/devnet/index.ts';
import { writeEndpointFile } from '../../src/kuradbEndpoint.ts';
import { TEXT_MAX_CHARS } from '../../src/service/limits.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { startEmbedder } from '../helpers/embedder.ts';
import { type GatewayProcess, spawnGateway } from '../helpers/gatewayProcess.ts';
import { writeAgenvoyDb } from '../helpers/kuradb.ts';

/** Go's url.QueryEscape: only A-Z a-z 0-9 - _ . ~ stay; a space is `+`. */
const queryEscape = (s: string) =>
  encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
/** Go's url.Values.Encode for single values: keys sorted. */
const encodeValues = (values: Record<string, string>) =>
  Object.keys(values)
    .sort()
    .map((k) => `${queryEscape(k)}=${queryEscape(values[k]!)}`)
    .join('&');

/** One HTTP/1.1 response read off the socket: status, headers, body (Content-Length or chunked). */
async function readResponse(socket: Socket): Promise<{ status: number; headers: Map<string, string>; body: Buffer }> {
  let buffer = Buffer.alloc(0);
  const more = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20_000);
      socket.once('data', (chunk: Buffer) => {
        clearTimeout(timer);
        buffer = Buffer.concat([buffer, chunk]);
        resolve();
      });
    });
  while (buffer.indexOf('\r\n\r\n') < 0) await more();
  const end = buffer.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1]);
  const headers = new Map(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  buffer = buffer.subarray(end + 4);
  let body: Buffer;
  if (headers.get('transfer-encoding') === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      while (buffer.indexOf('\r\n') < 0) await more();
      const size = Number.parseInt(buffer.subarray(0, buffer.indexOf('\r\n')).toString(), 16);
      const start = buffer.indexOf('\r\n') + 2;
      while (buffer.length < start + size + 2) await more();
      if (size === 0) break;
      parts.push(buffer.subarray(start, start + size));
      buffer = buffer.subarray(start + size + 2);
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers.get('content-length') ?? 0);
    while (buffer.length < length) await more();
    body = buffer.subarray(0, length);
  }
  // Go's transport asked for gzip itself, so it also undoes it before the caller reads.
  if (headers.get('content-encoding') === 'gzip') body = gunzipSync(body);
  return { status, headers, body };
}

/** Agenvoy's kuradbGet over one kept-alive connection, as Go's default client sends it. */
class Agenvoy {
  #socket: Socket | undefined;
  /** The exact bytes of every request sent. */
  readonly sent: string[] = [];
  constructor(readonly endpointFile: string) {}

  async #connection(host: string, port: number): Promise<Socket> {
    if (this.#socket && !this.#socket.destroyed) return this.#socket;
    const socket = connect({ host, port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    this.#socket = socket;
    return socket;
  }

  async #get(url: string) {
    const u = new URL(url);
    const request = `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n`;
    this.sent.push(request);
    const socket = await this.#connection(u.hostname, Number(u.port));
    socket.write(request, 'latin1');
    return readResponse(socket);
  }

  /** filesystem.GetKuradbEndpoint: the trimmed file. */
  base(): string {
    return readFileSync(this.endpointFile, 'utf8').trim();
  }

  /** kuradbGet: the body on 2xx (at most 1 MiB), else the error Agenvoy returns to the model. */
  async call(path: string, query?: Record<string, string>): Promise<{ ok: string } | { error: string }> {
    let full = this.base().replace(/\/+$/, '') + path;
    if (query && Object.keys(query).length > 0) full += `?${encodeValues(query)}`;
    const { status, body } = await this.#get(full);
    const text = body.subarray(0, 1 << 20).toString('utf8');
    if (status < 200 || status >= 300) return { error: `kuradb ${path}: status ${status}: ${text.trim()}` };
    return { ok: text };
  }

  /** probeHealth: base + /api/health, 2xx. */
  async healthy(): Promise<boolean> {
    const { status } = await this.#get(`${this.base()}/api/health`);
    return status >= 200 && status < 300;
  }

  /** search_rag's handler: trims, `agenvoy` for an empty db, limit outside 1..100 → 10, mode lowercased. */
  searchRag(params: { mode: string; db?: string; q: string; limit?: number }) {
    const db = (params.db ?? '').trim() || 'agenvoy';
    const limit = params.limit !== undefined && params.limit >= 1 && params.limit <= 100 ? params.limit : 10;
    const path = { keyword: '/api/keyword', semantic: '/api/semantic' }[params.mode.trim().toLowerCase()];
    if (!path) throw new Error(`mode must be 'keyword' or 'semantic' (got "${params.mode}")`);
    return this.call(path, { db, q: params.q.trim(), limit: String(limit) });
  }

  close() {
    this.#socket?.destroy();
  }
}

const ok = (answer: { ok: string } | { error: string }) => {
  assert.ok('ok' in answer, 'error' in answer ? answer.error : '');
  return JSON.parse(answer.ok);
};

describe('KuraDB REST API (--compat kuradb), as Agenvoy calls it', () => {
  let devnet: Devnet;
  let embedder: { url: string; server: Server };
  let home: string;
  let endpointFile: string;
  let node: GatewayProcess;
  let agenvoy: Agenvoy;

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    await writeAgenvoyDb(devnet);
    // The flag without a value: KuraDB's own place under the home directory.
    home = mkdtempSync(join(tmpdir(), 'arkivector-kuradb-'));
    endpointFile = join(home, '.config', 'kuradb', 'endpoint');
    node = await spawnGateway(
      [
        ...['--rpc', devnet.url, '--http', '127.0.0.1:0', '--compat', 'kuradb', '--kuradb-endpoint-file'],
        ...['--embedder', embedder.url, '--embedder-model', 'fake'],
      ],
      { HOME: home },
    );
    const ready = await fetch(`${node.url}/v1/collections/agenvoy?min_block=${devnet.headNumber}`);
    assert.equal(ready.status, 200, await ready.text());
    agenvoy = new Agenvoy(endpointFile);
  });
  after(async () => {
    agenvoy?.close();
    await node?.stop();
    embedder?.server.close();
    await devnet?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  test('endpoint file: the base URL where Agenvoy looks; health answers OK', async () => {
    assert.equal(readFileSync(endpointFile, 'utf8').trim(), node.url);
    assert.match(agenvoy.base(), /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await agenvoy.healthy(), true);
    const health = await agenvoy.call('/api/health');
    assert.deepEqual(health, { ok: 'OK' });
  });

  test('list_rag: GET /api/list, the body handed over as is', async () => {
    const answer = await agenvoy.call('/api/list');
    const list = ok(answer);
    assert.deepEqual(list.loaded, ['agenvoy']);
    assert.deepEqual(Object.keys(list), ['loaded', 'registered']);
    assert.deepEqual(
      list.registered.map((r: { db: string; createAt: string }) => [
        r.db,
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(r.createAt),
      ]),
      [['agenvoy', true]],
    );
  });

  test('search_rag (keyword / semantic): grouped chunks; nothing found is an empty array', async () => {
    const keyword = ok(await agenvoy.searchRag({ mode: 'Keyword', q: '  cat sleeps ', limit: 3 }));
    assert.deepEqual(keyword, {
      keyword: [{ source: '/notes/cats.md', matches: [{ chunk: 2, content: 'A cat sleeps most of the day.' }] }],
    });
    assert.equal(
      agenvoy.sent.at(-1),
      `GET /api/keyword?db=agenvoy&limit=3&q=cat+sleeps HTTP/1.1\r\nHost: ${new URL(node.url).host}\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n`,
    );
    const semantic = ok(await agenvoy.searchRag({ mode: 'semantic', db: ' ', q: 'purring cats', limit: 500 }));
    assert.deepEqual(semantic, {
      semantic: [
        {
          source: '/notes/cats.md',
          matches: [
            { chunk: 1, content: 'Cats purr when content.' },
            { chunk: 2, content: 'A cat sleeps most of the day.' },
          ],
        },
        { source: 'loose', matches: [{ chunk: 0, content: 'A note without a source about cats.' }] },
      ],
    });
    assert.deepEqual(ok(await agenvoy.searchRag({ mode: 'keyword', q: 'zebra' })), { keyword: [] });
  });

  test("a q over TEXT_MAX_CHARS is 400 with search_rag's message; one at the bound is searched", async () => {
    const over = await agenvoy.call('/api/keyword', { db: 'agenvoy', q: 'a'.repeat(TEXT_MAX_CHARS + 1) });
    assert.ok('error' in over, 'a q over the bound is refused');
    assert.match(over.error, /status 400: .*q is longer than 8192 characters/);
    assert.deepEqual(ok(await agenvoy.call('/api/keyword', { db: 'agenvoy', q: 'a'.repeat(TEXT_MAX_CHARS) })), {
      keyword: [],
    });
  });

  test('/api/search: both branches by default, one with target; escaped query text arrives intact', async () => {
    const both = ok(await agenvoy.call('/api/search', { db: 'agenvoy', q: 'ferns & "shade"', limit: '10' }));
    assert.deepEqual(Object.keys(both), ['keyword', 'semantic']);
    assert.deepEqual(both.keyword, [
      { source: '/notes/ferns.md', matches: [{ chunk: 0, content: 'Ferns grow in shade.' }] },
    ]);
    assert.equal(both.semantic[0].source, '/notes/ferns.md');
    const one = ok(await agenvoy.call('/api/search', { db: 'agenvoy', q: 'shade', target: 'KEYWORD' }));
    assert.deepEqual(Object.keys(one), ['keyword']);
    // KuraDB runs neither branch for a target it does not know.
    assert.deepEqual(ok(await agenvoy.call('/api/search', { db: 'agenvoy', q: 'shade', target: 'fuzzy' })), {});
  });

  test("errors: KuraDB's statuses and bodies, as Agenvoy reports them", async () => {
    assert.deepEqual(await agenvoy.call('/api/search', { q: 'cats' }), {
      error: 'kuradb /api/search: status 400: {"error":"db is required"}',
    });
    assert.deepEqual(await agenvoy.call('/api/keyword', { db: '', q: 'cats' }), {
      error: 'kuradb /api/keyword: status 400: {"error":"db is required"}',
    });
    assert.deepEqual(await agenvoy.searchRag({ mode: 'semantic', db: 'kb', q: 'cats' }), {
      error: 'kuradb /api/semantic: status 400: {"error":"\\"kb\\" not exist"}',
    });
    assert.deepEqual(await agenvoy.call('/api/search', { db: 'agenvoy' }), {
      error: 'kuradb /api/search: status 400: {"error":"q is required"}',
    });
    // A branch that fails is a 500 with the reason: this node's embedder is gone.
    embedder.server.closeAllConnections();
    await new Promise<void>((resolve) => embedder.server.close(() => resolve()));
    const failed = await agenvoy.searchRag({ mode: 'semantic', q: 'dogs' });
    assert.ok(
      'error' in failed && /^kuradb \/api\/semantic: status 500: \{"error":".+"\}$/.test(failed.error),
      JSON.stringify(failed),
    );
    assert.doesNotMatch((failed as { error: string }).error, /ARKIVECTOR|\bkey\b/i);
  });

  test('the node removes the endpoint file when it stops', async () => {
    assert.ok(existsSync(endpointFile));
    const { code } = await node.stop();
    assert.equal(code, 0);
    assert.equal(existsSync(endpointFile), false);
  });
});

test('endpoint file: a file another process wrote after the node is left in place', () => {
  const dir = mkdtempSync(join(tmpdir(), 'arkivector-kuradb-'));
  try {
    const path = join(dir, 'nested', 'endpoint');
    const first = writeEndpointFile(path, 'http://127.0.0.1:1111');
    assert.equal(first.replaced, undefined);
    assert.equal(readFileSync(path, 'utf8').trim(), 'http://127.0.0.1:1111');
    // A KuraDB started later writes its own URL: our exit must not take it away.
    writeFileSync(path, 'http://localhost:2222');
    first.remove();
    assert.equal(readFileSync(path, 'utf8'), 'http://localhost:2222');
    const second = writeEndpointFile(path, 'http://127.0.0.1:3333');
    assert.equal(second.replaced, 'http://localhost:2222');
    second.remove();
    second.remove();
    assert.equal(existsSync(path), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
