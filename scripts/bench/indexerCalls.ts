// Counts the JSON-RPC calls (each element of a batch counts, as a per-call rate limit counts them) the
// DB-chain follower makes on the devnet: over 1,000 idle blocks while catching up, per step while live
// (a poll that finds nothing, a poll that finds new empty blocks), within a call budget over a wall-clock
// window, and per registry transaction. `npm run bench -- indexer --calls [--out FILE]`.
import {
  budgetedTransport,
  countCalls,
  createCallBudget,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  emptyBatch,
} from '../../src/chain/index.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from '../../src/defined.ts';
import { writeJson } from './output.ts';

/** Runs the count and writes its JSON to `out` (when given). */
export async function runCallsBench(out: string | undefined): Promise<void> {
  const devnet = await startDevnet({ protocol: 'dbchain', port: 0, blockTime: 0 });
  const calls = new Map<string, number>();
  const count = (method: string) => calls.set(method, (calls.get(method) ?? 0) + 1);
  const inner = createHttpTransport({ url: devnet.url });
  const transport = countCalls(inner, (_, methods) => {
    for (const method of methods) count(method);
  });
  const total = () => [...calls.values()].reduce((a, b) => a + b, 0);
  const indexer = new ChainIndexer({
    source: createDbChainSource(transport),
    stores: engineStores,
    chainId: devnet.chainId,
    blockTimeSeconds: 3600,
  });
  indexer.start();
  await indexer.waitForBlock(0, 30_000);
  calls.clear();
  const start = devnet.headNumber;
  devnet.mine(1000);
  indexer.poke();
  await indexer.waitForBlock(start + 1000, 120_000);
  const idle = { total: total(), byMethod: Object.fromEntries(calls) };
  // Live: one poke finds nothing new (the head and the tip's header), one finds 3 new empty blocks.
  calls.clear();
  indexer.poke();
  await indexer.waitForBlock(devnet.headNumber, 30_000);
  const pollBefore = total();
  indexer.poke();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idlePoll = total() - pollBefore;
  calls.clear();
  devnet.mine(3);
  indexer.poke();
  await indexer.waitForBlock(devnet.headNumber, 30_000);
  const newBlocksStep = { total: total(), byMethod: Object.fromEntries(calls) };
  const writer = createDbChainWriter({
    rpcUrl: devnet.url,
    chainId: devnet.chainId,
    privateKey: defined(devnet.accounts[0], 'dev account 0').privateKey,
  });
  const txs = 10;
  let last = 0;
  for (let i = 0; i < txs; i++) {
    const { hash } = await writer.send({
      ...emptyBatch(),
      creates: [
        {
          btl: 1000n,
          contentType: 'text/plain',
          payload: new Uint8Array([i]),
          stringAttributes: [{ key: 'n', value: `${i}` }],
          numericAttributes: [],
        },
      ],
    });
    last = (await writer.waitForReceipt(hash, 10_000)).blockNumber;
  }
  await indexer.waitForBlock(devnet.headNumber, 30_000);
  calls.clear();
  // The same blocks again, through the source alone: what following them cost, without the writer's own calls.
  const source = createDbChainSource(transport);
  const spanned = defined(source.span, 'the DB-chain span');
  const [before] = await source.headers([last - txs]);
  await spanned({ number: last - txs, hash: defined(before, 'header').hash }, last);
  const perTx = { total: total(), byMethod: Object.fromEntries(calls) };
  await indexer.stop();

  // Within a budget: 3,600 calls an hour (one a second, 10 at once) while the devnet mines a block a second
  // and the follower would poll 4 times a block; the calls over 20 s stay within 10 + 20.
  const paced = await startDevnet({ protocol: 'dbchain', port: 0, blockTime: 1 });
  let pacedCalls = 0;
  const pacedInner = createHttpTransport({ url: paced.url });
  const budget = createCallBudget(3_600);
  const pacedTransport = budgetedTransport(
    countCalls(pacedInner, (n) => {
      pacedCalls += n;
    }),
    budget,
  );
  const pacedIndexer = new ChainIndexer({
    source: createDbChainSource(pacedTransport),
    stores: engineStores,
    chainId: paced.chainId,
    blockTimeSeconds: 1,
    callBudget: budget,
  });
  pacedIndexer.start();
  await pacedIndexer.waitForBlock(0, 30_000);
  const states = new Set<string>();
  pacedIndexer.on('state', (state) => states.add(state));
  pacedCalls = 0;
  const windowStart = paced.headNumber;
  await new Promise((resolve) => setTimeout(resolve, 20_000));
  const budgeted = {
    callsPerHour: 3_600,
    seconds: 20,
    calls: pacedCalls,
    blocksMined: paced.headNumber - windowStart,
    lagAtEnd: paced.headNumber - (pacedIndexer.asOfBlock ?? 0),
    statesSeen: [...states],
  };
  await pacedIndexer.stop();
  await pacedInner.close();
  await paced.stop();
  const result = {
    idleBlocks: 1000,
    idle,
    live: { pollFindingNothing: idlePoll, stepOverNewEmptyBlocks: newBlocksStep },
    budgeted,
    registryTransactions: txs,
    blocksWithThem: perTx,
  };
  console.log(JSON.stringify(result, null, 2));
  writeJson(out, result);
  await inner.close();
  await devnet.stop();
}
