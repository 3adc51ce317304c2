// The per-query cost of a native store's search outside the native search (issue 23 item 2: under 5 µs):
// `store.search` against the addon's own `search` call on an identical graph (same vectors, order, seed
// and parameters, so the same walk), and the store's `searchPinned` (the walk on a thread), in
// alternating chunks of queries, in CPU time of the process (all threads) and wall time. Each round keeps
// both sides' time per query; the overhead is the median over rounds of the difference.
//
// Usage: ARKIVECTOR_ENGINE=native tsx scripts/bench-search-overhead.ts [--n N] [--dim D] [--queries Q] [--rounds R]
//   default 10k × 384 (the REST bench's collection), 500 queries, 7 rounds; k = 10, the default ef_search.

import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CollectionStore } from '../src/engine/index.ts';
import { ENGINE_ENV } from '../src/engine/hnsw/engine.ts';
import { nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { effectiveEf, HNSW_RANDOM_SEED } from '../src/engine/hnsw/params.ts';
import { benchDefinition, benchRecord } from './benchRecord.ts';
import { clustered } from './generators.ts';

const { values } = parseArgs({
  options: { n: { type: 'string' }, dim: { type: 'string' }, queries: { type: 'string' }, rounds: { type: 'string' } },
});
const N = Number(values.n ?? 10_000);
const DIM = Number(values.dim ?? 384);
const NQ = Number(values.queries ?? 500);
const ROUNDS = Number(values.rounds ?? 7);
const K = 10;
const CHUNK = 50;
const INDEX = { m: 16, efConstruction: 64 };
if (process.env[ENGINE_ENV] !== 'native') throw new Error(`run with ${ENGINE_ENV}=native`);

const log = (line: string) => process.stderr.write(`${line}\n`);
log(`${N} × ${DIM}, ${NQ} queries, ${ROUNDS} rounds, load average ${loadavg()[0]!.toFixed(2)}`);
const def = benchDefinition(DIM, INDEX);
const records = clustered(N, DIM, 1, { latent: 64 }).vectors.map((v, i) => benchRecord(i, Array.from(v)));
const store = new CollectionStore('bench', def);
await store.apply({ remove: [], upsert: records });
const { HalfIndex } = nativeAddon();
const raw = new HalfIndex({ metric: 'cosine', dim: DIM, maxElements: N, ...INDEX, seed: HNSW_RANDOM_SEED });
for (let i = 0; i < N; i++) raw.addPoint(Float32Array.from(records[i]!.vector), i);
const queries = clustered(NQ, DIM, 2, { latent: 64 }).vectors.map((v) => Array.from(v));

// What the store asks of the graph for k = 10: k + 1 (to see a tie past the k-th), at the default width.
const fetch = K + 1;
const ef = Math.max(effectiveEf(def, fetch, N), fetch);
const labels = new Uint32Array(fetch);
const distances = new Float32Array(fetch);
const stats = new Int32Array(2);
const rawSearch = (q: number[]) => raw.search(Float32Array.from(q), fetch, ef, labels, distances, stats);
let differ = 0;
for (const q of queries) {
  rawSearch(q);
  const ids = store.search({ vector: q, k: K }).results.map((r) => r.record.id);
  if (ids.join() !== Array.from(labels.subarray(0, K), String).join()) differ++;
}
log(`answers that differ between the store and the raw index: ${differ} of ${NQ}`);

type Side = 'store' | 'raw' | 'pinned';
const perRound: Record<Side, { cpu: number; wall: number }[]> = { store: [], raw: [], pinned: [] };
for (let round = 0; round < ROUNDS; round++) {
  const sum: Record<Side, { cpu: number; wall: number }> = {
    store: { cpu: 0, wall: 0 },
    raw: { cpu: 0, wall: 0 },
    pinned: { cpu: 0, wall: 0 },
  };
  for (let c = 0; c < NQ; c += CHUNK) {
    const chunk = queries.slice(c, c + CHUNK);
    for (const side of ['store', 'raw', 'pinned'] as const) {
      const u0 = process.cpuUsage();
      const t0 = performance.now();
      if (side === 'store') for (const q of chunk) store.search({ vector: q, k: K });
      else if (side === 'raw') for (const q of chunk) rawSearch(q);
      else for (const q of chunk) await store.searchPinned({ vector: q, k: K });
      const u = process.cpuUsage(u0);
      sum[side].wall += (performance.now() - t0) * 1000;
      sum[side].cpu += u.user + u.system;
    }
  }
  for (const side of ['store', 'raw', 'pinned'] as const)
    perRound[side].push({ cpu: sum[side].cpu / NQ, wall: sum[side].wall / NQ });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const diff = (side: Side, field: 'cpu' | 'wall') =>
  median(perRound[side].map((r, i) => r[field] - perRound.raw[i]![field]));
const row = (side: Side) => ({
  side,
  cpu_us_per_query: median(perRound[side].map((r) => r.cpu)).toFixed(1),
  wall_us_per_query: median(perRound[side].map((r) => r.wall)).toFixed(1),
  cpu_us_over_raw: side === 'raw' ? '' : diff(side, 'cpu').toFixed(1),
  wall_us_over_raw: side === 'raw' ? '' : diff(side, 'wall').toFixed(1),
});
console.table([row('raw'), row('store'), row('pinned')]);
log(`load average at the end ${loadavg()[0]!.toFixed(2)}`);
