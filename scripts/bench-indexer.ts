// Indexer benchmark: catch-up rate (blocks/s, entities/s) when tailing, bootstrap rate with the pinned-block
// query, and restart time from a snapshot against a full rebuild, at dim 384 against the devnet.
// Usage: npm run bench:indexer -- [--entities 20000] [--dim 384] [--per-tx 200] [--out FILE]; `--large` is
// 100k × 384. Catch-up is compared with raw hnswlib-node inserting the same vectors in the same process.
// Memory (RSS per live entity, read-only node and write daemon): npm run bench:indexer -- --memory
// [--entities 30000] [--dim 32] [--heap-dir DIR] [--out FILE]; `--quick` shrinks either mode.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createWalletClient, http } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';
import { encodeCollectionEntity, encodeVectorEntity, validateCollectionDefinition } from '../src/collections/index.ts';
import { createHttpTransport } from '../src/chain/transport.ts';
import { startDevnet } from '../src/devnet/index.ts';
import { engineStores } from '../src/engine/storeFactory.ts';
import { ChainIndexer } from '../indexer/indexer.ts';
import { nodeRole, runMemoryBench } from './benchIndexerMemory.ts';
import { mulberry32 } from './generators.ts';
import hnswlib from 'hnswlib-node';
import { HALF_TO_FLOAT32 } from '../src/collections/index.ts';
import { HNSW_RANDOM_SEED } from '../src/engine/hnsw/params.ts';
import { halfvecOf } from '../src/engine/vectorSlab.ts';

/** dim draws, rounded to binary16 as the chain keeps them, written into `into` at `offset` too. */
function halfRounded(into: Float32Array, offset: number, dim: number, random: () => number): number[] {
  const bytes = halfvecOf(Float32Array.from({ length: dim }, random));
  const out = new Array<number>(dim);
  for (let i = 0; i < dim; i++) out[i] = into[offset + i] = HALF_TO_FLOAT32[bytes[2 * i]! | (bytes[2 * i + 1]! << 8)]!;
  return out;
}

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '20000' },
    dim: { type: 'string', default: '384' },
    'per-tx': { type: 'string', default: '200' },
    out: { type: 'string' },
    memory: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    'heap-dir': { type: 'string' },
    role: { type: 'string' },
    rpc: { type: 'string' },
  },
});
const log = (line: string) => process.stderr.write(`${line}\n`);

