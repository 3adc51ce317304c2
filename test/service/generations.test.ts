// "Both generations, same answers" (issue 20, item 5): the same sequence of writes through the service on
// an Arkiv v1 devnet and on a DB-chain devnet, each followed by its own driver, gives identical search,
// get, count and list answers — apart from entity keys and block numbers, which each chain assigns itself.
// A fixed sequence, the demo data, and random sequences (fast-check) of upserts, updates that drop
// attributes, and deletes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  count,
  createCollection,
  deleteEntities,
  get,
  listEntities,
  search,
  upsert,
  type ServiceContext,
} from '../../src/service/index.ts';
import { seedDemo } from '../../src/node/demo.ts';
import { defined } from '../helpers/defined.ts';
import { PROTOCOLS, startGeneration, type Generation } from '../helpers/generations.ts';

const ENTITIES = [
  {
    id: 'cat',
    vector: [1, 0, 0, 0],
    document: 'Cats purr.',
    attributes: { topic: 'pets', stars: 5, score: 0.5, hot: true, n: 3 },
  },
  {
    id: 'dog',
    vector: [0.9, 0.1, 0, 0],
    document: 'Dogs bark.',
    attributes: { topic: 'pets', stars: -2, score: -1.25, hot: false, n: 0 },
  },
  {
    id: 'fern',
    vector: [0, 0.1, 1, 0.2],
    document: 'Ferns like shade.',
    attributes: { topic: 'plants', stars: 3, score: 2.75, n: 7 },
  },
  { id: 'moss', vector: [0, 0.2, 0.9, 0.3], document: 'Moss is soft.', attributes: { topic: 'plants', stars: 0 } },
  {
    id: 'a/b c?#%é',
    vector: [0.1, 0.1, 0.1, 1],
    document: 'Odd id.',
    attributes: { topic: 'misc', stars: 1, hot: true },
  },
  { id: 'rock', vector: [0, 0, 0, 1] },
];

/** The writes, in order: a definition, six creates, two updates (one dropping attributes), a delete. */
async function writeAll(ctx: ServiceContext): Promise<void> {
  await createCollection(ctx, {
    name: 'same',
    dim: 4,
    metric: 'cosine',
    attributes: { topic: 'str', stars: 'i32', score: 'f32', hot: 'bool', n: 'uint' },
    wait: 'indexed',
  });
  await upsert(ctx, { collection: 'same', entities: ENTITIES, wait: 'indexed' });
  await upsert(ctx, {
    collection: 'same',
    entities: [
      { id: 'dog', vector: [0.8, 0.3, 0, 0], document: 'Dogs bark loudly.', attributes: { topic: 'pets', stars: 4 } },
      { id: 'fern', vector: [0, 0.1, 1, 0.2], document: 'Ferns like shade.' },
    ],
    wait: 'indexed',
  });
  await deleteEntities(ctx, { collection: 'same', refs: ['moss'], dry_run: false, wait: 'indexed' });
}

/** Every answer the read tools give over the written collection; the queries have no tied distances (ties fall in key order). */
async function answers(ctx: ServiceContext) {
  return {
    search: await search(ctx, { collection: 'same', vector: [1, 0.1, 0.05, 0.02], k: 10, include_document: true }),
    filtered: await search(ctx, {
      collection: 'same',
      vector: [0.05, 0.1, 1, 0.03],
      k: 10,
      where: "topic = 'plants' OR stars >= 4",
    }),
    json: await search(ctx, { collection: 'same', vector: [0.07, 0.03, 0.11, 1], k: 3, filter: { gte: { score: 0 } } }),
    get: await Promise.all(
      ['cat', 'dog', 'fern', 'moss', 'a/b c?#%é'].map((ref) =>
        get(ctx, { collection: 'same', ref }).catch((e: Error) => e.message),
      ),
    ),
    count: await count(ctx, { collection: 'same' }),
    countWhere: await count(ctx, { collection: 'same', where: 'hot = true' }),
    list: await listEntities(ctx, { collection: 'same', limit: 10 }),
  };
}

/** A list page is in key order; keys differ between the chains, so compare its entities by id. */
function byId(answer: Awaited<ReturnType<typeof answers>>) {
  const list = answer.list as unknown as { entities: { id: string }[] };
  return { ...answer, list: { ...list, entities: [...list.entities].sort((a, b) => (a.id < b.id ? -1 : 1)) } };
}

/** Drops what each chain assigns itself: entity keys and block numbers. */
function withoutChainFacts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutChainFacts);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name]) => !/(^|_)(key|keys|block|hash|hashes)$/.test(name) && !/block/.test(name))
      .map(([name, v]) => [name, withoutChainFacts(v)]),
  );
}

const SEED = Number(process.env.ARKIVECTOR_TEST_SEED ?? 20261130);
/** Random write sequences compared (each up to 5 writes of up to 3 entities, on both devnets). */
const RANDOM_RUNS = 8;

/** The read tools' answers over `collection` for the property: search (plain and filtered), get, count, list. */
async function answersOf(ctx: ServiceContext, collection: string, vector: number[], ids: string[]) {
  return {
    search: await search(ctx, { collection, vector, k: 20, include_document: true }),
    filtered: await search(ctx, { collection, vector, k: 20, where: "stars >= 0 OR topic = 'plants'" }),
    get: await Promise.all(ids.map((ref) => get(ctx, { collection, ref }).catch((e: Error) => e.message))),
    count: await count(ctx, { collection }),
    countWhere: await count(ctx, { collection, where: 'hot = true AND score < 1' }),
    list: await listEntities(ctx, { collection, limit: 20 }),
  };
}

