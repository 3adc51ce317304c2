// README "Request limits" as test input: the table is src/service/limits.ts (every numeric bound, its
// value), and each argument bound is enforced at its value through a real node's REST routes: the bound
// itself passes, one over it is `invalid_argument` naming the argument, before any work.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadAccessPolicy } from '../../src/http/index.ts';
import * as collectionLimits from '../../src/collections/limits.ts';
import * as limits from '../../src/service/limits.ts';
import { defined } from '../helpers/defined.ts';
import { codeSpans, docSection, tableRows } from '../helpers/readme.ts';
import { assertProblem, call, STUB_WRITER, startChain, type Chain, type Node } from '../http/fixture.ts';

/** A `NAME | value | what` table as a map of NAME to its number (`4,096`, `-2,147,483,648`). */
const boundsTable = (file: string, section: string, firstHeader: string) =>
  new Map(
    tableRows(docSection(file, section), firstHeader).map(([name = '', value = '']) => [
      defined(codeSpans(name)[0], name),
      Number(defined(/^-?[\d,.]+/.exec(value)?.[0], value).replace(/,/g, '')),
    ]),
  );
const ROWS = boundsTable('tools.md', 'Request limits', 'limit');
const SCHEMA_BOUNDS = boundsTable('schema.md', 'Writing collections with the SDK', 'bound');
/** Numbers of src/collections/limits.ts that are the wire format's, not bounds. */
const WIRE_FORMAT = [
  'I32_OFFSET',
  'BLOCK_TIME_SECONDS',
  'VECTOR_PAYLOAD_FORMAT',
  'VECTOR_ELEMENT_BINARY16',
  'VECTOR_PAYLOAD_HEADER_BYTES',
];

test('README Request limits: the table is every numeric bound of src/service/limits.ts, with its value', () => {
  const declared = Object.fromEntries(Object.entries(limits).filter(([, value]) => typeof value === 'number'));
  assert.deepEqual(Object.fromEntries(ROWS), declared);
  // Entities without a ttl (and no default_ttl) are kept until deleted (test/tools/memoryLifetime.test.ts).
  assert.match(docSection('tools.md', 'Request limits'), /Entities written without a `ttl` are kept until deleted/);
});

test('README Writing collections: every bound of src/collections/limits.ts is documented, with its value', () => {
  const section = docSection('schema.md', 'Writing collections with the SDK');
  for (const [name, value] of Object.entries(collectionLimits)) {
    if (typeof value !== 'number' || WIRE_FORMAT.includes(name)) continue;
    // Either a row of the bounds table with its value, or named in the limits table above it.
    if (SCHEMA_BOUNDS.has(name)) assert.equal(SCHEMA_BOUNDS.get(name), value, name);
    else assert.ok(section.includes(`(\`${name}\`)`), `${name} is not in the README`);
  }
  for (const name of SCHEMA_BOUNDS.keys()) assert.ok(Object.hasOwn(collectionLimits, name), `${name} is not declared`);
});

