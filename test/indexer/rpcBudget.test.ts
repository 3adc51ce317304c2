// A follower with a call budget (`--rpc-budget`, issue 20 item 3): it paces its steps so the calls it makes
// stay within the budget, it is not `stalled` while it waits by choice, and a chain that stops answering
// still shows `stalled` (counted from when its next step was due).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  budgetedTransport,
  countCalls,
  createCallBudget,
  createDbChainSource,
  createHttpTransport,
} from '../../src/chain/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

test('a paced follower stays within its budget, is not stalled while it waits, and a dead RPC still shows stalled', async () => {
  const chain = await startTestDevnet({ protocol: 'dbchain' });
  const inner = createHttpTransport({ url: chain.url, attempts: 1 });
  let calls = 0;
  const counted = countCalls(inner, (n) => {
    calls += n;
  });
  // Two calls a second, five at once: a step (about five calls) every ~2.5 s, against a 0.2 s block time.
  const budget = createCallBudget(7_200, 5);
  const indexer = new ChainIndexer({
    source: createDbChainSource(budgetedTransport(counted, budget)),
    stores: engineStores,
    chainId: chain.chainId,
    blockTimeSeconds: 0.2,
    callBudget: budget,
  });
  const states: string[] = [];
  indexer.on('state', (state) => states.push(state));
  let stopped = false;
  try {
    indexer.start();
    assert.ok(await indexer.waitForBlock(chain.headNumber, 30_000));
    calls = 0;
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      chain.mine(1);
      indexer.poke();
      assert.ok(await indexer.waitForBlock(chain.headNumber, 30_000), `followed block ${chain.headNumber}`);
    }
    const seconds = (Date.now() - started) / 1000;
    assert.ok(seconds > 3 * 0.6, `paced: ${seconds} s for 3 blocks, each step longer than 3 block times`);
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