/** Orders what is ordered by key (list pages, equal-score results) by id instead: keys differ between chains. */
function inKeyFreeOrder(answer: Awaited<ReturnType<typeof answersOf>>) {
  type Hit = { id: string; score: number };
  const hits = (found: unknown) => {
    const r = found as { results: Hit[] };
    return { ...r, results: [...r.results].sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1)) };
  };
  const list = answer.list as unknown as { entities: { id: string }[] };
  return {
    ...answer,
    search: hits(answer.search),
    filtered: hits(answer.filtered),
    list: { ...list, entities: [...list.entities].sort((a, b) => (a.id < b.id ? -1 : 1)) },
  };
}

describe('both generations give the same answers', () => {
  const generations: Generation[] = [];
  before(async () => {
    for (const protocol of PROTOCOLS) generations.push(await startGeneration(protocol));
  });
  after(async () => {
    for (const generation of generations) await generation.close();
  });

  test('the same writes: identical search, get, count and list answers apart from keys and blocks', async () => {
    const seen = [];
    for (const generation of generations) {
      await writeAll(generation.ctx);
      seen.push({ protocol: generation.protocol, answers: byId(await answers(generation.ctx)) });
    }
    const [v1, dbchain] = seen;
    assert.ok(v1 && dbchain);
    assert.equal((v1.answers.count as { count: number }).count, 5, 'six created, one deleted');
    assert.deepEqual(withoutChainFacts(dbchain.answers), withoutChainFacts(v1.answers));
  });

  test('property: any sequence of upserts, updates and deletes gives identical answers on both generations', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const unit = fc.double({ min: -1, max: 1, noNaN: true });
    const entity = fc.record(
      {
        id: fc.constantFrom(...ids),
        // one large component keeps every vector away from zero (cosine) and distances apart
        vector: fc.tuple(fc.double({ min: 0.5, max: 1, noNaN: true }), unit, unit, unit),
        document: fc.constantFrom('cats purr', 'dogs bark', 'ferns', ''),
        attributes: fc.record(
          {
            topic: fc.constantFrom('pets', 'plants', 'émoji 🎉'),
            stars: fc.integer({ min: -5, max: 5 }),
            score: fc.double({ min: -4, max: 4, noNaN: true }),
            hot: fc.boolean(),
            n: fc.nat(1_000_000),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: ['id', 'vector'] },
    );
    const step = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          t: fc.constant('upsert' as const),
          entities: fc.array(entity, { minLength: 1, maxLength: 3 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ t: fc.constant('delete' as const), pick: fc.nat() }) },
    );
    const query = fc.tuple(unit, unit, unit, unit);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), query, async (steps, vector) => {
        const collection = `rand${run++}`;
        const seen: unknown[] = [];
        for (const { ctx } of generations) {
          await createCollection(ctx, {
            name: collection,
            dim: 4,
            metric: 'cosine',
            attributes: { topic: 'str', stars: 'i32', score: 'f32', hot: 'bool', n: 'uint' },
            wait: 'indexed',
          });
          const live = new Set<string>();
          for (const s of steps) {
            if (s.t === 'upsert') {
              // one entity per id in a batch: the last spelling of each id wins, as a later upsert would
              const batch = [...new Map(s.entities.map((e) => [e.id, e])).values()];
              await upsert(ctx, { collection, entities: batch, wait: 'indexed' });
              for (const e of batch) live.add(e.id);
            } else if (live.size) {
              const ref = defined([...live][s.pick % live.size], 'a live id');
              await deleteEntities(ctx, { collection, refs: [ref], dry_run: false, wait: 'indexed' });
              live.delete(ref);
            }
          }
          seen.push(withoutChainFacts(inKeyFreeOrder(await answersOf(ctx, collection, vector, ids))));
        }
        assert.deepEqual(seen[1], seen[0]);
      }),
      { numRuns: RANDOM_RUNS, seed: SEED },
    );
  });

  test('the demo data (npm start) seeds either generation with the same collections and answers', async () => {
    const seen = [];
    for (const protocol of PROTOCOLS) {
      const demo = await startGeneration(protocol);
      try {
        const block = await seedDemo(
          demo.devnet.url,
          defined(demo.devnet.accounts[0], 'dev account').privateKey,
          protocol,
        );
        assert.ok(await demo.indexer.waitForBlock(Number(block), 30_000), `${protocol}: indexed the demo`);
        seen.push(
          withoutChainFacts({
            notes: await count(demo.ctx, { collection: 'notes' }),
            docs: await count(demo.ctx, { collection: 'demo.docs', where: 'featured = true' }),
            search: await search(demo.ctx, {
              collection: 'demo.docs',
              vector: [1, 0.2, 0.1, 0, 0, 0.05, 0, 0.3],
              k: 5,
              where: 'rank >= 10 AND score < 9.5',
            }),
            get: await get(demo.ctx, { collection: 'notes', ref: 'fern' }),
          }),
        );
      } finally {
        await demo.close();
      }
    }
    assert.equal((seen[0] as { notes: { count: number } }).notes.count, 3);
    assert.deepEqual(seen[1], seen[0]);
  });
});
