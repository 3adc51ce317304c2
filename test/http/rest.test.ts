// REST routes of the README's "REST API" over a real socket: each read route's answer checked against what was
// written through the SDK and against the service's own answer, and the problem objects of §8.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import {
  MAX_REQUEST_BYTES,
  count,
  get,
  getCollection,
  listCollections,
  search,
  status,
} from '../../src/service/index.ts';
import {
  assertProblem,
  call,
  NOTE_ENTITIES,
  NOTES,
  PROBLEM_TYPE,
  startChain,
  type Chain,
  type Node,
} from './fixture.ts';
import { LIST_LIMIT_MAX } from '../../src/service/limits.ts';
import { defined } from '../helpers/defined.ts';

describe('http: REST routes', () => {
  let chain: Chain;
  let node: Node;
  let alice: string;

  before(async () => {
    chain = await startChain();
    node = await chain.node();
    alice = defined(chain.devnet.accounts[0], 'chain.devnet.accounts[0]').address.toLowerCase();
  });
  after(() => chain.close());

  const url = (path: string) => `${node.url}${path}`;

  test('GET /v1/collections: the written collection, equal to the service answer', async () => {
    const answer = await call(url('/v1/collections'));
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual(answer.body, await listCollections(chain.ctx, {}));
    assert.equal(answer.body.as_of_block, chain.indexer.asOfBlock);
    assert.equal(answer.body.sync_state, 'live');
    const notes = defined(answer.body.collections[0], 'the notes collection');
    assert.equal(answer.body.collections.length, 1);
    assert.equal(notes.name, 'notes');
    assert.equal(notes.column, 'halfvec(4)');
    assert.equal(notes.dim, NOTES.dim);
    assert.equal(notes.metric, 'cosine');
    assert.deepEqual(notes.index, {
      type: 'hnsw',
      opclass: 'halfvec_cosine_ops',
      m: 16,
      ef_construction: 64,
      ef_search: 40,
    });
    assert.deepEqual(notes.attributes, { topic: 'str', stars: 'i32' });
    assert.equal(notes.open, true);
    assert.equal(notes.owner, alice);
    assert.deepEqual(notes.stats, { live_entities: NOTE_ENTITIES.length, rejected: 0, shadowed: 0 });
  });

  test('GET /v1/collections/:c: the Collection object; args: min_block', async () => {
    const answer = await call(url(`/v1/collections/notes?min_block=${chain.writtenAt}`));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, await getCollection(chain.ctx, { collection: 'notes' }));
    assert.equal(answer.body.stats.live_entities, NOTE_ENTITIES.length);
  });

  test('POST /v1/collections/:c/search: nearest with filter and documents, equal to the service answer', async () => {
    const args = { vector: [1, 0.05, 0, 0], k: 2, where: "topic = str('pets')", include_document: true };
    const answer = await call(url('/v1/collections/notes/search'), { method: 'POST', json: args });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, await search(chain.ctx, { ...args, collection: 'notes' }));
    assert.deepEqual(
      answer.body.results.map((r: { id: string }) => r.id),
      ['cat', 'dog'],
    );
    const cat = defined(answer.body.results[0], 'the first result');
    assert.equal(cat.document, 'Cats purr.');
    assert.deepEqual(cat.attributes, { stars: { type: 'i32', value: 5 }, topic: { type: 'str', value: 'pets' } });
    assert.ok(cat.score > 0.99 && cat.score <= 1);
    assert.equal(answer.body.open_collection, true);
    assert.equal(answer.body.mode, 'vector');
    assert.equal(answer.body.as_of_block, chain.indexer.asOfBlock);
  });

  test('POST /v1/collections/:c/search: args: JSON filter, keyword mode, defaults', async () => {
    const filtered = await call(url('/v1/collections/notes/search'), {
      method: 'POST',
      json: { vector: [1, 0, 0, 0], filter: { lte: { stars: 3 } } },
    });
    assert.equal(filtered.status, 200);
    assert.deepEqual(filtered.body.results.map((r: { id: string }) => r.id).sort(), ['a/b c?#%é', 'fern']);
    assert.equal(filtered.body.results[0].document, undefined, 'include_document defaults to false');
    const keyword = await call(url('/v1/collections/notes/search'), {
      method: 'POST',
      json: { text: 'ferns shade', mode: 'keyword', k: 1 },
    });
    assert.equal(keyword.status, 200);
    assert.deepEqual(
      keyword.body.results.map((r: { id: string }) => r.id),
      ['fern'],
    );
  });

  test('POST /v1/collections/:c/count: all, where and filter', async () => {
    const all = await call(url('/v1/collections/notes/count'), { method: 'POST', json: {} });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, await count(chain.ctx, { collection: 'notes' }));
    assert.equal(all.body.count, NOTE_ENTITIES.length);
    const empty = await call(url('/v1/collections/notes/count'), { method: 'POST' });
    assert.equal(empty.body.count, NOTE_ENTITIES.length, 'an empty body counts everything');
    const where = await call(url('/v1/collections/notes/count'), { method: 'POST', json: { where: 'stars >= 4' } });
    assert.equal(where.body.count, 2);
    const both = await call(url('/v1/collections/notes/count'), {
      method: 'POST',
      json: { where: "topic = str('pets')", filter: { eq: { stars: 5 } } },
    });
    assert.equal(both.body.count, 1);
  });

  test('GET /v1/collections/:c/entities/:ref: by id, by key, percent-encoded id, include_document', async () => {
    const plain = await call(url('/v1/collections/notes/entities/cat'));
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, await get(chain.ctx, { collection: 'notes', ref: 'cat' }));
    assert.equal(plain.body.entity.id, 'cat');
    assert.equal(plain.body.entity.owner, alice);
    assert.equal(plain.body.entity.document, undefined);
    assert.deepEqual(plain.body.entity.attributes, {
      stars: { type: 'i32', value: 5 },
      topic: { type: 'str', value: 'pets' },
    });

    const withDoc = await call(
      url(`/v1/collections/notes/entities/cat?include_document=true&min_block=${chain.writtenAt}`),
    );
    assert.equal(withDoc.body.entity.document, 'Cats purr.');

    const byKey = await call(url(`/v1/collections/notes/entities/${plain.body.entity.key}`));
    assert.equal(byKey.status, 200);
    assert.equal(byKey.body.entity.id, 'cat');

    const odd = defined(NOTE_ENTITIES[3], 'NOTE_ENTITIES[3]');
    const encoded = await call(
      url(`/v1/collections/notes/entities/${encodeURIComponent(odd.id)}?include_document=true`),
    );
    assert.equal(encoded.status, 200, JSON.stringify(encoded.body));
    assert.equal(encoded.body.entity.id, odd.id);
    assert.equal(encoded.body.entity.document, odd.document);
  });

  test('a malformed percent-escape in a path or query is invalid_argument, not a literal lookup', async () => {
    // Looked up literally (escaped as it should have been) the cut escape is an unknown id.
    const literal = 'caf%C3';
    const asId = await call(url(`/v1/collections/notes/entities/${encodeURIComponent(literal)}`));
    assertProblem(asId, 404, 'entity_not_found');
    for (const path of [
      `/v1/collections/notes/entities/${literal}`,
      '/v1/collections/notes/entities/%ZZ',
      '/v1/collections/no%E0%A4tes/entities/cat',
      '/v1/collections/notes%/count',
    ]) {
      const answer = await call(url(path));
      assertProblem(answer, 400, 'invalid_argument');
      assert.deepEqual(answer.body.errors, [{ path: 'path', message: 'malformed percent-escape' }], path);
    }
    // A well-formed escape still decodes: `%63at` is `cat`.
    assert.equal((await call(url('/v1/collections/notes/entities/%63at'))).body.entity.id, 'cat');
    // In a query string too: a where naming `caf%C3` literally would just match nothing.
    const query = await call(url("/v1/collections/notes/entities?where=topic%20%3D%20'caf%C3'"));
    assertProblem(query, 400, 'invalid_argument');
    assert.deepEqual(query.body.errors, [{ path: 'query', message: 'malformed percent-escape' }]);
    const wellFormed = await call(url("/v1/collections/notes/entities?where=topic%20%3D%20'caf%C3%A9'"));
    assert.equal(wellFormed.status, 200, JSON.stringify(wellFormed.body));
  });

  test('GET /v1/status: chain, blocks and sync state', async () => {
    const answer = await call(url('/v1/status'));
    assert.equal(answer.status, 200);
    // head_seen_at moves at every poll of the head (four a block here): the rest is the same answer.
    const { head_seen_at: seenAt, ...rest } = answer.body;
    const { head_seen_at: _, ...expected } = await status(chain.ctx);
    assert.deepEqual(rest, expected);
    assert.ok(Date.parse(seenAt) <= Date.now(), `head_seen_at ${seenAt}`);
    assert.equal(answer.body.chain_id, chain.devnet.chainId);
    assert.equal(answer.body.as_of_block, chain.indexer.asOfBlock);
    assert.equal(answer.body.head_block, chain.devnet.headNumber);
    assert.equal(answer.body.lag, 0);
    assert.equal(answer.body.sync_state, 'live');
    assert.equal(answer.body.collections, 1);
    assert.equal(answer.body.signer, null);
  });

  test('error: collection_not_found on every collection route', async () => {
    for (const [method, path] of [
      ['GET', '/v1/collections/nope'],
      ['POST', '/v1/collections/nope/search'],
      ['POST', '/v1/collections/nope/count'],
      ['GET', '/v1/collections/nope/entities/cat'],
    ] as const) {
      const answer = await call(url(path), method === 'POST' ? { method, json: { vector: [1, 0, 0, 0] } } : { method });
      assertProblem(answer, 404, 'collection_not_found');
      assert.equal(answer.body.collection, 'nope');
    }
  });

  test('error: entity_not_found', async () => {
    const answer = await call(url('/v1/collections/notes/entities/unicorn'));
    assertProblem(answer, 404, 'entity_not_found');
    assert.equal(answer.body.ref, 'unicorn');
  });

  test('error: invalid_argument with the zod issue list', async () => {
    const badK = await call(url('/v1/collections/notes/search'), {
      method: 'POST',
      json: { vector: [1, 0, 0, 0], k: 0 },
    });
    assertProblem(badK, 400, 'invalid_argument');
    assert.ok(Array.isArray(badK.body.errors));
    assert.equal(badK.body.errors[0].path, 'k');
    assert.equal(typeof badK.body.errors[0].message, 'string');

    const badQuery = await call(url('/v1/collections/notes/entities/cat?include_document=yes&min_block=-1'));
    assertProblem(badQuery, 400, 'invalid_argument');
    assert.deepEqual(badQuery.body.errors.map((e: { path: string }) => e.path).sort(), [
      'include_document',
      'min_block',
    ]);

    const badMinBlock = await call(url('/v1/collections?min_block=abc'));
    assertProblem(badMinBlock, 400, 'invalid_argument');
    assert.equal(badMinBlock.body.errors[0].path, 'min_block');

    // A negative number is a number out of range, not "expected number, received string".
    const negative = await call(url('/v1/collections/notes/entities?limit=-1'));
    assertProblem(negative, 400, 'invalid_argument');
    assert.equal(negative.body.errors[0].path, 'limit');
    assert.match(negative.body.errors[0].message, />=\s*1/);
    assert.doesNotMatch(negative.body.detail, /received string/);

    // Number literals a JSON body could hold: the bound they break, not "received string".
    for (const [query, message] of [
      ['limit=1.5', /expected int/],
      ['min_block=1e20', /too big|<=/i],
      ['limit=1e3', new RegExp(`<=\\s*${LIST_LIMIT_MAX}\\b`)],
    ] as const) {
      const answer = await call(url(`/v1/collections/notes/entities?${query}`));
      assertProblem(answer, 400, 'invalid_argument');
      assert.equal(answer.body.errors[0].path, query.split('=')[0], query);
      assert.match(answer.body.errors[0].message, message, query);
      assert.doesNotMatch(answer.body.detail, /received string/, query);
    }
    // `1e1` is 10, as in a JSON body.
    const literal = await call(url('/v1/collections/notes/entities?limit=1e1'));
    assert.equal(literal.status, 200, JSON.stringify(literal.body));
  });

  test('error: invalid_argument for bodies that are not a JSON object, or name another collection', async () => {
    const notJson = await call(url('/v1/collections/notes/search'), {
      method: 'POST',
      body: '{"vector": [1,',
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(notJson, 400, 'invalid_argument');
    assert.match(notJson.body.detail, /not valid JSON/);
    const array = await call(url('/v1/collections/notes/count'), { method: 'POST', json: [1, 2] });
    assertProblem(array, 400, 'invalid_argument');
    const other = await call(url('/v1/collections/notes/count'), { method: 'POST', json: { collection: 'other' } });
    assertProblem(other, 400, 'invalid_argument');
    assert.equal(other.body.errors[0].path, 'collection');
  });

  test('error: invalid_filter with position (where) and path (filter)', async () => {
    const where = await call(url('/v1/collections/notes/search'), {
      method: 'POST',
      json: { vector: [1, 0, 0, 0], where: "topic = str('pets') && colour = 1" },
    });
    assertProblem(where, 400, 'invalid_filter');
    assert.equal(typeof where.body.position, 'number');
    assert.equal(where.body.position, "topic = str('pets') && ".length);
    const filter = await call(url('/v1/collections/notes/count'), {
      method: 'POST',
      json: { filter: { and: [{ eq: { topic: 'pets' } }, { gt: { colour: 1 } }] } },
    });
    assertProblem(filter, 400, 'invalid_filter');
    assert.equal(typeof filter.body.path, 'string');
  });

  test('error: dimension_mismatch with expected and got', async () => {
    const answer = await call(url('/v1/collections/notes/search'), { method: 'POST', json: { vector: [1, 0, 0] } });
    assertProblem(answer, 400, 'dimension_mismatch');
    assert.equal(answer.body.expected, 4);
    assert.equal(answer.body.got, 3);
  });

  test('error: not_yet_indexed when min_block is not reached within the timeout', async () => {
    const impatient = await chain.node({ ctx: { minBlockTimeoutMs: 50 } });
    const minBlock = chain.writtenAt + 1000;
    const answer = await call(`${impatient.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { vector: [1, 0, 0, 0], min_block: minBlock },
    });
    assertProblem(answer, 503, 'not_yet_indexed');
    assert.equal(answer.body.as_of_block, chain.indexer.asOfBlock);
    assert.equal(answer.body.min_block, minBlock);
    const get = await call(`${impatient.url}/v1/collections/notes/entities/cat?min_block=${minBlock}`);
    assertProblem(get, 503, 'not_yet_indexed');
  });

  test('error: payload_too_large, announced by Content-Length or streamed in chunks', async () => {
    const big = JSON.stringify({ where: 'x'.repeat(MAX_REQUEST_BYTES) });
    const announced = await call(url('/v1/collections/notes/count'), {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(announced, 413, 'payload_too_large');

    // Chunked: no Content-Length, so the limit must hold while reading. Socket buffers and a loaded
    // machine let the client run some megabytes ahead of the server, so the stream offers far more (16x
    // the limit) than any buffering explains: a server that read it all would drain the whole stream.
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    const offered = MAX_REQUEST_BYTES * 16;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > offered) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const chunked = await call(url('/v1/collections/notes/count'), {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { 'content-type': 'application/json' },
    } as RequestInit);
    assertProblem(chunked, 413, 'payload_too_large');
    assert.ok(sent <= offered, 'the server stopped reading before the whole body');
  });

  test('error: write routes answer signer_not_configured without a signer', async () => {
    for (const [method, path] of [
      ['POST', '/v1/collections'],
      ['POST', '/v1/collections/notes/entities'],
      ['DELETE', '/v1/collections/notes/entities/cat'],
    ] as const) {
      assertProblem(
        await call(url(path), { method, json: method === 'POST' ? {} : undefined }),
        501,
        'signer_not_configured',
      );
    }
  });

  test('error: unknown routes answer a 404 problem', async () => {
    const answer = await call(url('/v2/nothing'));
    assert.equal(answer.status, 404);
    assert.equal(answer.headers.get('content-type'), PROBLEM_TYPE);
    assert.equal(answer.body.status, 404);
    assert.equal(answer.body.code, 'not_found');
    const wrongMethod = await call(url('/v1/collections/notes/search'));
    assert.equal(wrongMethod.status, 404);
  });

  test('error: unknown errors are logged in full and answered as a generic internal problem', async () => {
    const exploding = new Proxy({} as Chain['ctx']['chain'], {
      get() {
        throw new Error('rpc https://user:hunter2@rpc.example failed');
      },
    });
    const broken = await chain.node({ ctx: { chain: exploding } });
    const answer = await call(`${broken.url}/v1/status`);
    assertProblem(answer, 500, 'internal');
    assert.doesNotMatch(JSON.stringify(answer.body), /hunter2|rpc\.example|at /);
    const logged = broken.logs.find((l) => l.level === 'error');
    assert.ok(logged, 'the error was logged');
    assert.match(String(logged.fields.error), /hunter2[\s\S]*at /, 'the log has the message and the stack');
    assert.equal(logged.fields.route, '/v1/status');
  });

  test('behavior: a Host header naming a non-loopback name is refused on a loopback bind', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const { port } = new URL(node.url);
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/v1/collections', headers: { host: 'rebind.attacker.example' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 403);
  });
});
