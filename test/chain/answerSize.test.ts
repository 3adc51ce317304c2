// Reads under the transport's answer size limit: a batch of blocks or a query page whose answer is over it
// is fetched again in smaller parts, and the result is the same as with no limit, on both generations (the
// page walk is one module, src/chain/pageWalk.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import {
  createArkivV1Source,
  createDbChainSource,
  createHttpTransport,
  type ChainSource,
  type RpcTransport,
} from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { body, cell, createEntity, dbchainClients } from '../helpers/dbchainDevnet.ts';
import { execute, op, cell as raw } from '../helpers/dbchainRawWriter.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';
import { devnetProxy } from '../helpers/rpcProxy.ts';

describe('chain reads: answers over the size limit are split', () => {
  let devnet: Devnet;
  let roomy: RpcTransport;
  let tight: RpcTransport;
  before(async () => {
    devnet = await startTestDevnet();
    const alice = walletClient(devnet, 0);
    // Incompressible payloads: ~40 KB of hex per block and per entity.
    for (let i = 0; i < 6; i++)
      await alice.createEntity({
        payload: new Uint8Array(randomBytes(20_000)),
        contentType: 'application/octet-stream',
        attributes: [{ key: 'kind', value: 'big' }],
        expiresIn: 100_000,
      });
    roomy = createHttpTransport({ url: devnet.url });
    // One block or one entity fits; six do not.
    tight = createHttpTransport({ url: devnet.url, maxAnswerBytes: 64 * 1024 });
  });
  after(async () => {
    await roomy.close();
    await tight.close();
    await devnet.stop();
  });

  test('blocks and query pages come back whole and equal to an unlimited read', async () => {
    const head = devnet.headNumber;
    const [all, split] = [createArkivV1Source(roomy), createArkivV1Source(tight)];
    assert.deepEqual(await split.blocks(1, head), await all.blocks(1, head));
    const pages = async (source: typeof all) => {
      const keys: string[] = [];
      await source.forEachEntityPage({ strings: { kind: 'big' } }, head, (page) =>
        keys.push(...page.map((e) => `${e.key}:${e.value?.length}`)),
      );
      return keys;
    };
    const expected = await pages(all);
    assert.equal(expected.length, 6);
    assert.deepEqual(await pages(split), expected);
  });
});

describe('DB-chain reads: a query page or a transaction batch over the size limit is asked again in halves', () => {
  let devnet: Devnet;
  let roomy: RpcTransport;
  let tight: RpcTransport;
  let asked: number[];
  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    const alice = dbchainClients(devnet, 0);
    // Three entities of ~40 KB of incompressible hex each, then five small ones: the node answers newest
    // first, so a walk of 4 a page fits its first page and meets the big ones only on the second.
    const make = (payload: string) =>
      createEntity(devnet, alice, { attributes: body(payload, cell.str('kind', 'split')), minLifetime: 100_000n });
    for (let i = 0; i < 3; i++) await make(randomBytes(10_000).toString('hex'));
    for (let i = 0; i < 5; i++) await make(`small ${i}`);
    roomy = createHttpTransport({ url: devnet.url });
    // One big entity fits; two do not.
    const limited = createHttpTransport({ url: devnet.url, maxAnswerBytes: 64 * 1024 });
    asked = [];
    tight = {
      ...limited,
      request: <T>(method: string, params?: unknown[]) => {
        if (method === 'arkiv_query') asked.push(Number((params?.[1] as { limit?: number } | undefined)?.limit));
        return limited.request<T>(method, params);
      },
    };
  });
  after(async () => {
    await roomy.close();
    await tight.close();
    await devnet.stop();
  });

  const walk = async (source: ChainSource, atBlock: number) => {
    const pages: string[][] = [];
    await source.forEachEntityPage(
      { strings: { kind: 'split' } },
      atBlock,
      (page) => pages.push(page.map((e) => `${e.key}:${e.value?.length}:${e.operationIndexInTransaction}`)),
      { pageSize: 4 },
    );
    return pages;
  };

  test('the split walk returns every entity once, in the same order and with the same fields', async () => {
    const head = devnet.headNumber;
    const expected = (await walk(createDbChainSource(roomy), head)).flat();
    assert.equal(expected.length, 8);
    assert.equal(new Set(expected).size, 8);
    const split = await walk(createDbChainSource(tight), head);
    assert.deepEqual(split.flat(), expected);
    // Halved after a page of 4 came back whole, and never grown again: 4, 4 (too large), 2, 2 (too large), 1….
    assert.equal(asked[0], 4);
    assert.ok(asked.includes(1), `asked ${asked.join(', ')}`);
    assert.equal(split[0]?.length, 4, 'the first page was not split');
  });

  test('blocks: the batch of transactions behind the logs comes back in halves, equal to an unlimited read', async () => {
    const head = devnet.headNumber;
    const all = await createDbChainSource(roomy).blocks(1, head);
    assert.equal(all.flatMap((b) => b.ops).length, 8);
    assert.deepEqual(await createDbChainSource(tight).blocks(1, head), all);
  });

  test('blocks: the entities read back to complete patches come back in halves, equal to an unlimited read', async () => {
    // One transaction patching the three big entities: their read-back batch (~120 KB) is over the bound.
    const big = (await createDbChainSource(roomy).blocks(1, devnet.headNumber)).flatMap((b) =>
      b.ops.flatMap((o) => (o.type === 'create' && o.content.payload.length > 10_000 ? [o.key] : [])),
    );
    assert.equal(big.length, 3);
    await execute(
      devnet,
      0,
      big.map((key) => op.patch(key, [raw.str('note', 'patched')])),
    );
    const block = devnet.headNumber;
    const all = await createDbChainSource(roomy).blocks(block, block);
    assert.deepEqual(
      all.flatMap((b) => b.ops.map((o) => o.type)),
      ['update', 'update', 'update'],
    );
    assert.deepEqual(await createDbChainSource(tight).blocks(block, block), all);
  });
});

