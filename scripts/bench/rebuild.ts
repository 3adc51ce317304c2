// `npm run bench -- rebuild` (`npm run bench:rebuild`): how long the next block waits behind a graph rebuild, in-thread (the store's
// write queue, as before rebuilds moved to a worker) vs in a worker thread, side by side in one process. A store of N × D
// clustered vectors loses 30 % in one block (which triggers the rebuild); the next block (one insert)
// is prepared and committed at once, and the time until its commit ran is "block wait". "max stall" is
// the longest event-loop delay seen meanwhile (monitorEventLoopDelay), "rebuild" the time until the new
// graph serves.
// Usage: npm run bench -- rebuild [--n N] [--dim D] [--out FILE]   (default 100k × 384; --n 20000 --dim 128 for a quick look)
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CollectionStore } from '../../src/engine/index.ts';
import { clustered } from '../../test/helpers/generators.ts';
import { benchArgs, numberOption } from './args.ts';
import { writeJson } from './output.ts';

const args = benchArgs({ n: { type: 'string' }, dim: { type: 'string' }, out: { type: 'string' } });
const N = numberOption(args.n, 100_000, 'n');
const DIM = numberOption(args.dim, 384, 'dim');
const DELETED = 0.3;

const key = (i: number): string => `0x${i.toString(16).padStart(64, '0')}`;
const definition = {
  dim: DIM,
  metric: 'cosine' as const,
  attributes: {},
  open: true,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
};
const record = (i: number, vector: Float32Array | number[]) => ({
  key: key(i),
  owner: '0x00000000000000000000000000000000000000aa',
  creator: '0x00000000000000000000000000000000000000aa',
  collection: 'bench',
  id: `id-${i}`,
  expiresAt: 1000n,
  dim: DIM,
  vector: Float32Array.from(vector),
  halfvec: new Uint8Array(0),
  document: '',
  attributes: {},
});

const { vectors } = clustered(N, DIM, 7);
const rows: Record<string, unknown>[] = [];
for (const mode of ['in-thread', 'worker'] as const) {
  const store = new CollectionStore('bench', definition, { rebuild: { mode } });
  const t0 = performance.now();
  await store.apply({ remove: [], upsert: vectors.map((v, i) => record(i, v)) });
  const buildS = (performance.now() - t0) / 1000;
  const remove: string[] = [];
  for (let i = 0; i < N; i++) if (i % 10 < DELETED * 10) remove.push(key(i));
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const start = performance.now();
  (await store.prepare({ remove, upsert: [] }))();
  const next = performance.now();
  (await store.prepare({ remove: [], upsert: [record(N, vectors[0]!)] }))();
  const blockWaitMs = performance.now() - next;
  await store.rebuilt();
  const rebuildMs = performance.now() - start;
  delay.disable();
  rows.push({
    mode,
    n: N,
    dim: DIM,
    build_s: Number(buildS.toFixed(1)),
    block_wait_ms: Math.round(blockWaitMs),
    max_stall_ms: Math.round(delay.max / 1e6),
    rebuild_ms: Math.round(rebuildMs),
    deleted_after: store.graphStats.deleted,
  });
  await store.close();
}
console.table(rows);
writeJson(args.out, rows);
