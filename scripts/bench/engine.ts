// `npm run bench` (the engine suite): recall@10 and QPS of raw hnswlib-node, of arkivector's CollectionStore at equal
// settings, and of an exact scan, unfiltered and filtered, with build rate and memory per vector (the
// store's whole RSS growth: records are made per block and dropped after apply, as the indexer does).
// Filter cases: random allowed sets (50 / 10 / 1 / 0.1 %), clustered ones (the allowed records sit in
// a few of the data's clusters: ~50 %, ~10 % and ~1 %, queries from everywhere) and the far cases (the
// ~10 % and ~1 % clustered sets, queries from the other clusters only). Each filtered row carries its
// QPS as a ratio of the same system's unfiltered QPS at the same ef. A filtered measurement that runs
// past MEASURE_BUDGET_S stops there (after at least BUDGET_MIN_QUERIES queries): its row says how many
// of the queries it answered (`queries` of `queries_asked`). Synthetic clustered data as in
// ARCHITECTURE.md §10.1 (64-d latent Gaussian mixture, 16 centres, linear map to d, noise,
// L2-normalised; base seed 1, query seed 2).
//
// Usage: npm run bench -- [engine] [--quick | --long] [--out FILE] [--n N] [--dim D] [--queries Q] [--no-memory | --memory-only]
//   default 100k × 384 (minutes); --quick 20k × 128 (seconds); --long 1M × 128 (recall at the default
//   width, which grows with the collection, and the filter cases through the planner, beside raw
//   hnswlib-node; docs/benchmarks.md has its run times).
//   `npm run bench -- memory` is `--memory-only` (with --out, its rows as JSON).
// Memory per vector is measured in a child process per system (`--memory-child`, scripts/bench/engineMemory.ts): it reads the same
// vectors into one preallocated slab, gives the C heap's free pages back, then builds that system alone
// with a young generation of fixed size, so its RSS growth is what the system keeps; in this process the
// store would reuse pages raw hnswlib-node and the generator freed.
// --no-memory skips the children (their builds are extra time: about the two builds again);
// --memory-only runs them alone and prints the memory line.
// Unfiltered QPS of hnswlib-node and arkivector is measured side by side: each round runs the queries
// in chunks, alternating the two systems chunk by chunk (which goes first alternates too), so load
// from other processes hits both alike. A system's QPS is its best round (wall clock); the engine ÷
// raw ratio (`vs_hnswlib`) is the median over rounds of the two systems' query rates per second of
// this process's CPU time, which time spent waiting for a core (other processes) does not inflate.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import hnswlib from 'hnswlib-node';
import { decodeVectorPayload, encodeVectorPayload, type VectorRecord } from '../../src/collections/index.ts';
import { type ExactSource, exactTopK, SLAB_CHUNK_SLOTS } from '../../src/engine/exact.ts';
import { selectedEngine } from '../../src/engine/hnsw/engine.ts';
import { CollectionStore, EF_SEARCH_SCALE, effectiveEf, METRIC_OPS } from '../../src/engine/index.ts';
import { ENUMERATIONS_KEPT } from '../../src/engine/plan/enumerations.ts';
import { benchDefinition, benchRecord } from '../../test/helpers/benchRecord.ts';
import { clustered, mulberry32 } from '../../test/helpers/generators.ts';
import { benchArgs, currentSuite, numberOption } from './args.ts';
import { type Answer, groundTruth, K, measure, sideBySide, WARMUP } from './engineMeasure.ts';
import {
  DATA_FILES,
  type MemoryFigure,
  type MemoryShape,
  type MemorySystem,
  measureMemory,
  memoryChild,
  memoryLine,
} from './engineMemory.ts';
import { type CaseName, pct, type Row, rowTable } from './engineReport.ts';
import { loadAvg, log, progress, writeJson } from './output.ts';

// ---- arguments ----