describe('DB-chain follower: a log range whose answer is over the size limit is asked again over its first half', () => {
  test('the span covers fewer blocks per step, and the steps together give the blocks of an unlimited read', async () => {
    const devnet = await startTestDevnet({ protocol: 'dbchain' });
    const alice = dbchainClients(devnet, 0);
    for (let i = 0; i < 4; i++)
      await createEntity(devnet, alice, { attributes: body(`entity ${i}`), minLifetime: 100_000n });
    const head = devnet.headNumber;
    // A node whose eth_getLogs answer over more than one block is over the bound (padded with JSON
    // whitespace, as a verbose node might answer): only single-block ranges come back.
    const ranges: number[] = [];
    const proxy = await devnetProxy(devnet.url, async (_req, res, body, forward) => {
      const calls = JSON.parse(body.toString('utf8')) as {
        method: string;
        params: { fromBlock: Hex; toBlock: Hex }[];
      }[];
      const logs = Array.isArray(calls) ? calls.find((c) => c.method === 'eth_getLogs') : undefined;
      if (!logs) return false;
      const [filter] = logs.params;
      const width = Number(filter?.toBlock) - Number(filter?.fromBlock) + 1;
      ranges.push(width);
      const { status, text } = await forward();
      res.writeHead(status, { 'content-type': 'application/json' }).end(width > 1 ? text + ' '.repeat(70_000) : text);
      return true;
    });
    const roomy = createHttpTransport({ url: devnet.url });
    const tight = createHttpTransport({ url: proxy.url, maxAnswerBytes: 64 * 1024 });
    try {
      const genesis = defined((await createDbChainSource(roomy).headers([0]))[0], 'block 0');
      const span = (source: ChainSource) => defined(source.span?.bind(source), 'the DB-chain source spans');
      const expected = await span(createDbChainSource(roomy))({ number: 0, hash: genesis.hash }, head);
      assert.equal(expected.end.number, head);
      const limited = span(createDbChainSource(tight));
      const got: typeof expected.blocks = [];
      let after = { number: 0, hash: genesis.hash };
      for (let steps = 0; after.number < head; steps++) {
        assert.ok(steps <= head, 'the walk advances every step');
        const step = await limited(after, head);
        got.push(...step.blocks);
        after = { number: step.end.number, hash: step.end.hash };
      }
      assert.deepEqual(got, expected.blocks);
      assert.ok(ranges.includes(1) && ranges.some((w) => w > 1), `asked ranges ${ranges.join(', ')}`);
    } finally {
      await roomy.close();
      await tight.close();
      await proxy.close();
      await devnet.stop();
    }
  });
});