if (values.role === 'node') await nodeRole(values.rpc ?? '');
else if (values.memory) {
  const total = Number(values.quick ? 2000 : process.argv.includes('--entities') ? values.entities : 30_000);
  const dim = Number(process.argv.includes('--dim') ? values.dim : 32);
  const result = await runMemoryBench(new URL(import.meta.url).pathname, total, dim, values['heap-dir']);
  console.table({
    'read-only node': result.read_only,
    'write daemon': result.write_daemon,
  });
  log(`${total} entities, dim ${dim}, ${result.document_bytes}-byte documents, two attributes`);
  if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`);
} else await throughputBench();

async function throughputBench(): Promise<void> {
  const total = Number(values.quick ? 2000 : values.large ? 100_000 : values.entities);
  const dim = Number(values.large ? 384 : values.dim);
  const perTx = Number(values['per-tx']);

  const devnet = await startDevnet({ port: 0, blockTime: 0 });
  const transport = createHttpTransport({ url: devnet.url });
  const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-bench-'));
  try {
    const [funded] = devnet.accounts;
    if (!funded) throw new Error('the devnet has no funded account');
    const wallet = createWalletClient({
      chain: localhost,
      transport: http(devnet.url),
      account: privateKeyToAccount(funded.privateKey),
    });
    const input = { dim, metric: 'cosine' as const, attributes: { topic: 'str' as const, rank: 'i32' as const } };
    const definition = validateCollectionDefinition(input);
    await wallet.createEntity({ ...encodeCollectionEntity('bench', input), expiresIn: 10_000_000 });
    const startBlock = devnet.headNumber;
    const uniform = mulberry32(7);
    const random = () => uniform() * 2 - 1;
    // The values the engine indexes (binary16-rounded), kept for the raw hnswlib baseline.
    const halves = new Float32Array(total * dim);
    const writeStarted = Date.now();
    for (let written = 0; written < total; written += perTx) {
      const creates = Array.from({ length: Math.min(perTx, total - written) }, (_, i) => {
        const encoded = encodeVectorEntity(
          {
            collection: 'bench',
            id: `v${written + i}`,
            vector: halfRounded(halves, (written + i) * dim, dim, random),
            document: `document ${written + i}`,
            attributes: { topic: `t${(written + i) % 7}`, rank: written + i },
          },
          definition,
        );
        return {
          payload: encoded.payload,
          contentType: encoded.contentType,
          attributes: encoded.attributes,
          expiresIn: 10_000_000,
        };
      });
      await wallet.mutateEntities({ creates });
      if (process.stderr.isTTY) process.stderr.write(`\rwriting: ${written + creates.length} / ${total}`);
    }
    const blocks = devnet.headNumber - startBlock;
    log(
      `\nwrote ${total} entities (dim ${dim}) in ${blocks} blocks in ${((Date.now() - writeStarted) / 1000).toFixed(1)} s`,
    );

    const run = async (label: string, options: Partial<ConstructorParameters<typeof ChainIndexer>[0]>) => {
      const indexer = new ChainIndexer({
        transport,
        stores: engineStores,
        chainId: devnet.chainId,
        blockTimeSeconds: 0.5,
        batchSize: 20,
        ...options,
      });
      const started = process.hrtime.bigint();
      indexer.start();
      if (!(await indexer.waitForBlock(devnet.headNumber, 600_000)))
        throw new Error(`${label}: did not finish (${indexer.lastError})`);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const size = indexer.collections.get('bench')?.stats.live_entities ?? 0;
      if (size !== total) throw new Error(`${label}: ${size} entities indexed, expected ${total}`);
      return { indexer, seconds };
    };

    const catchUp = await run('catch-up', { startBlock });
    await catchUp.indexer.stop();
    const bootstrap = await run('bootstrap', { dataDir });
    await bootstrap.indexer.stop(); // writes the snapshot
    const restart = await run('snapshot restart', { dataDir });
    await restart.indexer.stop();
    if (restart.indexer.counters.snapshotsLoaded !== 1) throw new Error('the restart did not load the snapshot');

    // Raw hnswlib-node on the same vectors, same parameters, in this process: the catch-up's ceiling.
    const raw = new hnswlib.HierarchicalNSW('cosine', dim);
    raw.initIndex(total, definition.index.m, definition.index.ef_construction, HNSW_RANDOM_SEED);
    const point = new Array<number>(dim);
    const rawStarted = process.hrtime.bigint();
    for (let n = 0; n < total; n++) {
      for (let i = 0; i < dim; i++) point[i] = halves[n * dim + i]!;
      raw.addPoint(point, n);
    }
    const rawSeconds = Number(process.hrtime.bigint() - rawStarted) / 1e9;

    const results = {
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      entities: total,
      dim,
      blocks,
      catch_up: {
        seconds: catchUp.seconds,
        blocks_per_second: blocks / catchUp.seconds,
        entities_per_second: total / catchUp.seconds,
      },
      bootstrap: { seconds: bootstrap.seconds, entities_per_second: total / bootstrap.seconds },
      snapshot_restart: { seconds: restart.seconds },
      full_rebuild: { seconds: bootstrap.seconds },
      raw_hnswlib_insert: { seconds: rawSeconds, entities_per_second: total / rawSeconds },
      /** Targets (issue 11): catch-up ≥ 0.8× the raw insert rate; restart ≥ 20× faster than a rebuild. */
      catch_up_vs_raw_insert: rawSeconds / catchUp.seconds,
      restart_speedup_vs_rebuild: bootstrap.seconds / restart.seconds,
    };
    console.table({
      'catch-up (tail blocks)': {
        seconds: results.catch_up.seconds.toFixed(2),
        'blocks/s': results.catch_up.blocks_per_second.toFixed(1),
        'entities/s': results.catch_up.entities_per_second.toFixed(0),
      },
      'bootstrap (pinned query)': {
        seconds: results.bootstrap.seconds.toFixed(2),
        'blocks/s': '-',
        'entities/s': results.bootstrap.entities_per_second.toFixed(0),
      },
      'restart from snapshot': {
        seconds: results.snapshot_restart.seconds.toFixed(2),
        'blocks/s': '-',
        'entities/s': '-',
      },
      'raw hnswlib-node inserts': {
        seconds: rawSeconds.toFixed(2),
        'blocks/s': '-',
        'entities/s': results.raw_hnswlib_insert.entities_per_second.toFixed(0),
      },
    });
    log(
      `catch-up at ${results.catch_up_vs_raw_insert.toFixed(2)}× the raw insert rate; restart ${results.restart_speedup_vs_rebuild.toFixed(1)}× faster than a rebuild`,
    );
    if (values.out) await writeFile(values.out, `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await transport.close();
    await devnet.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
