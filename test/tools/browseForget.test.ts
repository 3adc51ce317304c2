// Browse and forget, as a memory user expects (issue 9 item 4): a gateway with a signer (in-process
// `startGateway` following a devnet) driven with the MCP SDK's real Client over streamable HTTP and with
// REST. Lists memories by topic page by page while new writes, updates and deletes land (every page stays
// at the first page's block), refuses forged, foreign and expired cursors, answers the same on REST, and
// forgets by filter: dry run first, then for real, skipping another writer's memory.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { batches, DELETES_PER_TX } from '../../src/service/delete.ts';
import { decodeCursor, encodeCursor } from '../../src/service/listEntities.ts';
import { DELETE_BY_FILTER_MAX, LIST_PINNED_MAX } from '../../src/service/limits.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const MEMORIES: CollectionDefinition = {
  dim: 3,
  metric: 'cosine',
  open: true,
  attributes: { topic: 'str' },
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  writers: [],
};

type Problem = { code: string; status: number; detail: string; errors?: { path: string }[] };
type Listed = {
  key: string;
  id: string;
  owner: string;
  last_modified_block: number;
  document?: string;
  attributes: Record<string, { type: string; value: unknown }>;
};
type Page = {
  as_of_block: number;
  sync_state: string;
  order: string;
  total: number;
  entities: Listed[];
  next_cursor: string | null;
};
type Deleted = {
  dry_run: boolean;
  results: { id: string; key: string }[];
  tx_hashes: string[];
  block_number: number | null;
  transactions: number;
  matched: number;
  skipped: { reason: string; count: number }[];
  remaining: number;
  as_of_block: number;
};

const ok = <T>(result: unknown) => {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent as T;
};
const problem = (result: unknown): Problem => {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
  return JSON.parse((r.content[0] as { text: string }).text) as Problem;
};

/** The order the listing promises: last-modified block, then entity key, both descending. */
const newestFirst = (a: Listed, b: Listed) =>
  b.last_modified_block - a.last_modified_block || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0);

