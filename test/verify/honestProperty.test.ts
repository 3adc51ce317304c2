// Honest answers verify, whatever was written: over random collections (dimension, metric, open or
// closed), write sequences (creates, updates, short lifetimes that expire, deletes, another account's
// writes, extends and gifts to the owner, which a closed collection ignores and an open one counts) and
// random filters, every search, count,
// get and listing from a public-read node (REST) and from the write daemon is verified check by check.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp, type HttpServer } from '../../src/http/index.ts';
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
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { verifyAnswer, type VerifyReport } from '../../src/verify/index.ts';
import type { Hex } from 'viem';
import { execute, op } from '../helpers/dbchainRawWriter.ts';
import { createEntityAs, startGeneration, type Generation } from '../helpers/generations.ts';
import { vectorArgs } from '../helpers/writes.ts';
import { call, captureLogger } from '../http/fixture.ts';

const IDS = ['a', 'b', 'c', 'd', 'e', "o'k"];
const TOPICS = ['x', 'y', 'z'];

const entityArb = (dim: number) =>
  fc.record({
    id: fc.constantFrom(...IDS),
    vector: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: dim, maxLength: dim }),
    topic: fc.constantFrom(...TOPICS),
    stars: fc.integer({ min: -2, max: 5 }),
    hot: fc.boolean(),
    // Some live only a few blocks: they expire while the run writes on; some never expire (no ttl).
    blocks: fc.constantFrom(2, 3, 1000, undefined),
  });

const whereArb = fc.constantFrom(
  undefined,
  "topic = 'x'",
  'stars >= 2',
  "hot = true && topic != 'z'",
  "topic = 'y' || stars < 0",
  "topic ~ '[xy]'",
);
const filterArb = fc.constantFrom(undefined, { eq: { topic: 'x' } }, { gte: { stars: 1 } });

const caseArb = fc.integer({ min: 2, max: 4 }).chain((dim) =>
  fc.record({
    dim: fc.constant(dim),
    metric: fc.constantFrom('cosine' as const, 'l2' as const, 'ip' as const),
    open: fc.boolean(),
    batches: fc.array(fc.array(entityArb(dim), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
    intruder: fc.option(entityArb(dim), { nil: undefined }),
    // The intruder extends its entity, then hands it to the collection's owner (a closed collection still
    // does not count it: its creator is not a permitted writer).
    intruderExtends: fc.boolean(),
    intruderGives: fc.boolean(),
    deleted: fc.subarray(IDS, { maxLength: 2 }),
    query: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: dim, maxLength: dim }),
    k: fc.integer({ min: 1, max: 6 }),
    where: whereArb,
    filter: filterArb,
    order: fc.constantFrom('newest', 'oldest'),
    limit: fc.integer({ min: 1, max: 4 }),
    getId: fc.constantFrom(...IDS),
  }),
);

