// A follower with a call budget (`--rpc-budget`, issue 20 item 3): it paces its steps so the calls it makes
// stay within the budget, it is not `stalled` while it waits by choice, and a chain that stops answering
// still shows `stalled` (counted from when its next step was due). A bootstrap waits before each of its
// calls, so a long one never overdraws the bucket (checked on the bucket's own clock, which the test moves).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, test } from 'node:test';
import {
  budgetedTransport,
  countCalls,
  createCallBudget,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  type CallBudget,
  type RpcTransport,
} from '../../src/chain/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createCollection, status, upsert, type ServiceContext, type StatusResult } from '../../src/service/index.ts';
import { ChainIndexer, type ProgressSink } from '../../indexer/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A node following `transport` within `budget` (each call spent from it; each step waits for it). */
const pacedIndexer = (transport: RpcTransport, budget: CallBudget, chainId: number, blockTimeSeconds: number) =>
  new ChainIndexer({
    source: createDbChainSource(budgetedTransport(transport, budget)),
    stores: engineStores,
    chainId,
    blockTimeSeconds,
    callBudget: budget,
  });

test('a paced follower stays within its budget, is not stalled while it waits, and a dead RPC still shows stalled', async () => {
  const chain = await startTestDevnet({ protocol: 'dbchain' });
  const inner = createHttpTransport({ url: chain.url, attempts: 1 });
  let calls = 0;
  const counted = countCalls(inner, (n) => {
    calls += n;
  });
  // Two calls a second, five at once: a step (about five calls) every ~2.5 s, against 3 block times of 1.5 s
  // (0.2 s blocks made this flaky on two loaded cores: a request of 0.6 s is a stall there, paced or not).
  const blockTimeSeconds = 0.5;
  const budget = createCallBudget(7_200, 5);
  const indexer = pacedIndexer(counted, budget, chain.chainId, blockTimeSeconds);
  const states: string[] = [];
  let stopped = false;
  try {
    indexer.start();
    assert.ok(await indexer.waitForBlock(chain.headNumber, 30_000));
    // The states while paced, from the first wait on (not those of the start).
    indexer.on('state', (state) => states.push(state));
    calls = 0;
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      chain.mine(1);
      indexer.poke();
      assert.ok(await indexer.waitForBlock(chain.headNumber, 30_000), `followed block ${chain.headNumber}`);
    }
    const seconds = (Date.now() - started) / 1000;
    assert.ok(
      seconds > 3 * 3 * blockTimeSeconds,
      `paced: ${seconds} s for 3 blocks, each step longer than 3 block times`,
    );
    assert.ok(!states.includes('stalled'), `states while paced: ${states.join(', ')}`);
    // The bucket's five, two a second since, and the one step that may start on the last token.
    assert.ok(calls <= 5 + 2 * seconds + 5, `${calls} calls in ${seconds} s`);
    assert.ok(indexer.pacedUntil === undefined || indexer.pacedUntil > Date.now());

    const stalled = new Promise<void>((resolve) =>
      indexer.on('state', (state) => {
        if (state === 'stalled') resolve();
      }),
    );
    await chain.stop();
    stopped = true;
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
    assert.notEqual(await Promise.race([stalled, timeout]), 'timeout', 'a dead RPC shows stalled');
  } finally {
    await indexer.stop();
    await inner.close();
    if (!stopped) await chain.stop();
  }
});

