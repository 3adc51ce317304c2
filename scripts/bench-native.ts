// `npm run bench:native`: the native engine's graph (src/engine/hnsw/halfGraph.ts) against raw
// hnswlib-node as npm builds it, graph against graph (no store around either): build rate, RSS growth per
// vector of each build, and unfiltered recall@10 / QPS at each ef, the two systems alternating in chunks
// of queries so that load from other processes hits both alike (each keeps its best round; the ratio is
// the median over rounds of CPU-time rates). Data as ARCHITECTURE.md §10.1 (clustered, 64-d latent,
// halfvec-rounded for both systems). Ground truth from the addon's exact scan.
//
// Usage: tsx scripts/bench-native.ts [--n N] [--dim D] [--queries Q] [--out FILE]  (default 100k × 384, 300 queries)

import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../src/collections/index.ts';
import { HalfGraph } from '../src/engine/hnsw/halfGraph.ts';
import { nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { METRIC_OPS } from '../src/engine/metrics.ts';
import { clustered } from './generators.ts';

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const N = Number(option('--n') ?? 100_000);
const DIM = Number(option('--dim') ?? 384);
const NQ = Number(option('--queries') ?? 300);
const OUT = option('--out');
const PARAMS = { m: 16, efConstruction: 64 };
const EFS = [40, 64, 100, 128, 200];
const ROUNDS = 5;
const CHUNK = 25;
const K = 10;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const rss = (): number => {
  gc();
  return process.memoryUsage().rss;
};
const log = (m: string) => process.stderr.write(`${m}\n`);

const round16 = (v: Float32Array) => Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x)]!);
const base = clustered(N, DIM, 1, { latent: 64 }).vectors.map(round16);
const queries = clustered(NQ, DIM, 2, { latent: 64 }).vectors.map(round16);
const arr = new Array<number>(DIM).fill(0);
const toArray = (v: Float32Array): number[] => {
  for (let i = 0; i < DIM; i++) arr[i] = v[i]!;
  return arr;
};

log(
  `bench-native: n=${N} dim=${DIM} queries=${NQ} m=${PARAMS.m} efc=${PARAMS.efConstruction}, kernel ${nativeAddon().cpu().default}`,
);
let before = rss();
let t0 = performance.now();
const raw = new hnswlib.HierarchicalNSW('cosine', DIM);
raw.initIndex(N, PARAMS.m, PARAMS.efConstruction, 100);
for (let i = 0; i < N; i++) raw.addPoint(toArray(base[i]!), i);
const rawBuild = (performance.now() - t0) / 1000;
const rawBytes = (rss() - before) / N;
log(`hnswlib-node build ${rawBuild.toFixed(1)} s, ${Math.round(rawBytes)} B/vector`);

before = rss();
t0 = performance.now();
const half = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS, N);
for (let i = 0; i < N; i++) half.add(base[i]!, i);
const halfBuild = (performance.now() - t0) / 1000;
const halfBytes = (rss() - before) / N;
log(`native build ${halfBuild.toFixed(1)} s, ${Math.round(halfBytes)} B/vector`);

const truth = queries.map((q) => new Set(half.exact(q, K).labels));
type Sys = { name: string; search: (q: Float32Array) => number[] };
const systems = (ef: number): Sys[] => [
  {
    name: 'hnswlib-node',
    search: (q) => {
      raw.setEf(ef);
      return raw.searchKnn(toArray(q), K).neighbors;
    },
  },
  { name: 'native', search: (q) => half.search(q, K, ef).labels },
];

const rows: Record<string, unknown>[] = [
  { system: 'hnswlib-node', n: N, dim: DIM, build_s: rawBuild, bytes_per_vector: rawBytes },
  { system: 'native', n: N, dim: DIM, build_s: halfBuild, bytes_per_vector: halfBytes, kernel: half.kernel },
];
for (const ef of EFS) {
  const sys = systems(ef);
  const best = [0, 0];
  const ratios: number[] = [];
  const recall = [0, 0];
  for (let round = 0; round < ROUNDS; round++) {
    const wall = [0, 0];
    const cpu = [0, 0];
    for (let c = 0; c < NQ; c += CHUNK) {
      const order = ((c / CHUNK) & 1) === 0 ? [0, 1] : [1, 0];
      for (const s of order) {
        const u0 = process.cpuUsage();
        const w0 = performance.now();
        for (let i = c; i < Math.min(NQ, c + CHUNK); i++) {
          const got = sys[s]!.search(queries[i]!);
          if (round === 0) for (const l of got) if (truth[i]!.has(l)) recall[s]! += 1;
        }
        wall[s]! += performance.now() - w0;
        const u = process.cpuUsage(u0);
        cpu[s]! += (u.user + u.system) / 1000;
      }
    }
    for (const s of [0, 1]) best[s] = Math.max(best[s]!, (NQ / wall[s]!) * 1000);
    ratios.push(cpu[0]! / cpu[1]!);
  }
  ratios.sort((a, b) => a - b);
  const ratio = ratios[Math.floor(ratios.length / 2)]!;
  for (const s of [0, 1]) {
    const r = { system: sys[s]!.name, ef, recall_at_10: recall[s]! / (NQ * K), qps: best[s]! } as Record<
      string,
      unknown
    >;
    if (s === 1) r.vs_hnswlib = ratio;
    rows.push(r);
  }
  log(
    `ef=${ef}: hnswlib-node ${Math.round(best[0]!)} QPS recall ${(recall[0]! / (NQ * K)).toFixed(3)}; native ${Math.round(best[1]!)} QPS recall ${(recall[1]! / (NQ * K)).toFixed(3)}; native ÷ raw per CPU second ${ratio.toFixed(2)}×`,
  );
}
if (OUT !== undefined) writeFileSync(OUT, `${JSON.stringify(rows, null, 2)}\n`);
