// The per-query cost of a native store's search outside the native search (issue 23 item 2: under 5 µs):
// `store.search` against the bare addon call the store's planner makes (`search` with preallocated
// outputs and a float32 query) on the store's own graph (the index the store made, captured at its
// construction: two separately built graphs differ by a few per cent in speed from where their memory
// lies, as much as the cost measured), and the store's `searchPinned` (the walk on a thread), in
// alternating chunks of queries, in CPU time of the process (all threads) and wall time. The store is
// asked as the service asks it (a query parsed from JSON, a number[]), so it is charged for checking and
// converting it. Each round keeps each side's time per query; the overhead is the median over rounds
// of the difference.
//
// Usage: ARKIVECTOR_ENGINE=native tsx scripts/bench-search-overhead.ts [--n N] [--dim D] [--queries Q] [--rounds R]
//   default 10k × 384 (the REST bench's collection), 500 queries, 7 rounds; k = 10, the default ef_search.

import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CollectionStore } from '../src/engine/index.ts';
import { ENGINE_ENV } from '../src/engine/hnsw/engine.ts';
import { type HalfIndex, nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { effectiveEf } from '../src/engine/hnsw/params.ts';
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
const addon = nativeAddon() as { HalfIndex: HalfIndexClass };
type HalfIndexClass = ReturnType<typeof nativeAddon>['HalfIndex'];
const made: HalfIndex[] = [];
const { HalfIndex: Native } = addon;
addon.HalfIndex = class extends Native {
  constructor(...args: ConstructorParameters<HalfIndexClass>) {
    super(...args);
    made.push(this);
  }
};
const store = new CollectionStore('bench', def);
await store.apply({ remove: [], upsert: records });
addon.HalfIndex = Native;
if (made.length !== 1) throw new Error(`the store made ${made.length} native indexes, expected 1`);
const raw = made[0]!;
const queries = clustered(NQ, DIM, 2, { latent: 64 }).vectors.map((v) => Array.from(v));
const rawQueries = queries.map((q) => Float32Array.from(q));

// What the store asks of the graph for k = 10: k + 1 (to see a tie past the k-th), at the default width.
const fetch = K + 1;
const ef = Math.max(effectiveEf(def, fetch, N), fetch);
const labels = new Uint32Array(fetch);
const distances = new Float32Array(fetch);
const stats = new Int32Array(2);
// The minimal call the store makes for an unfiltered search: preallocated outputs, a float32 query.
const rawSearch = (q: Float32Array) => raw.search(q, { k: fetch, ef, labels, distances, stats });
let differ = 0;
for (const [i, q] of queries.entries()) {
  rawSearch(rawQueries[i]!);
  const ids = store.search({ vector: q, k: K }).results.map((r) => r.record.id);
  if (ids.join() !== Array.from(labels.subarray(0, K), String).join()) differ++;
}
log(`answers that differ between the store and the bare call: ${differ} of ${NQ}`);

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
    const rawChunk = rawQueries.slice(c, c + CHUNK);
    for (const side of ['store', 'raw', 'pinned'] as const) {
      const u0 = process.cpuUsage();
      const t0 = performance.now();
      if (side === 'store') for (const q of chunk) store.search({ vector: q, k: K });
      else if (side === 'raw') for (const q of rawChunk) rawSearch(q);
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
