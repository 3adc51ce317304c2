// `npm run bench -- engine --graph` (`npm run bench:native`): the native engine's graph (src/engine/hnsw/halfGraph.ts) against raw
// hnswlib-node as npm builds it, graph against graph (no store around either): build rate, RSS growth per
// vector of each build, and unfiltered recall@10 / QPS at each ef, the two systems alternating in chunks
// of queries so that load from other processes hits both alike (each keeps its best round; the ratio is
// the median over rounds of CPU-time rates). Data as ARCHITECTURE.md §10.1 (clustered, 64-d latent,
// halfvec-rounded for both systems). Ground truth from the addon's exact scan.
//
// Usage: npm run bench -- engine --graph [--n N] [--dim D] [--queries Q] [--out FILE]  (default 100k × 384, 300 queries)
//   [--efs 40,64,…]  the widths swept (hnswlib ef), with the store's default width at this size (marked default_width)
//   [--native-only]  the native graph alone (no hnswlib-node build; QPS per CPU second instead of a ratio)
//   [--graph-dir DIR]  reuse the native graph of this size saved there, or build it and save it
//   [--checkpoints n1,n2,…]  with --graph-dir, also save the graph at these smaller sizes while building
//     (the data of a smaller size is a prefix of a larger one's, inserted in the same order)
// `--memory`: the graph's memory instead, exact and grown (engineGraphMemory.ts, its own options).

import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../src/collections/index.ts';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { effectiveEf } from '../../src/engine/hnsw/params.ts';
import { METRIC_OPS } from '../../src/engine/metrics.ts';
import { benchDefinition } from '../../test/helpers/benchRecord.ts';
import { clustered } from '../../test/helpers/generators.ts';
import { benchArgs, given, numberOption } from './args.ts';
import { log, median, writeJson } from './output.ts';

if (given('memory')) {
  await import('./engineGraphMemory.ts');
  process.exit(0);
}

const args = benchArgs({
  graph: { type: 'boolean', default: false },
  n: { type: 'string' },
  dim: { type: 'string' },
  queries: { type: 'string' },
  out: { type: 'string' },
  efs: { type: 'string' },
  'native-only': { type: 'boolean', default: false },
  'graph-dir': { type: 'string' },
  checkpoints: { type: 'string' },
});
const N = numberOption(args.n, 100_000, 'n');
const DIM = numberOption(args.dim, 384, 'dim');
const NQ = numberOption(args.queries, 300, 'queries');
const OUT = args.out;
const PARAMS = { m: 16, efConstruction: 64 };
const K = 10;
const list = (value: string | undefined): number[] | undefined => value?.split(',').map(Number);
/** The store's default width at this size (ef_search 40, grown with the collection: effectiveEf). */
const DEFAULT_EF = effectiveEf(benchDefinition(DIM, PARAMS), K, N);
const EFS = [...new Set([...(list(args.efs) ?? [40, 64, 100, 128, 200]), DEFAULT_EF])].sort((a, b) => a - b);
const NATIVE_ONLY = args['native-only'] === true;
const GRAPH_DIR = args['graph-dir'];
const CHECKPOINTS = new Set(list(args.checkpoints) ?? []);
const ROUNDS = 5;
const CHUNK = 25;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const rss = (): number => {
  gc();
  return process.memoryUsage().rss;
};

const round16 = (v: Float32Array) => Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x)]!);
// Made only when a graph is built (a saved graph needs the queries alone).
let baseVectors: Float32Array[] | undefined;
const base = (): Float32Array[] => (baseVectors ??= clustered(N, DIM, 1, { latent: 64 }).vectors.map(round16));
const queries = clustered(NQ, DIM, 2, { latent: 64 }).vectors.map(round16);
const arr = new Array<number>(DIM).fill(0);
const toArray = (v: Float32Array): number[] => {
  for (let i = 0; i < DIM; i++) arr[i] = v[i]!;
  return arr;
};

log(`engine --graph: n=${N} dim=${DIM} queries=${NQ} m=${PARAMS.m} efc=${PARAMS.efConstruction}`);
/** Where the native graph of `n` points of this data is saved with --graph-dir. */
const graphPath = (n: number): string | undefined =>
  GRAPH_DIR === undefined
    ? undefined
    : join(GRAPH_DIR, `clustered-${n}x${DIM}-m${PARAMS.m}-efc${PARAMS.efConstruction}.hnsw`);

