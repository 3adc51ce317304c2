// The exact scan of an allowed set in a native graph grown as a store grows it (×1.125 from 1,024, GRAPH_GROWTH)
// against one made at full size: a grown graph's level 0 is collapsed into huge pages in place at each growth
// (native/src/addon.cc adviseHugePages), and this shows whether it scans as fast as the other. Random vectors,
// the allowed set every 10th label, CPU time of alternating chunks in one process; Linux reports the process's
// level 0 on huge pages (AnonHugePages) after each build.
//
// Usage: tsx scripts/bench-grown-scan.ts [--n N] [--dim D] [--scans S]   (default 100k × 384, 1,500 scans)

import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GRAPH_GROWTH } from '../src/engine/hnsw/graph.ts';
import { type HalfIndex, nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { mulberry32 } from './generators.ts';

const { values } = parseArgs({
  options: { n: { type: 'string' }, dim: { type: 'string' }, scans: { type: 'string' } },
});
const N = Number(values.n ?? 100_000);
const DIM = Number(values.dim ?? 384);
const SCANS = Number(values.scans ?? 1500);
const CHUNK = 50;
const FIRST_CAPACITY = 1024;

const SMAPS = '/proc/self/smaps_rollup';
const hugeMiB = (): number | undefined =>
  existsSync(SMAPS) ? Number(/AnonHugePages:\s+(\d+)/.exec(readFileSync(SMAPS, 'utf8'))?.[1] ?? 0) / 1024 : undefined;

const { HalfIndex: Native } = nativeAddon();
const rand = mulberry32(1);
const vector = new Float32Array(DIM);

function build(grown: boolean): { index: HalfIndex; growthMs: number } {
  let capacity = grown ? FIRST_CAPACITY : N;
  const index = new Native({ metric: 'cosine', dim: DIM, maxElements: capacity, m: 16, efConstruction: 8, seed: 1 });
  let growthMs = 0;
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < DIM; j++) vector[j] = rand() - 0.5;
    if (i === capacity) {
      capacity = Math.ceil(capacity * GRAPH_GROWTH);
      const t = performance.now();
      index.resize(capacity);
      growthMs += performance.now() - t;
    }
    index.addPoint(vector, i);
  }
  return { index, growthMs };
}

const hugeBefore = hugeMiB();
const full = build(false);
const hugeFull = hugeMiB();
const grown = build(true);
const hugeGrown = hugeMiB();
const candidates = Uint32Array.from({ length: Math.floor(N / 10) }, (_, i) => i * 10 + (i % 7));
const query = Float32Array.from({ length: DIM }, () => rand() - 0.5);
const labels = new Uint32Array(10);
const distances = new Float32Array(10);
const stats = new Int32Array(2);
const sides = { full: full.index, grown: grown.index };
const cpu = { full: 0, grown: 0 };
for (const index of Object.values(sides))
  for (let i = 0; i < CHUNK; i++) index.exactSearch(query, { k: 10, labels, distances, stats, candidates });
for (let done = 0; done < SCANS; done += CHUNK) {
  for (const side of ['full', 'grown'] as const) {
    const u0 = process.cpuUsage();
    for (let i = 0; i < CHUNK; i++) sides[side].exactSearch(query, { k: 10, labels, distances, stats, candidates });
    const u = process.cpuUsage(u0);
    cpu[side] += u.user + u.system;
  }
}
const ms = (us: number) => (us / SCANS / 1000).toFixed(3);
const mib = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? 'n/a' : Math.round(a - b);
console.table([
  { graph: 'made at full size', scan_ms_cpu: ms(cpu.full), level0_huge_mib: mib(hugeFull, hugeBefore), growth_ms: 0 },
  {
    graph: `grown ×${GRAPH_GROWTH} from ${FIRST_CAPACITY}`,
    scan_ms_cpu: ms(cpu.grown),
    level0_huge_mib: mib(hugeGrown, hugeFull),
    growth_ms: Math.round(grown.growthMs),
  },
]);
console.log(`${N} × ${DIM}, ${candidates.length} candidates per scan, ${SCANS} scans per graph`);
