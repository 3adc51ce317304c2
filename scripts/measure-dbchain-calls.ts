// Counts the JSON-RPC calls (each element of a batch counts, as a per-call rate limit counts them) the
// DB-chain follower makes on the devnet: over 1,000 idle blocks while catching up, and per registry
// transaction. `npx tsx scripts/measure-dbchain-calls.ts` (README, "Chains and a funded signer").
import { createDbChainSource, createDbChainWriter, createHttpTransport, emptyBatch } from '../src/chain/index.ts';
import type { RpcTransport } from '../src/chain/index.ts';
import { startDevnet } from '../src/devnet/index.ts';
import { engineStores } from '../src/engine/storeFactory.ts';
import { ChainIndexer } from '../indexer/index.ts';
import { defined } from '../src/defined.ts';

const devnet = await startDevnet({ protocol: 'dbchain', port: 0, blockTime: 0 });
const calls = new Map<string, number>();
const count = (method: string) => calls.set(method, (calls.get(method) ?? 0) + 1);
const inner = createHttpTransport({ url: devnet.url });
const transport: RpcTransport = {
  url: inner.url,
  request: (method, params) => {
    count(method);
    return inner.request(method, params);
  },
  batch: (list) => {
    for (const c of list) count(c.method);
    return inner.batch(list);
  },
  close: () => inner.close(),
};
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
await source.blocks(last - txs + 1, last);
const perTx = { total: total(), byMethod: Object.fromEntries(calls) };
console.log(JSON.stringify({ idleBlocks: 1000, idle, registryTransactions: txs, blocksWithThem: perTx }, null, 2));
await indexer.stop();
await inner.close();
await devnet.stop();