describe('README Request limits: enforced at the stated value, before any work', () => {
  let chain: Chain;
  let node: Node;
  before(async () => {
    chain = await startChain();
    node = await chain.node({
      access: await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }),
      ctx: { writer: STUB_WRITER },
    });
  });
  after(async () => await chain.close());

  const limit = (name: string) => defined(ROWS.get(name), name);
  const refused = async (answer: Promise<Awaited<ReturnType<typeof call>>>, path: string) => {
    const problem = await answer;
    assertProblem(problem, 400, 'invalid_argument');
    assert.ok(
      problem.body.errors.some((e: { path: string }) => e.path === path || e.path.startsWith(`${path}.`)),
      `errors name ${path}: ${JSON.stringify(problem.body.errors)}`,
    );
  };
  const search = (body: object) =>
    call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: { vector: [1, 0, 0, 0], ...body } });

  test('k, where, text', async () => {
    for (const k of [limit('SEARCH_K_MIN'), limit('SEARCH_K_MAX')]) assert.equal((await search({ k })).status, 200);
    assert.equal((await search({})).body.results.length, Math.min(limit('SEARCH_K_DEFAULT'), 4));
    await refused(search({ k: limit('SEARCH_K_MIN') - 1 }), 'k');
    await refused(search({ k: limit('SEARCH_K_MAX') + 1 }), 'k');
    // A `where` of exactly the bound: a valid expression padded with spaces.
    const where = "topic = 'pets'";
    const atBound = where.padEnd(limit('WHERE_MAX_CHARS'), ' ');
    assert.equal((await search({ where: atBound })).status, 200);
    await refused(search({ where: `${atBound} ` }), 'where');
    await refused(
      call(`${node.url}/v1/collections/notes/search`, {
        method: 'POST',
        json: { text: 'x'.repeat(limit('TEXT_MAX_CHARS') + 1), mode: 'keyword' },
      }),
      'text',
    );
    const keyword = await call(`${node.url}/v1/collections/notes/search`, {
      method: 'POST',
      json: { text: `purr ${'x'.repeat(limit('TEXT_MAX_CHARS') - 5)}`, mode: 'keyword' },
    });
    assert.equal(keyword.status, 200, JSON.stringify(keyword.body));
  });

  test('ref, cursor, listing limits', async () => {
    const get = (ref: string) => call(`${node.url}/v1/collections/notes/entities/${encodeURIComponent(ref)}`);
    assertProblem(await get('x'.repeat(limit('REF_MAX_CHARS'))), 404, 'entity_not_found');
    await refused(get('x'.repeat(limit('REF_MAX_CHARS') + 1)), 'ref');
    const list = (query: string) => call(`${node.url}/v1/collections/notes/entities?${query}`);
    for (const n of [limit('LIST_LIMIT_MIN'), limit('LIST_LIMIT_MAX')])
      assert.equal((await list(`limit=${n}`)).status, 200);
    await refused(list(`limit=${limit('LIST_LIMIT_MAX') + 1}`), 'limit');
    await refused(list(`limit=${limit('LIST_LIMIT_MIN') - 1}`), 'limit');
    assert.equal((await list('')).body.entities.length, Math.min(limit('LIST_LIMIT_DEFAULT'), 4));
    await refused(list(`cursor=${'c'.repeat(limit('CURSOR_MAX_CHARS') + 1)}`), 'cursor');
    const collections = (query: string) => call(`${node.url}/v1/collections?${query}`);
    assert.equal((await collections(`limit=${limit('COLLECTIONS_LIMIT_MAX')}`)).status, 200);
    await refused(collections(`limit=${limit('COLLECTIONS_LIMIT_MAX') + 1}`), 'limit');
  });

  test('collection definitions: name, dim and index bounds', async () => {
    const bound = (name: string) => defined(SCHEMA_BOUNDS.get(name), name);
    const create = (definition: object) =>
      call(`${node.url}/v1/collections`, {
        method: 'POST',
        json: { name: 'bounded', dim: 4, metric: 'cosine', ...definition },
      });
    await refused(create({ name: 'a'.repeat(bound('COLLECTION_NAME_MAX_CHARS') + 1) }), 'name');
    await refused(create({ dim: bound('DIM_MIN') - 1 }), 'dim');
    await refused(create({ dim: bound('DIM_MAX') + 1 }), 'dim');
    for (const [field, low, high] of [
      ['m', 'HNSW_MIN_M', 'HNSW_MAX_M'],
      ['ef_construction', 'HNSW_MIN_EF_CONSTRUCTION', 'HNSW_MAX_EF_CONSTRUCTION'],
      ['ef_search', 'HNSW_MIN_EF_SEARCH', 'HNSW_MAX_EF_SEARCH'],
    ] as const) {
      await refused(create({ index: { [field]: bound(low) - 1 } }), 'index');
      await refused(create({ index: { [field]: bound(high) + 1 } }), 'index');
    }
  });

  test('vector entities: id bytes and attribute values', async () => {
    const bound = (name: string) => defined(SCHEMA_BOUNDS.get(name), name);
    const upsert = (entity: object) =>
      call(`${node.url}/v1/collections/notes/entities`, {
        method: 'POST',
        json: { entities: [{ id: 'x', vector: [1, 0, 0, 0], ...entity }] },
      });
    await refused(upsert({ id: 'é'.repeat(bound('ID_MAX_BYTES') / 2 + 1) }), 'entities');
    await refused(upsert({ id: '' }), 'entities');
    await refused(upsert({ attributes: { topic: 'x'.repeat(bound('STR_ATTRIBUTE_MAX_BYTES') + 1) } }), 'entities');
    await refused(upsert({ attributes: { stars: bound('I32_MAX') + 1 } }), 'entities');
    await refused(upsert({ attributes: { stars: bound('I32_MIN') - 1 } }), 'entities');
    await refused(upsert({ vector: [bound('HALF_MAX') * 2, 0, 0, 0] }), 'entities');
  });

  test('upsert entities and documents', async () => {
    const upsert = (entities: object[]) =>
      call(`${node.url}/v1/collections/notes/entities`, { method: 'POST', json: { entities } });
    const entity = (i: number, document = 'd') => ({ id: `e${i}`, vector: [1, 0, 0, 0], document });
    await refused(upsert(Array.from({ length: limit('UPSERT_MAX_ENTITIES') + 1 }, (_, i) => entity(i))), 'entities');
    await refused(upsert([entity(0, 'd'.repeat(limit('DOCUMENT_MAX_CHARS') + 1))]), 'entities');
  });
});