const args = benchArgs({
  quick: { type: 'boolean', default: false },
  long: { type: 'boolean', default: false },
  n: { type: 'string' },
  dim: { type: 'string' },
  queries: { type: 'string' },
  out: { type: 'string' },
  'no-memory': { type: 'boolean', default: false },
  'memory-only': { type: 'boolean', default: false },
  /** Set in a memory child: the system it builds, and the folder holding the vectors (see the header). */
  'memory-child': { type: 'string' },
  data: { type: 'string' },
});
const QUICK = args.quick === true;
const LONG = args.long === true;
const N = numberOption(args.n, LONG ? 1_000_000 : QUICK ? 20000 : 100000, 'n');
const DIM = numberOption(args.dim, QUICK || LONG ? 128 : 384, 'dim');
const NQ = numberOption(args.queries, QUICK || LONG ? 200 : 500, 'queries');
const OUT = args.out;
const MEMORY_CHILD = args['memory-child'] as MemorySystem | undefined;
const MEMORY_DATA = args.data;
const MEMORY = args['no-memory'] !== true;
/** `--memory-only` (the memory suite): the memory children alone (no ground truth, no search), then exit. */
const MEMORY_ONLY = args['memory-only'] === true || currentSuite() === 'memory';
const EXACT_QUERIES = Math.min(NQ, QUICK ? 50 : 30);
const SELECTIVITIES = [0.5, 0.1, 0.01, 0.001];
const M = 16;
const EF_CONSTRUCTION = 64; // pgvector's default, as the engine uses for a definition without index params
const SHAPE: MemoryShape = { n: N, dim: DIM, m: M, efConstruction: EF_CONSTRUCTION };
/** Side-by-side rounds per unfiltered ef (each system keeps its best; the ratio is their median). */
const ROUNDS = QUICK ? 7 : 5;
/** The built-in filter crawls most of the graph on narrow or far sets: fewer queries there. */
const SLOW_QUERIES = 100;
/**
 * Seconds one filtered measurement may take (raw hnswlib-node's callback on a narrow set of 1M crawls
 * for seconds a query): past it, and after at least BUDGET_MIN_QUERIES, it stops and says so.
 */
const MEASURE_BUDGET_S = 15;
/** hnswlib ef of the store's default search at this size (ef_search 40, grown with the collection). */
const DEFAULT_EF = effectiveEf(benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION }), K, N);
/** Unfiltered widths; the default one is among them (the filtered rows are set against it). */
const EFS = [...new Set([40, 64, 100, 128, DEFAULT_EF])].sort((a, b) => a - b);
/** The graph engine arkivector's stores use here (native unless `ARKIVECTOR_ENGINE=hnswlib-node`). */
const ENGINE = selectedEngine();

// ---- helpers ----

/** ARCHITECTURE.md §10.1 `clustered`: a 64-d latent Gaussian mixture, 16 centres, projected linearly. */
function generate(n: number, dim: number, seed: number): { vectors: Float32Array[]; cluster: number[] } {
  return clustered(n, dim, seed, {
    latent: 64,
    onProgress: (done, total) => progress(`generate ${n} × ${dim}`, done, total),
  });
}

function toArray(v: Float32Array): number[] {
  const a = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) a[i] = v[i]!;
  return a;
}

/** One filter case: the `where` the store gets, the same test per base id, and the queries it runs. */
type FilterCase = {
  name: CaseName;
  where: string;
  allows: (i: number) => boolean;
  /** Indexes into the query set. */
  queryIds: number[];
  allowed: Int32Array;
  truth: Int32Array[];
  slow: boolean;
};

// ---- main ----