describe('browse and forget memories (MCP and REST)', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let client: Client;
  let dir: string;
  let signer: string;
  const trip = "topic = str('trip')";

  const call = async (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const list = async (args: Record<string, unknown>) =>
    ok<Page>(await call('arkivector_list_entities', { collection: 'memories', ...args }));
  const remember = async (entities: { id: string; topic: string; text: string }[]) =>
    ok<{ block_number: number }>(
      await call('arkivector_upsert', {
        collection: 'memories',
        entities: entities.map((e, i) => ({
          id: e.id,
          vector: [1, i + 1, 0.5],
          document: e.text,
          attributes: { topic: e.topic },
        })),
      }),
    );

  before(async () => {
    devnet = await startTestDevnet();
    dir = await mkdtemp(join(tmpdir(), 'arkivector-browse-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    signer = defined(devnet.accounts[1], 'devnet.accounts[1]').address.toLowerCase();
    gateway = await startGateway(
      parseServeConfig(
        ['--rpc', devnet.url, '--ws', devnet.wsUrl, '--http', '127.0.0.1:0', '--private-key-file', join(dir, 'key')],
        {},
      ),
      createLogger('silent'),
    );
    client = new Client({ name: 'arkivector-browse-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.httpUrl}/mcp`)));
    const created = (await (
      await fetch(`${gateway.httpUrl}/v1/collections`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'memories', ...MEMORIES }),
      })
    ).json()) as { block_number: number };
    assert.ok(created.block_number > 0, JSON.stringify(created));
    // Three blocks of memories by this node's signer, and one trip memory by another writer (the SDK).
    await remember([
      { id: 'lisbon', topic: 'trip', text: 'Flew to Lisbon in May.' },
      { id: 'porto', topic: 'trip', text: 'Took the train to Porto.' },
      { id: 'sushi', topic: 'food', text: 'Likes salmon sushi.' },
    ]);
    await remember([
      { id: 'sintra', topic: 'trip', text: 'Day trip to Sintra.' },
      { id: 'faro', topic: 'trip', text: 'Beach week in Faro.' },
    ]);
    await remember([
      { id: 'tea', topic: 'food', text: 'Drinks green tea.' },
      { id: 'evora', topic: 'trip', text: 'Wine tasting in Evora.' },
    ]);
    await walletClient(devnet, 2).createEntity(
      vectorArgs(
        'memories',
        {
          id: 'their-trip',
          vector: [0, 0, 1],
          document: 'Someone else went to Madrid.',
          attributes: { topic: 'trip' },
        },
        MEMORIES,
      ),
    );
    await list({ min_block: devnet.headNumber });
  });
  after(async () => {
    await client?.close();
    await gateway?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('tools/list: arkivector_list_entities is a read tool with a bounded limit', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'arkivector_list_entities');
    assert.equal(tool?.annotations?.readOnlyHint, true);
    assert.ok(tool);
    const limit = defined(
      (tool.inputSchema.properties as Record<string, { minimum?: number; maximum?: number }>).limit,
      'the limit property',
    );
    assert.equal(limit.minimum, 1);
    assert.equal(limit.maximum, 100);
  });

  test('a page of memories by topic, newest first, with documents on request', async () => {
    const page = await list({ where: trip, limit: 3, include_document: true });
    assert.equal(page.total, 6);
    assert.equal(page.order, 'newest');
    assert.equal(page.entities.length, 3);
    assert.ok(page.next_cursor);
    assert.ok(page.entities.every((e) => e.attributes.topic?.value === 'trip' && typeof e.document === 'string'));
    assert.deepEqual(page.entities, [...page.entities].sort(newestFirst));
    // The newest trip memory is the other writer's, written last.
    assert.equal(defined(page.entities[0], 'page.entities[0]').id, 'their-trip');
    const bare = await list({ where: trip, limit: 1 });
    assert.equal(defined(bare.entities[0], 'bare.entities[0]').document, undefined);
    const oldest = await list({ where: trip, limit: 2, order: 'oldest' });
    assert.deepEqual(
      oldest.entities.map((e) => e.id).sort(),
      ['lisbon', 'porto'],
      'the first block of trips comes first',
    );
  });

  test('paging with the cursor while writes land: every page answers from the first page’s block', async () => {
    const first = await list({ where: trip, limit: 2 });
    const pinned = first.as_of_block;
    const before = (await list({ where: trip, limit: 100 })).entities;
    assert.equal(before.length, 6);
    // New writes after the first page: a new trip, an update of a listed trip (moves it to the top of a
    // fresh listing), and a delete of one that a later page would show.
    const wrote = await remember([
      { id: 'braga', topic: 'trip', text: 'Hiked near Braga.' },
      { id: 'lisbon', topic: 'trip', text: 'Flew to Lisbon in May, again in June.' },
    ]);
    const sintra = before.find((e) => e.id === 'sintra')!;
    const removed = ok<Deleted>(
      await call('arkivector_delete', { collection: 'memories', refs: ['sintra'], dry_run: false }),
    );
    assert.ok(removed.block_number! > pinned && wrote.block_number > pinned);
    const seen: Listed[] = [...first.entities];
    let cursor = first.next_cursor;
    for (let i = 0; cursor && i < 10; i++) {
      const page = await list({ where: trip, limit: 2, cursor });
      assert.equal(page.as_of_block, pinned, 'a later page answers from the first page’s block');
      assert.equal(page.total, 6);
      seen.push(...page.entities);
      cursor = page.next_cursor;
    }
    assert.equal(cursor, null);
    assert.deepEqual(seen, before, 'the pages together are the listing at the first block, in order');
    assert.ok(
      seen.some((e) => e.key === sintra.key),
      'the entity deleted since is still on its page',
    );
    assert.ok(!seen.some((e) => e.id === 'braga'), 'a later write is not mixed in');
    // A fresh listing sees the new block.
    const fresh = await list({ where: trip, limit: 100 });
    assert.ok(fresh.as_of_block >= removed.block_number!);
    assert.deepEqual(
      fresh.entities
        .map((e) => e.id)
        .slice(0, 2)
        .sort(),
      ['braga', 'lisbon'],
    );
    assert.ok(!fresh.entities.some((e) => e.id === 'sintra'));
  });

  test('REST GET /v1/collections/{c}/entities answers the same pages as the tool', async () => {
    const mcpFirst = await list({ where: trip, limit: 2, include_document: true });
    const rest = async (query: string) => {
      const response = await fetch(`${gateway.httpUrl}/v1/collections/memories/entities?${query}`);
      return { status: response.status, body: (await response.json()) as Page & Problem };
    };
    const where = encodeURIComponent(trip);
    const restFirst = await rest(`where=${where}&limit=2&include_document=true`);
    assert.equal(restFirst.status, 200);
    assert.deepEqual(restFirst.body, mcpFirst);
    // The second page from either surface, with the same cursor, is the same page.
    const cursor = mcpFirst.next_cursor!;
    const mcpSecond = await list({ where: trip, limit: 2, include_document: true, cursor });
    const restSecond = await rest(`where=${where}&limit=2&include_document=true&cursor=${cursor}`);
    assert.deepEqual(restSecond.body, mcpSecond);
    // filter (JSON) works as a query parameter too, and bad JSON is invalid_argument.
    const byFilter = await rest(`filter=${encodeURIComponent(JSON.stringify({ eq: { topic: 'food' } }))}`);
    assert.deepEqual(byFilter.body.entities.map((e) => e.id).sort(), ['sushi', 'tea']);
    const badJson = await rest('filter=%7Bnope');
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body.code, 'invalid_argument');
    const badLimit = await rest('limit=101');
    assert.equal(badLimit.status, 400);
    assert.equal(defined(badLimit.body.errors?.[0], 'badLimit.body.errors?.[0]').path, 'limit');
  });

  test('forged, foreign and expired cursors are invalid_argument, never a crash', async () => {
    const first = await list({ where: trip, limit: 1 });
    const real = decodeCursor(first.next_cursor!);
    const forged = [
      'not a cursor!',
      'e30',
      Buffer.from('[1,2,3]').toString('base64url'),
      Buffer.from(JSON.stringify({ ...real, v: 2 })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...real, k: 'lisbon' })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...real, m: real.b + 1 })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...real, extra: 1 })).toString('base64url'),
    ];
    for (const cursor of forged) {
      const p = problem(await call('arkivector_list_entities', { collection: 'memories', where: trip, cursor }));
      assert.equal(p.code, 'invalid_argument', cursor);
      assert.equal(defined(p.errors?.[0], 'p.errors?.[0]').path, 'cursor', cursor);
    }
    // A cursor of one query does not continue another.
    const foreign = problem(
      await call('arkivector_list_entities', { collection: 'memories', cursor: first.next_cursor }),
    );
    assert.equal(foreign.code, 'invalid_argument');
    assert.match(foreign.detail, /another listing/);
    // A cursor for a block this node has passed and no longer holds a listing of: expired, not a mixed page.
    const old = encodeCursor({ b: first.as_of_block - 1, m: real.m > 0 ? real.m - 1 : 0, k: real.k, q: real.q });
    const expired = problem(
      await call('arkivector_list_entities', { collection: 'memories', where: trip, cursor: old }),
    );
    assert.equal(expired.code, 'invalid_argument');
    assert.match(expired.detail, /cursor expired/);
  });

  test(`a listing is kept while ${LIST_PINNED_MAX} newer ones are taken, then its cursor expires once the node moves on`, async () => {
    const first = await list({ where: trip, limit: 1 });
    // LIST_PINNED_MAX other listings with more pages push it out (distinct queries: different orders
    // and filters).
    for (let i = 0; i < LIST_PINNED_MAX; i++)
      await list({ where: `${trip} && $key != '0x${i.toString(16).padStart(64, '0')}'`, limit: 1 });
    // At the same block the page is recomputed (any node at that block could answer it).
    const same = await list({ where: trip, limit: 1, cursor: first.next_cursor });
    assert.equal(same.as_of_block, first.as_of_block);
    for (let i = 0; i < LIST_PINNED_MAX; i++)
      await list({ where: `${trip} && $key != '0x${(i + 100).toString(16).padStart(64, '0')}'`, limit: 1 });
    // The node moves on: the pushed-out listing cannot be answered any more.
    await remember([{ id: 'coimbra', topic: 'trip', text: 'Visited the old university in Coimbra.' }]);
    const expired = problem(
      await call('arkivector_list_entities', {
        collection: 'memories',
        where: trip,
        limit: 1,
        cursor: first.next_cursor,
      }),
    );
    assert.equal(expired.code, 'invalid_argument');
    assert.match(expired.detail, /cursor expired/);
  });

  test('forget by filter: dry run first (counts entities and transactions, skips another writer’s), then for real', async () => {
    const listed = await list({ where: trip, limit: 100 });
    const mine = listed.entities.filter((e) => e.owner === signer);
    assert.ok(mine.length >= 5 && mine.length < listed.total);
    const dry = ok<Deleted>(await call('arkivector_delete', { collection: 'memories', where: trip }));
    assert.equal(dry.dry_run, true);
    assert.equal(dry.matched, listed.total);
    assert.deepEqual(dry.skipped, [{ reason: 'not_owner', count: 1 }]);
    assert.equal(dry.transactions, 1);
    assert.equal(dry.remaining, 0);
    assert.deepEqual(dry.tx_hashes, []);
    assert.deepEqual(dry.results.map((r) => r.key).sort(), mine.map((e) => e.key).sort());
    assert.equal((await list({ where: trip })).total, listed.total, 'a dry run deletes nothing');
    // REST dry run (the default there too) says the same.
    const restDry = (await (
      await fetch(`${gateway.httpUrl}/v1/collections/memories/entities?where=${encodeURIComponent(trip)}`, {
        method: 'DELETE',
      })
    ).json()) as Deleted;
    assert.deepEqual(restDry, dry);
    // REST also takes several refs (a dry run unless dry_run=false).
    const restRefs = (await (
      await fetch(`${gateway.httpUrl}/v1/collections/memories/entities?ref=tea&ref=sushi`, { method: 'DELETE' })
    ).json()) as Deleted;
    assert.equal(restRefs.dry_run, true);
    assert.deepEqual(restRefs.results.map((r) => r.id).sort(), ['sushi', 'tea']);
    // refs and where together are refused.
    const both = problem(
      await call('arkivector_delete', { collection: 'memories', where: trip, refs: ['porto'], dry_run: false }),
    );
    assert.equal(both.code, 'invalid_argument');
    const real = ok<Deleted>(await call('arkivector_delete', { collection: 'memories', where: trip, dry_run: false }));
    assert.equal(real.dry_run, false);
    assert.equal(real.tx_hashes.length, 1);
    assert.deepEqual(real.results.map((r) => r.key).sort(), mine.map((e) => e.key).sort());
    const after = await list({ where: trip, min_block: real.block_number!, limit: 100 });
    assert.deepEqual(
      after.entities.map((e) => e.id),
      ['their-trip'],
      'only the other writer’s memory is left',
    );
    assert.equal((await list({ filter: { eq: { topic: 'food' } } })).total, 2, 'other topics are untouched');
    // Nothing of this signer is left to forget.
    const again = ok<Deleted>(await call('arkivector_delete', { collection: 'memories', where: trip }));
    assert.deepEqual(again.results, []);
    assert.equal(again.transactions, 0);
  });

  test(`a delete by filter of more than ${DELETES_PER_TX} entities goes out in batches of ${DELETES_PER_TX}`, async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${gateway.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.clone().text());
    };
    await post('/v1/collections', { name: 'bulk', ...MEMORIES });
    const n = DELETES_PER_TX + 1;
    for (let start = 0; start < n; start += 100)
      await post('/v1/collections/bulk/entities', {
        entities: Array.from({ length: Math.min(100, n - start) }, (_, i) => ({
          id: `m${start + i}`,
          vector: [1, (start + i) / n, 0],
          attributes: { topic: 'old' },
        })),
      });
    const dry = ok<Deleted>(await call('arkivector_delete', { collection: 'bulk', where: "topic = 'old'" }));
    assert.equal(dry.results.length, n);
    assert.equal(dry.transactions, 2);
    const real = ok<Deleted>(
      await call('arkivector_delete', { collection: 'bulk', where: "topic = 'old'", dry_run: false }),
    );
    assert.equal(real.tx_hashes.length, 2);
    assert.equal(real.transactions, 2);
    const left = ok<{ count: number }>(
      await call('arkivector_count', { collection: 'bulk', min_block: real.block_number! }),
    );
    assert.equal(left.count, 0);
  });

  test(`a delete by filter removes at most ${DELETE_BY_FILTER_MAX} entities per call and says how many remain`, async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${gateway.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.clone().text());
    };
    await post('/v1/collections', { name: 'huge', ...MEMORIES });
    const n = DELETE_BY_FILTER_MAX + 1;
    for (let start = 0; start < n; start += 100)
      await post('/v1/collections/huge/entities', {
        wait: start + 100 >= n ? 'indexed' : 'receipt',
        entities: Array.from({ length: Math.min(100, n - start) }, (_, i) => ({
          id: `h${start + i}`,
          vector: [1, (start + i) / n, 0],
          attributes: { topic: 'old' },
        })),
      });
    const dry = ok<Deleted>(await call('arkivector_delete', { collection: 'huge', where: "topic = 'old'" }));
    assert.equal(dry.matched, n);
    assert.equal(dry.results.length, DELETE_BY_FILTER_MAX);
    assert.equal(dry.remaining, 1);
    assert.equal(dry.transactions, Math.ceil(DELETE_BY_FILTER_MAX / DELETES_PER_TX));
  });

  test('after a reorg, a kept listing is not served: its cursor expires instead of showing dropped entities', async () => {
    for (const id of ['r1', 'r2', 'r3']) await remember([{ id, topic: 'reorg', text: `memory ${id}` }]);
    const first = await list({ where: "topic = 'reorg'", limit: 1, min_block: devnet.headNumber });
    assert.equal(first.total, 3);
    assert.ok(first.next_cursor);
    // The last two blocks (r2, r3) are replaced by empty ones; the new chain is one block longer.
    devnet.reorg(2, { replay: false });
    const fresh = await list({ where: "topic = 'reorg'", min_block: devnet.headNumber });
    assert.deepEqual(
      fresh.entities.map((e) => e.id),
      ['r1'],
    );
    const p = problem(
      await call('arkivector_list_entities', {
        collection: 'memories',
        where: "topic = 'reorg'",
        limit: 1,
        cursor: first.next_cursor,
      }),
    );
    assert.equal(p.code, 'invalid_argument');
    assert.match(p.detail, /cursor expired/);
  });

  test('deletes are batched within the chain’s per-transaction limit (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 3000 }),
        fc.integer({ min: 1, max: DELETES_PER_TX }),
        (items, size) => {
          const out = batches(items, size);
          assert.deepEqual(out.flat(), items);
          assert.equal(out.length, Math.ceil(items.length / size));
          assert.ok(out.every((b, i) => b.length > 0 && (i === out.length - 1 ? b.length <= size : b.length === size)));
        },
      ),
    );
  });
});
