// `npm run bench -- engine --graph --memory`: what the native graph alone costs in memory, built at its exact
// size and grown from empty by inserts, each in a process of its own (RSS growth over the build, per vector),
// beside raw hnswlib-node at its exact size. A store grows its graph block by block (reserve, then the
// block's inserts): the grown graph must cost about what the exact one does, its unused capacity untouched.
// Vectors are uniform random (the links a vector gets hardly depend on the data), made one at a time into
// one buffer so that no JavaScript memory grows beside the graph.
//
// Usage: npm run bench -- engine --graph --memory [--n N] [--dim D] [--block B] [--out FILE]
//   (default 100k × 384, blocks of 100 inserts; m 16, ef_construction 64)

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS } from '../../src/engine/metrics.ts';
import { mulberry32 } from '../../test/helpers/generators.ts';
import { BENCH_ENTRY, benchArgs, childArgs, numberOption } from './args.ts';
import { loadAvg, log, writeJson } from './output.ts';

const CASES = ['exact', 'grown', 'hnswlib-node'] as const;
type Case = (typeof CASES)[number];

const args = benchArgs({
  graph: { type: 'boolean', default: false },
  memory: { type: 'boolean', default: false },
  case: { type: 'string' },
  n: { type: 'string' },
  dim: { type: 'string' },
  block: { type: 'string' },
  out: { type: 'string' },
});
const N = numberOption(args.n, 100_000, 'n');
const DIM = numberOption(args.dim, 384, 'dim');
const BLOCK = numberOption(args.block, 100, 'block');
const PARAMS = { m: 16, efConstruction: 64 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/**
 * Resident bytes now outside the JavaScript heap (after a full collection): the heap grows and shrinks by
 * megabytes as the loaded code settles, which would swamp a small graph's figure.
 */
const rss = (): number => {
  gc();
  const resident = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
  return resident - process.memoryUsage().heapTotal;
};

/** Builds one case in this process and prints its row as one JSON line. */
function runCase(which: Case): void {
  const random = mulberry32(7);
  const v = new Float32Array(DIM);
  const plain = new Array<number>(DIM).fill(0);
  const next = (): Float32Array => {
    for (let d = 0; d < DIM; d++) v[d] = random() - 0.5;
    return v;
  };
  // Warm: the addon loaded, its tables made, the insert path compiled.
  const warm = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS, 16);
  for (let i = 0; i < 16; i++) warm.add(next(), i);
  const before = rss();
  const t0 = performance.now();
  let capacity = N;
  if (which === 'hnswlib-node') {
    const raw = new hnswlib.HierarchicalNSW('cosine', DIM);
    raw.initIndex(N, PARAMS.m, PARAMS.efConstruction, 100);
    for (let i = 0; i < N; i++) {
      next();
      for (let d = 0; d < DIM; d++) plain[d] = v[d]!;
      raw.addPoint(plain, i);
    }
  } else {
    const g = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS, which === 'exact' ? N : undefined);
    for (let i = 0; i < N; i++) {
      if (which === 'grown' && i % BLOCK === 0) g.reserve(Math.min(BLOCK, N - i));
      g.add(next(), i);
    }
    capacity = g.capacity;
  }
  const buildS = (performance.now() - t0) / 1000;
  const grew = rss() - before;
  process.stdout.write(
    `${JSON.stringify({ case: which, n: N, dim: DIM, capacity, bytes_per_vector: grew / N, build_s: buildS })}\n`,
  );
}

if (args.case !== undefined) {
  if (!(CASES as readonly string[]).includes(args.case)) throw new Error(`--case is one of ${CASES.join(', ')}`);
  runCase(args.case as Case);
} else {
  const rows: Record<string, unknown>[] = [];
  for (const which of CASES) {
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        BENCH_ENTRY,
        ...childArgs(['--graph', '--memory', '--case', which, '--n', `${N}`, '--dim', `${DIM}`, '--block', `${BLOCK}`]),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
    );
    const row = JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>;
    row.load_average = loadAvg()[0]!;
    rows.push(row);
    log(
      `${which}: ${Math.round(row.bytes_per_vector!)} B/vector (capacity ${row.capacity}, build ${row.build_s!.toFixed(1)} s)`,
    );
  }
  const exact = rows[0]!.bytes_per_vector as number;
  const grown = rows[1]!.bytes_per_vector as number;
  log(
    `grown ÷ exact ${(grown / exact).toFixed(3)}; exact ÷ hnswlib-node ${(exact / (rows[2]!.bytes_per_vector as number)).toFixed(3)}`,
  );
  writeJson(args.out, rows);
}