async function main(): Promise<void> {
  log(
    `arkivector bench (${ENGINE} engine): n=${N} dim=${DIM} queries=${NQ} (m=${M}, ef_construction=${EF_CONSTRUCTION}, k=${K}, default ef ${DEFAULT_EF}), load ${loadAvg().join(' ')}`,
  );
  const started = performance.now();
  const phase = (what: string): void =>
    log(`${what}: ${((performance.now() - started) / 1000).toFixed(0)} s in, load ${loadAvg().join(' ')}`);
  const rows: Row[] = [];
  const gen = generate(N, DIM, 1);
  const queryGen = generate(NQ, DIM, 2);
  const queries = queryGen.vectors;

  // The vectors both systems index (halfvec-rounded, as the indexer decodes them) in one slab, for
  // ground truth and the raw build. Records are made per block, as the indexer hands them over, and
  // dropped after apply: the store's RSS delta is then everything it keeps per vector.
  const rand = mulberry32(7);
  const bucket = new Int32Array(N);
  const cluster = Int32Array.from(gen.cluster);
  const slab = new Float32Array(N * DIM);
  const base: Float32Array[] = [];
  for (let i = 0; i < N; i++) {
    bucket[i] = Math.floor(rand() * 1000);
    const p = decodeVectorPayload(encodeVectorPayload({ vector: gen.vectors[i]!, document: '' }));
    slab.set(p.vector, i * DIM);
    base.push(slab.subarray(i * DIM, (i + 1) * DIM));
    progress('vectors', i + 1, N);
  }
  gen.vectors.length = 0;
  const chunks = Array.from({ length: Math.ceil(N / SLAB_CHUNK_SLOTS) }, (_, c) =>
    slab.subarray(c * SLAB_CHUNK_SLOTS * DIM, (c + 1) * SLAB_CHUNK_SLOTS * DIM),
  );
  const exactSrc: ExactSource = {
    chunks,
    invNorms: Float32Array.from(base, (v) => 1 / Math.hypot(...v)),
    slotCount: N,
  };
  const recordOf = (i: number): VectorRecord => benchRecord(i, base[i]!, { bucket: bucket[i]!, cluster: cluster[i]! });

  // Memory, each system built alone in a child process of its own over the same vectors.
  const memory: Partial<Record<MemorySystem, MemoryFigure>> = {};
  if (MEMORY) {
    const dir = mkdtempSync(join(tmpdir(), 'arkivector-bench-'));
    try {
      const bytesOf = (a: Float32Array | Int32Array): Uint8Array =>
        new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      writeFileSync(join(dir, DATA_FILES.vectors), bytesOf(slab));
      writeFileSync(join(dir, DATA_FILES.bucket), bytesOf(bucket));
      writeFileSync(join(dir, DATA_FILES.cluster), bytesOf(cluster));
      for (const system of ['hnswlib-node', 'arkivector'] as const) {
        const m = await measureMemory(system, dir, SHAPE);
        memory[system] = m;
        log(
          `memory (child process): ${system} ${Math.round(m.bytes)} B/vector (${Math.round(m.lessYoung)} B less V8's young generation; slope from n/2 to n ${Math.round(m.slope)} B), build ${m.buildS.toFixed(1)} s`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    phase('memory children');
  }
  const memoryOf = (system: MemorySystem): Partial<Row> =>
    memory[system] === undefined
      ? {}
      : {
          bytes_per_vector: memory[system].bytes,
          bytes_per_vector_less_young: memory[system].lessYoung,
          bytes_per_vector_slope: memory[system].slope,
        };
  if (MEMORY_ONLY) {
    console.log(memoryLine(memory, SHAPE));
    writeJson(
      OUT,
      (['hnswlib-node', 'arkivector'] as const).flatMap((system) => {
        const m = memory[system];
        if (m === undefined) return [];
        return [{ system, n: N, dim: DIM, build_s: m.buildS, ...memoryOf(system), load_avg: loadAvg() }];
      }),
    );
    return;
  }

  // Ground truth, unfiltered and per filter case.
  const truthAll = groundTruth(exactSrc, queries, undefined, 'ground truth (unfiltered)');
  const allQueries = queries.map((_, i) => i);
  const cases: FilterCase[] = [];
  const addCase = (name: CaseName, where: string, allows: (i: number) => boolean, queryIds: number[]): void => {
    const out: number[] = [];
    for (let i = 0; i < N; i++) if (allows(i)) out.push(i);
    const allowed = Int32Array.from(out);
    const qs = queryIds.map((q) => queries[q]!);
    const truth = groundTruth(exactSrc, qs, allowed, `ground truth ${name} ${pct(allowed.length / N)}`);
    cases.push({ name, where, allows, queryIds, allowed, truth, slow: name === 'far' || allowed.length / N < 0.05 });
  };
  for (const s of SELECTIVITIES) {
    const limit = Math.round(s * 1000);
    addCase('random', `bucket < ${limit}`, (i) => bucket[i]! < limit, allQueries);
  }
  // Clustered: whole clusters of the data (16 of them, ~6.25 % each), so most queries lie outside.
  addCase('clustered', 'cluster < 8', (i) => cluster[i]! < 8, allQueries);
  const near = (i: number): boolean => cluster[i]! < 2 && bucket[i]! < 800;
  addCase('clustered', 'cluster < 2 && bucket < 800', near, allQueries);
  const nearOne = (i: number): boolean => cluster[i]! < 2 && bucket[i]! < 80;
  addCase('clustered', 'cluster < 2 && bucket < 80', nearOne, allQueries);
  // Far: the ~10 % and ~1 % clustered sets, asked only from the other clusters.
  const farQueries = allQueries.filter((q) => queryGen.cluster[q]! >= 2);
  addCase('far', 'cluster < 2 && bucket < 800', near, farQueries);
  addCase('far', 'cluster < 2 && bucket < 80', nearOne, farQueries);
  const caseQueries = (c: FilterCase): Float32Array[] =>
    c.queryIds.slice(0, c.slow ? SLOW_QUERIES : c.queryIds.length).map((q) => queries[q]!);
  phase('data and ground truth');

  // ---- builds ----
  // Both in this process, queried side by side (memory comes from the children above).
  const rawIndex = new hnswlib.HierarchicalNSW('cosine', DIM);
  rawIndex.initIndex(N, M, EF_CONSTRUCTION, 100, true);
  let t0 = performance.now();
  for (let i = 0; i < N; i++) {
    rawIndex.addPoint(toArray(base[i]!), i);
    progress('hnswlib-node build', i + 1, N);
  }
  const rawBuildS = (performance.now() - t0) / 1000;
  log(`hnswlib-node build: ${rawBuildS.toFixed(1)} s, ${Math.round(N / rawBuildS)} pts/s`);

  const definition = benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION });
  const store = new CollectionStore('bench', definition);
  const BLOCK = 1000;
  let buildMs = 0;
  for (let i = 0; i < N; i += BLOCK) {
    const block: VectorRecord[] = [];
    for (let j = i; j < Math.min(N, i + BLOCK); j++) block.push(recordOf(j));
    t0 = performance.now();
    await store.apply({ remove: [], upsert: block });
    buildMs += performance.now() - t0;
    progress('arkivector build', Math.min(N, i + BLOCK), N);
  }
  const buildS = buildMs / 1000;
  log(`arkivector build: ${buildS.toFixed(1)} s, ${Math.round(N / buildS)} pts/s`);
  phase('builds');
  // ---- unfiltered, side by side ----
  const buf = new Array<number>(DIM);
  const knn = (q: Float32Array, filter?: (label: number) => boolean): number[] => {
    for (let d = 0; d < DIM; d++) buf[d] = q[d]!;
    return (filter === undefined ? rawIndex.searchKnn(buf, K) : rawIndex.searchKnn(buf, K, filter)).neighbors;
  };
  const unfiltered = new Map<string, number>();
  for (const ef of EFS) {
    const efSearch = ef / EF_SEARCH_SCALE;
    const modes: Record<string, number> = {};
    // Modes of the warm-up and the first pass over the queries, as a single measured pass would count.
    let toCount = Math.min(WARMUP, queries.length) + queries.length;
    const ark = (q: Float32Array): Answer => {
      const res = store.search({ vector: q, k: K, efSearch });
      if (toCount-- > 0) modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
      return res;
    };
    rawIndex.setEf(ef);
    const load_avg = loadAvg();
    const r = sideBySide(`side by side ef=${ef}`, queries, truthAll, (q) => knn(q), ark, ROUNDS);
    unfiltered.set(`hnswlib-node ${ef}`, r.a.qps);
    rows.push({
      system: 'hnswlib-node',
      n: N,
      dim: DIM,
      ef,
      selectivity: 1,
      recall_at_10: r.a.recall,
      qps: r.a.qps,
      queries: queries.length,
      build_s: rawBuildS,
      build_pts_per_s: N / rawBuildS,
      ...memoryOf('hnswlib-node'),
      load_avg,
    });
    unfiltered.set(`arkivector ${ef}`, r.b.qps);
    rows.push({
      system: 'arkivector',
      engine: ENGINE,
      n: N,
      dim: DIM,
      ef,
      ef_search: efSearch,
      selectivity: 1,
      recall_at_10: r.b.recall,
      qps: r.b.qps,
      queries: queries.length,
      vs_hnswlib: r.ratio,
      search_modes: modes,
      build_s: buildS,
      build_pts_per_s: N / buildS,
      ...memoryOf('arkivector'),
      load_avg,
    });
  }
  phase('unfiltered');

  // ---- filtered (default ef_search) ----
  /** The fields of a filtered measurement's row: how many queries it answered of those asked. */
  const answered = (count: number, asked: number): Partial<Row> => ({
    queries: count,
    ...(count < asked ? { queries_asked: asked } : {}),
    load_avg: loadAvg(),
  });
  for (const c of cases) {
    const qs = caseQueries(c);
    const truth = c.truth.slice(0, qs.length);
    const selectivity = c.allowed.length / N;
    const tag = `${c.name} ${pct(selectivity)}`;
    rawIndex.setEf(DEFAULT_EF);
    const allows = c.allows;
    const r = measure(`hnswlib-node filter ${tag}`, qs, truth, (q) => knn(q, allows), MEASURE_BUDGET_S);
    rows.push({
      system: 'hnswlib-node',
      n: N,
      dim: DIM,
      ef: DEFAULT_EF,
      selectivity,
      case: c.name,
      recall_at_10: r.recall,
      qps: r.qps,
      vs_unfiltered: r.qps / unfiltered.get(`hnswlib-node ${DEFAULT_EF}`)!,
      ...answered(r.count, qs.length),
    });
    // The same filter spelled with 0 … ENUMERATIONS_KEPT + 1 leading spaces: one compiled filter each.
    const spellings = Array.from({ length: ENUMERATIONS_KEPT + 2 }, (_, i) => ' '.repeat(i) + c.where);
    for (const memo of ['repeated', 'fresh'] as const) {
      const modes: Record<string, number> = {};
      let asked = 0;
      const a = measure(
        `arkivector filter ${tag} (${memo})`,
        qs,
        truth,
        (q) => {
          const where = memo === 'repeated' ? c.where : spellings[asked++ % spellings.length]!;
          const res = store.search({ vector: q, k: K, where });
          modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
          return res;
        },
        MEASURE_BUDGET_S,
      );
      rows.push({
        system: 'arkivector',
        engine: ENGINE,
        n: N,
        dim: DIM,
        ef: DEFAULT_EF,
        ef_search: 40,
        selectivity,
        case: c.name,
        filter_memo: memo,
        recall_at_10: a.recall,
        qps: a.qps,
        vs_unfiltered: a.qps / unfiltered.get(`arkivector ${DEFAULT_EF}`)!,
        search_modes: modes,
        ...answered(a.count, qs.length),
      });
    }
  }
  phase('filtered');

  // ---- exact ----
  {
    const src = exactSrc;
    const nq = EXACT_QUERIES;
    const r = measure(
      'exact',
      queries.slice(0, nq),
      truthAll,
      (q) => exactTopK(METRIC_OPS.cosine, q, src, undefined, K).slots,
    );
    rows.push({
      system: 'exact',
      n: N,
      dim: DIM,
      ef: null,
      selectivity: 1,
      recall_at_10: r.recall,
      qps: r.qps,
      queries: r.count,
      load_avg: loadAvg(),
    });
    for (const c of cases) {
      const qs = caseQueries(c).slice(0, nq);
      const allowed = c.allowed;
      const re = measure(
        `exact filter ${c.name} ${pct(allowed.length / N)}`,
        qs,
        c.truth,
        (q) => exactTopK(METRIC_OPS.cosine, q, src, allowed, K).slots,
      );
      rows.push({
        system: 'exact',
        n: N,
        dim: DIM,
        ef: null,
        selectivity: allowed.length / N,
        case: c.name,
        recall_at_10: re.recall,
        qps: re.qps,
        vs_unfiltered: re.qps / r.qps,
        queries: re.count,
        load_avg: loadAvg(),
      });
    }
  }
  phase('exact');

  // ---- report ----
  const lines = rowTable(rows, MEASURE_BUDGET_S);
  lines.push(
    `build: hnswlib-node ${Math.round(N / rawBuildS)} pts/s, arkivector ${Math.round(N / buildS)} pts/s (${(rawBuildS / buildS).toFixed(2)}×)`,
  );
  lines.push(memoryLine(memory, SHAPE));
  for (const ef of EFS) {
    const a = rows.find((r) => r.system === 'arkivector' && r.ef === ef && r.selectivity === 1)!;
    const h = rows.find((r) => r.system === 'hnswlib-node' && r.ef === ef && r.selectivity === 1)!;
    lines.push(
      `ef=${ef}${ef === DEFAULT_EF ? ' (default at this size)' : ''}: arkivector/hnswlib-node QPS ${a.vs_hnswlib!.toFixed(2)}× per CPU second (wall clock, best rounds: ${(a.qps / h.qps).toFixed(2)}×; recall ${a.recall_at_10.toFixed(3)} vs ${h.recall_at_10.toFixed(3)})`,
    );
  }
  lines.push(`took ${((performance.now() - started) / 1000).toFixed(0)} s, load at the end ${loadAvg().join(' ')}`);
  console.log(lines.join('\n'));
  writeJson(OUT, rows);
}

if (MEMORY_CHILD !== undefined) {
  if (MEMORY_CHILD !== 'hnswlib-node' && MEMORY_CHILD !== 'arkivector')
    throw new Error(`unknown system ${MEMORY_CHILD}`);
  if (MEMORY_DATA === undefined) throw new Error('--memory-child needs --data DIR');
  const answer = await memoryChild(MEMORY_CHILD, MEMORY_DATA, SHAPE);
  process.send?.(answer, () => process.exit(0));
} else {
  await main();
}
