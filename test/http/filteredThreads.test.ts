// Filtered searches on threads over REST and MCP (issue 23 item 5): with the native engine, a filtered
// vector search and a hybrid one make their graph calls on threads (the exact scan of a few allowed
// records, the filtered walk, the post-filter's walk); the answer over REST and over MCP must be the one
// the store's synchronous search gives at the same block.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CollectionStore } from '../../src/engine/index.ts';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp, type HttpServer } from '../../src/http/index.ts';
import { createCollection, upsert } from '../../src/service/index.ts';
import { clustered, mulberry32 } from '../engine/helpers.ts';
import { type Generation, startGeneration } from '../helpers/generations.ts';
import { call, captureLogger } from './fixture.ts';

const N = 2_500;
const DIM = 384;
const BATCH = 100;
/**
 * At 2,500 records and ef_search 10 (a width of 25): up to 1,000 passing are scanned exactly (on a thread
 * from 683 at 384 dimensions), from 2,200 the post-filter answers, between them the filtered walk.
 */
const WHERES = ['band < 10', 'band < 35', 'band < 60', 'band < 95', "topic = 'a'", 'band >= 20 && band < 70'];
const QUERIES = 6;

/** Counts the calls made to HalfGraph's methods on threads (the real methods run). */
const counts = { searchAsync: 0, exactAsync: 0, filteredAsync: 0 };
const proto = HalfGraph.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const originals = new Map<string, (...args: unknown[]) => unknown>();

describe('filtered searches on threads over REST and MCP', () => {
  let gen: Generation;
  let server: HttpServer;
  let client: Client;
  let store: CollectionStore;
  const engineBefore = process.env[ENGINE_ENV];
  before(async () => {
    process.env[ENGINE_ENV] = 'native';
    gen = await startGeneration('v1');
    await createCollection(gen.ctx, {
      name: 'bands',
      dim: DIM,
      metric: 'cosine',
      attributes: { band: 'uint', topic: 'str' },
      index: { m: 8, ef_construction: 32, ef_search: 10 },
      wait: 'indexed',
    });
    const data = clustered(N, DIM, 4).vectors;
    const rand = mulberry32(4);
    for (let from = 0; from < N; from += BATCH) {
      const entities = data.slice(from, from + BATCH).map((v, j) => ({
        id: `e${from + j}`,
        vector: Array.from(v),
        document: `document ${from + j} ${(from + j) % 2 === 0 ? 'even' : 'odd'}`,
        attributes: { band: Math.floor(rand() * 100), topic: v[0]! > 0 ? 'a' : 'b' },
      }));
      await upsert(gen.ctx, { collection: 'bands', entities, wait: from + BATCH >= N ? 'indexed' : 'receipt' });
    }
    store = gen.indexer.collections.get('bands')!.store;
    assert.equal(store.size, N);
    const { logger } = captureLogger();
    const ctx = gen.ctx;
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const app = createHttpApp({ ctx, access, metrics: createMetrics(ctx), logger, mcp: { ctx, logger } });
    server = await serveHttp({ host: '127.0.0.1', port: 0, app });
    client = new Client({ name: 'filtered-threads', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    for (const name of Object.keys(counts)) {
      const original = proto[name]!;
      originals.set(name, original);
      proto[name] = function (this: unknown, ...args: unknown[]) {
        counts[name as keyof typeof counts]++;
        return original.apply(this, args);
      };
    }
  });
  after(async () => {
    for (const [name, original] of originals) proto[name] = original;
    await client?.close();
    await server?.close();
    await gen?.close();
    if (engineBefore === undefined) delete process.env[ENGINE_ENV];
    else process.env[ENGINE_ENV] = engineBefore;
  });

  test('each filtered and hybrid answer over REST and MCP is the synchronous search of its block', async () => {
    const rand = mulberry32(9);
    const queries = Array.from({ length: QUERIES }, () => Array.from({ length: DIM }, () => rand() * 2 - 1));
    const modes = new Set<string>();
    for (const where of WHERES) {
      for (const [qi, vector] of queries.entries()) {
        const mode = qi % 3 === 2 ? 'hybrid' : 'vector';
        const args = { vector, k: 10, where, mode, ...(mode === 'hybrid' ? { text: 'even' } : {}) };
        const expected =
          mode === 'hybrid'
            ? store.hybridSearch({ vector, text: 'even', k: 10, where })
            : store.search({ vector, k: 10, where });
        modes.add(expected.search_mode);
        const want = {
          search_mode: expected.search_mode,
          results: expected.results.map((h) => ({ id: h.record.id, distance: h.distance, score: h.score })),
        };
        const got = (body: { search_mode: string; results: { id: string; distance: number; score: number }[] }) => ({
          search_mode: body.search_mode,
          results: body.results.map((r) => ({ id: r.id, distance: r.distance, score: r.score })),
        });
        const rest = await call(`${server.url}/v1/collections/bands/search`, { method: 'POST', json: args });
        assert.equal(rest.status, 200, JSON.stringify(rest.body));
        assert.deepEqual(got(rest.body), want, `REST ${mode} ${where}, query ${qi}`);
        const mcp = await client.callTool({ name: 'arkivector_search', arguments: { collection: 'bands', ...args } });
        assert.notEqual(mcp.isError, true, JSON.stringify(mcp.content));
        assert.deepEqual(got(mcp.structuredContent as never), want, `MCP ${mode} ${where}, query ${qi}`);
      }
    }
    assert.deepEqual([...modes].sort(), ['exact', 'hnsw']);
    // Each kind of graph call went to a thread: the walk, the post-filter's walk, the scan of the allowed.
    for (const [name, n] of Object.entries(counts)) assert.ok(n > 0, `${name}: ${n} calls`);
  });
});