test('a bootstrap over many pages waits before each call: the calls never outrun the bucket, and it shows its pages', async () => {
  const chain = await startTestDevnet({ protocol: 'dbchain' });
  cleanups.push(() => chain.stop());
  const plain = createHttpTransport({ url: chain.url });
  cleanups.push(() => plain.close());
  // Seeded through an unpaced node: a collection of 12 entities with ~12 KB of hex each.
  const seeder = new ChainIndexer({
    source: createDbChainSource(plain),
    stores: engineStores,
    chainId: chain.chainId,
    blockTimeSeconds: 0.2,
  });
  seeder.start();
  cleanups.push(() => seeder.stop());
  const ctx: ServiceContext = {
    indexer: seeder,
    chain: { chainId: chain.chainId, rpc: chain.url, protocol: 'dbchain' },
    minBlockTimeoutMs: 30_000,
    writer: createDbChainWriter({
      rpcUrl: chain.url,
      chainId: chain.chainId,
      privateKey: defined(chain.accounts[0], 'dev account 0').privateKey,
      transport: plain,
    }),
  };
  await createCollection(ctx, { name: 'paced', dim: 2, metric: 'cosine', wait: 'indexed' });
  const entities = Array.from({ length: 12 }, (_, i) => ({
    id: `e${i}`,
    vector: [1, i],
    document: randomBytes(3_000).toString('hex'),
  }));
  await upsert(ctx, { collection: 'paced', entities, wait: 'indexed' });

  // The bucket's clock is the test's: a wait moves it at once, so an hour of pacing takes no real time.
  let now = 0;
  const callsPerHour = 36;
  const burst = 2;
  const seen: Pick<StatusResult, 'sync_state' | 'bootstrap' | 'rpc_budget'>[] = [];
  let indexer: ChainIndexer<CollectionStore> | undefined;
  const budget = createCallBudget(callsPerHour, burst, {
    now: () => now,
    sleep: async (ms) => {
      // What `/v1/status` says while the node waits for its budget.
      if (indexer) {
        const said = await status({
          indexer,
          chain: { chainId: chain.chainId, rpc: chain.url, callsPerHour },
          minBlockTimeoutMs: 1_000,
        });
        seen.push({ sync_state: said.sync_state, bootstrap: said.bootstrap, rpc_budget: said.rpc_budget });
      }
      now += ms;
    },
  });
  // Pages of one or two entities (and pages asked again in halves): each one call to pace.
  const tight = createHttpTransport({ url: chain.url, maxAnswerBytes: 24 * 1024 });
  cleanups.push(() => tight.close());
  const calls: { at: number; used: number; method: string }[] = [];
  const counted = countCalls(tight, (n, methods) => {
    for (const method of methods) calls.push({ at: now, used: calls.length + 1, method });
    assert.ok(n >= 1);
  });
  const progress: { entities: number; pages?: number; nextCallAt?: number }[] = [];
  const sink: ProgressSink = {
    phase() {},
    bootstrap: (entities, _ms, paging) => progress.push({ entities, ...paging }),
    catchUp() {},
    done() {},
  };
  indexer = new ChainIndexer({
    source: createDbChainSource(budgetedTransport(counted, budget)),
    stores: engineStores,
    chainId: chain.chainId,
    blockTimeSeconds: 0.2,
    callBudget: budget,
    progress: sink,
  });
  const paced = indexer;
  paced.start();
  cleanups.push(() => paced.stop());
  assert.ok(await paced.waitForBlock(chain.headNumber, 60_000), 'bootstrapped');
  assert.equal(paced.collections.get('paced')?.store.size, 12);

  const queries = calls.filter((c) => c.method === 'arkiv_query').length;
  assert.ok(queries >= 6, `the bootstrap needed several pages: ${queries} queries`);
  // At every call: no more calls than the bucket held at the start plus what it refilled since.
  for (const call of calls)
    assert.ok(
      call.used <= burst + (call.at * callsPerHour) / 3_600_000 + 1e-9,
      `call ${call.used} (${call.method}) at ${call.at} ms of the bucket's clock: over the budget`,
    );
  // It waited while bootstrapping and status said so: `starting` (never `stalled`), the pages answered so
  // far, and when the next call goes; its progress counted the pages, with the next call's time.
  const waits = seen.filter((s) => s.bootstrap !== null);
  assert.ok(waits.length >= 6, `${waits.length} waits within the bootstrap`);
  for (const said of waits) {
    assert.equal(said.sync_state, 'starting');
    assert.ok(said.rpc_budget?.next_poll_at, 'status says when the next call goes');
  }
  const statusPages = waits.map((s) => s.bootstrap?.pages ?? -1);
  assert.ok(defined(statusPages.at(-1), 'last') >= 6, `status counted ${statusPages.join(', ')} pages`);
  assert.equal(waits.at(-1)?.bootstrap?.block, paced.asOfBlock);
  const pages = progress.filter((p) => p.pages !== undefined);
  assert.ok(pages.length >= queries / 2, `progress of ${pages.length} pages`);
  const counts = pages.map((p) => defined(p.pages, 'pages'));
  assert.deepEqual(
    counts,
    [...counts].sort((a, b) => a - b),
    'pages only go up',
  );
  assert.ok(defined(counts.at(-1), 'last count') >= 6, `${counts.at(-1)} pages answered`);
  assert.ok(progress.some((p) => p.nextCallAt !== undefined));
  assert.equal(paced.bootstrapProgress, undefined, 'no bootstrap runs once it is done');
});

test('a bootstrap retried after a failed page waits for its budget as `starting`, not `stalled`', async () => {
  const chain = await startTestDevnet({ protocol: 'dbchain' });
  cleanups.push(() => chain.stop());
  const inner = createHttpTransport({ url: chain.url, attempts: 1 });
  cleanups.push(() => inner.close());
  // The first query page fails once: the bootstrap step fails, and its retry waits for the budget.
  let queries = 0;
  const flaky = countCalls(inner, (_n, methods) => {
    if (methods.includes('arkiv_query') && ++queries === 1) throw new Error('injected: the page did not arrive');
  });
  // A call a second, five at once, on the wall clock: the retry waits about 4 s for its step's five calls,
  // longer than the 3 block times (2.25 s) `stalled` takes.
  const blockTimeSeconds = 0.75;
  const budget = createCallBudget(3_600, 5);
  const indexer = pacedIndexer(flaky, budget, chain.chainId, blockTimeSeconds);
  const states: string[] = [];
  indexer.on('state', (state) => states.push(state));
  indexer.start();
  cleanups.push(() => indexer.stop());
  assert.ok(await indexer.waitForBlock(chain.headNumber, 60_000), 'bootstrapped after the retry');
  assert.equal(indexer.lastFailure?.message, 'injected: the page did not arrive');
  assert.ok(queries > 1, `the bootstrap went on after the failed page: ${queries} queries`);
  assert.ok(!states.includes('stalled'), `states: ${states.join(', ')}`);
});