let before = rss();
let t0 = performance.now();
let raw: hnswlib.HierarchicalNSW | undefined;
let rawBuild = 0;
let rawBytes = 0;
if (!NATIVE_ONLY) {
  raw = new hnswlib.HierarchicalNSW('cosine', DIM);
  raw.initIndex(N, PARAMS.m, PARAMS.efConstruction, 100);
  for (let i = 0; i < N; i++) raw.addPoint(toArray(base()[i]!), i);
  rawBuild = (performance.now() - t0) / 1000;
  rawBytes = (rss() - before) / N;
  log(`hnswlib-node build ${rawBuild.toFixed(1)} s, ${Math.round(rawBytes)} B/vector`);
}

const saved = graphPath(N);
const reuse = saved !== undefined && existsSync(saved);
if (!reuse) base();
before = rss();
t0 = performance.now();
let half: HalfGraph;
let halfBuild: number | null = null;
let halfBytes: number | null = null;
if (reuse) {
  half = await HalfGraph.read(METRIC_OPS.cosine, DIM, PARAMS, saved);
  if (half.elementCount !== N) throw new Error(`${saved} holds ${half.elementCount} points, not ${N}`);
  log(`native graph read from ${saved}`);
} else {
  half = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS, N);
  const vectors = base();
  let writing = 0;
  for (let i = 0; i < N; i++) {
    half.add(vectors[i]!, i);
    const at = graphPath(i + 1);
    if (at !== undefined && CHECKPOINTS.has(i + 1) && i + 1 < N) {
      const w0 = performance.now();
      await half.write(at);
      writing += performance.now() - w0;
      log(`native graph of ${i + 1} points saved to ${at} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  halfBuild = (performance.now() - t0 - writing) / 1000;
  halfBytes = (rss() - before) / N;
  log(`native build ${halfBuild.toFixed(1)} s, ${Math.round(halfBytes)} B/vector`);
  if (saved !== undefined) await half.write(saved);
}

const truth = queries.map((q) => new Set(half.exact(q, K).labels));
type Sys = { name: string; search: (q: Float32Array) => number[] };
/** The systems compared at one width: hnswlib-node (unless --native-only), then the native graph. */
const systems = (ef: number): Sys[] => {
  const native: Sys = { name: 'native', search: (q) => half.search(q, K, ef).labels };
  const r = raw;
  if (r === undefined) return [native];
  const rawSys: Sys = {
    name: 'hnswlib-node',
    search: (q) => {
      r.setEf(ef);
      return r.searchKnn(toArray(q), K).neighbors;
    },
  };
  return [rawSys, native];
};

const rows: Record<string, unknown>[] = [];
if (raw !== undefined)
  rows.push({ system: 'hnswlib-node', n: N, dim: DIM, build_s: rawBuild, bytes_per_vector: rawBytes });
rows.push({ system: 'native', n: N, dim: DIM, build_s: halfBuild, bytes_per_vector: halfBytes, kernel: half.kernel });
for (const ef of EFS) {
  const sys = systems(ef);
  const idx = sys.map((_, s) => s);
  const best = idx.map(() => 0);
  const ratios: number[] = [];
  const perCpu: number[] = [];
  const recall = idx.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    const wall = idx.map(() => 0);
    const cpu = idx.map(() => 0);
    for (let c = 0; c < NQ; c += CHUNK) {
      const order = ((c / CHUNK) & 1) === 0 ? idx : [...idx].reverse();
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
    for (const s of idx) best[s] = Math.max(best[s]!, (NQ / wall[s]!) * 1000);
    if (sys.length === 2) ratios.push(cpu[0]! / cpu[1]!);
    perCpu.push((NQ / cpu[sys.length - 1]!) * 1000);
  }
  for (const s of idx) {
    const r = { system: sys[s]!.name, ef, recall_at_10: recall[s]! / (NQ * K), qps: best[s]! } as Record<
      string,
      unknown
    >;
    if (ef === DEFAULT_EF) r.default_width = true;
    r.load_average = loadavg()[0];
    if (s === sys.length - 1) {
      r.qps_per_cpu_s = median(perCpu);
      if (ratios.length > 0) r.vs_hnswlib = median(ratios);
    }
    rows.push(r);
  }
  const n = sys.length - 1;
  log(
    `ef=${ef}: ${sys.length === 2 ? `hnswlib-node ${Math.round(best[0]!)} QPS recall ${(recall[0]! / (NQ * K)).toFixed(3)}; ` : ''}native ${Math.round(best[n]!)} QPS (${Math.round(median(perCpu))} per CPU s) recall ${(recall[n]! / (NQ * K)).toFixed(3)}${ratios.length > 0 ? `; native ÷ raw per CPU second ${median(ratios).toFixed(2)}×` : ''}; load ${loadavg()[0]!.toFixed(2)}`,
  );
}
writeJson(OUT, rows);