describe('verify: honest answers verify (property, DB-chain devnet)', () => {
  let gen: Generation;
  let publicNode: HttpServer;
  let readOnly: ServiceContext;
  let run = 0;

  before(async () => {
    gen = await startGeneration('dbchain');
    readOnly = { ...gen.ctx, writer: undefined };
    const { logger } = captureLogger();
    const access = await loadAccessPolicy({ publicRead: true, host: '127.0.0.1' });
    publicNode = await serveHttp({
      host: '127.0.0.1',
      port: 0,
      app: createHttpApp({
        ctx: readOnly,
        access,
        metrics: createMetrics(readOnly),
        logger,
        mcp: { ctx: readOnly, logger },
      }),
    });
  });
  after(async () => {
    await publicNode.close();
    await gen.close();
  });

  test('every answer of either node verifies', async () => {
    const out = await fc.check(
      fc.asyncProperty(caseArb, async (c) => {
        const name = `prop-${++run}`;
        const attributes = { topic: 'str', stars: 'i32', hot: 'bool' };
        await createCollection(gen.ctx, { name, dim: c.dim, metric: c.metric, open: c.open, attributes });
        let block = 0;
        for (const batch of c.batches) {
          const byId = new Map(batch.map((e) => [e.id, e]));
          // An update of an entity that expired since it was read is refused by the chain: a write that
          // fails changes nothing, and what the chain holds is what answers are checked against.
          const written = await upsert(gen.ctx, {
            collection: name,
            entities: [...byId.values()].map((e) => ({
              id: e.id,
              vector: e.vector,
              document: `doc ${e.id} ${e.topic}`,
              attributes: { topic: e.topic, stars: e.stars, hot: e.hot },
              ...(e.blocks === undefined ? {} : { ttl: { blocks: e.blocks } }),
            })),
          }).catch((error: Error) => {
            if (!/EntityExpired/.test(error.message)) throw error;
            return undefined;
          });
          block = written?.block_number ?? gen.devnet.headNumber;
        }
        if (c.intruder) {
          const e = c.intruder;
          const definition = { dim: c.dim, metric: c.metric, open: c.open, writers: [], attributes } as never;
          const key = await createEntityAs(
            gen.devnet,
            1,
            vectorArgs(
              name,
              { id: e.id, vector: e.vector, attributes: { topic: e.topic, stars: e.stars, hot: e.hot } },
              definition as CollectionDefinition,
            ),
            definition,
          );
          const ops = [
            ...(c.intruderExtends ? [op.extend(key, 0n, 500n)] : []),
            ...(c.intruderGives ? [op.transfer(key, gen.ctx.writer?.address as Hex)] : []),
          ];
          // A short-lived entity may have expired already: the chain refuses, and nothing changes.
          if (ops.length) await execute(gen.devnet, 1, ops).catch(() => undefined);
          block = gen.devnet.headNumber;
        }
        const live = (await listEntities(gen.ctx, { collection: name, limit: 100, min_block: block })).entities;
        const mine = c.deleted.filter((id) => live.some((e) => e.id === id && e.owner === gen.ctx.writer?.address));
        if (mine.length)
          block =
            (await deleteEntities(gen.ctx, { collection: name, refs: mine, dry_run: false })).block_number ?? block;

        const filters = { ...(c.where ? { where: c.where } : {}), ...(c.filter ? { filter: c.filter } : {}) };
        const searchRequest = { vector: c.query, k: c.k, include_document: true, ...filters, min_block: block };
        const countRequest = { ...filters, min_block: block };
        const listRequest = { ...filters, order: c.order, limit: c.limit, include_document: true, min_block: block };
        const base = `${publicNode.url}/v1/collections/${name}`;
        const viaRest = await call(`${base}/search`, { method: 'POST', json: searchRequest });
        assert.equal(viaRest.status, 200, JSON.stringify(viaRest.body));
        const answers: [string, Record<string, unknown>, unknown][] = [
          ['public search', searchRequest, viaRest.body],
          ['public count', countRequest, (await call(`${base}/count`, { method: 'POST', json: countRequest })).body],
          ['daemon search', searchRequest, await search(gen.ctx, { collection: name, ...searchRequest })],
          ['daemon list', listRequest, await listEntities(gen.ctx, { collection: name, ...listRequest })],
          ['daemon count', countRequest, await count(gen.ctx, { collection: name, ...countRequest })],
        ];
        const found = await get(readOnly, { collection: name, ref: c.getId, include_document: true }).catch(
          () => undefined,
        );
        if (found) answers.push(['get', { ref: c.getId }, found]);
        for (const [what, request, answer] of answers) {
          const report: VerifyReport = await verifyAnswer({
            rpc: gen.devnet.url,
            collection: name,
            request,
            answer: answer as Record<string, unknown>,
          });
          assert.equal(
            report.verdict,
            'verified',
            `${what} of ${JSON.stringify(c)}:\n${JSON.stringify(answer)}\n${JSON.stringify(report.checks, null, 1)}`,
          );
        }
      }),
      {
        numRuns: Number(process.env.FC_RUNS ?? 8),
        endOnFailure: true,
        ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
      },
    );
    if (out.failed)
      assert.fail(
        `seed ${out.seed}, case ${JSON.stringify(out.counterexample)}:\n${(out.errorInstance as Error | undefined)?.message}`,
      );
  });
});
