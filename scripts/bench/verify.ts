// What checking an answer costs: k = 10 vector searches of a collection on the DB-chain devnet, each checked
// with verifyAnswer against the devnet's RPC — the JSON-RPC calls, HTTP requests and milliseconds, with the
// completeness check (the collection read whole) and without it (the block and the results only).
// `npm run bench -- verify [--n 1000] [--dim 384] [--queries 20] [--out FILE]` (docs/verify.md).
// The devnet runs in this process: its answers share the core with the verifier.
import { createDbChainSource, createDbChainWriter, createHttpTransport } from '../../src/chain/index.ts';
import { defined } from '../../src/defined.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { createCollection, search, type ServiceContext, upsert } from '../../src/service/index.ts';
import { verifyAnswer, type VerifyReport } from '../../src/verify/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { clustered } from '../../test/helpers/generators.ts';
import { benchArgs } from './args.ts';
import { writeJson } from './output.ts';

const values = benchArgs({
  n: { type: 'string', default: '1000' },
  dim: { type: 'string', default: '384' },
  queries: { type: 'string', default: '20' },
  out: { type: 'string' },
});
const n = Number(values.n);
const dim = Number(values.dim);
const queries = Number(values.queries);

const devnet = await startDevnet({ protocol: 'dbchain', port: 0, blockTime: 0 });
const transport = createHttpTransport({ url: devnet.url });
const indexer = new ChainIndexer({
  source: createDbChainSource(transport),
  stores: engineStores,
  chainId: devnet.chainId,
  blockTimeSeconds: 0.2,
});
indexer.start();
const writer = createDbChainWriter({
  rpcUrl: devnet.url,
  chainId: devnet.chainId,
  privateKey: defined(devnet.accounts[0], 'dev account 0').privateKey,
  transport,
});
const ctx: ServiceContext = {
  indexer,
  chain: { chainId: devnet.chainId, rpc: devnet.url, protocol: 'dbchain' },
  minBlockTimeoutMs: 60_000,
  writer,
};
await createCollection(ctx, { name: 'bench', dim, metric: 'cosine', attributes: { topic: 'str' } });
const { vectors } = clustered(n, dim, 1);
const queryVectors = clustered(queries, dim, 2).vectors;
for (let i = 0; i < n; i += 100)
  await upsert(ctx, {
    collection: 'bench',
    entities: vectors.slice(i, i + 100).map((v, j) => ({
      id: `v${i + j}`,
      vector: [...v],
      attributes: { topic: (i + j) % 2 ? 'odd' : 'even' },
    })),
  });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? 0;

async function measure(label: string, complete: number | undefined, where?: string) {
  const reports: VerifyReport[] = [];
  for (const q of queryVectors) {
    const request = { vector: [...q], k: 10, include_document: true, ...(where ? { where } : {}) };
    const answer = await search(ctx, { collection: 'bench', ...request });
    reports.push(
      await verifyAnswer({ rpc: devnet.url, collection: 'bench', request, answer: answer as never, complete }),
    );
  }
  const refuted = reports.filter((r) => r.verdict === 'refuted').length;
  if (refuted) throw new Error(`${label}: ${refuted} honest answers refuted`);
  return {
    label,
    verdicts: [...new Set(reports.map((r) => r.verdict))],
    calls: median(reports.map((r) => r.cost.calls)),
    requests: median(reports.map((r) => r.cost.requests)),
    ms_median: median(reports.map((r) => r.cost.ms)),
    ms_p95: p95(reports.map((r) => r.cost.ms)),
  };
}

const rows = [
  await measure('results only (completeness over the bound)', 0),
  await measure('results only, filtered', 0, "topic = 'even'"),
  await measure(`with completeness (${n} entities read)`, n),
  await measure('with completeness, filtered', n, "topic = 'even'"),
];
const result = { n, dim, k: 10, queries, machine: `${process.arch} node ${process.version}`, rows };
console.log(JSON.stringify(result, null, 2));
writeJson(values.out, result);
await indexer.stop();
await transport.close();
await devnet.stop();
