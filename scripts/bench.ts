// `npm run bench`: recall@10 and QPS of raw hnswlib-node, of arkivector's CollectionStore at equal
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
// Usage: tsx scripts/bench.ts [--quick | --long] [--out FILE] [--n N] [--dim D] [--queries Q] [--no-memory | --memory-only]
//   default 100k × 384 (minutes); --quick 20k × 128 (seconds); --long 1M × 128 (recall at the default
//   width, which grows with the collection, and the filter cases through the planner, beside raw
//   hnswlib-node; estimated ~30 min on 2 idle cores with the memory children, ~20 without; 200k × 128 took
//   11 min under a load average of 9–12 without them).
// Memory per vector is measured in a child process per system (`--memory-child`): it reads the same
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

import { fork } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import { decodeVectorPayload, encodeVectorPayload, type VectorRecord } from '../src/collections/index.ts';
import { type ExactSource, exactTopK, SLAB_CHUNK_SLOTS } from '../src/engine/exact.ts';
import { selectedEngine } from '../src/engine/hnsw/engine.ts';
import { nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { CollectionStore, EF_SEARCH_SCALE, effectiveEf, METRIC_OPS } from '../src/engine/index.ts';
import { ENUMERATIONS_KEPT } from '../src/engine/plan/enumerations.ts';
import { clustered, mulberry32 } from './generators.ts';
import { benchDefinition, benchRecord } from './benchRecord.ts';

// ---- arguments ----

const argv = process.argv.slice(2);
const flag = (name: string): boolean => argv.includes(name);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const QUICK = flag('--quick');
const LONG = flag('--long');
const N = Number(option('--n') ?? (LONG ? 1_000_000 : QUICK ? 20000 : 100000));
const DIM = Number(option('--dim') ?? (QUICK || LONG ? 128 : 384));
const NQ = Number(option('--queries') ?? (QUICK || LONG ? 200 : 500));
const OUT = option('--out');
/** Set in a memory child: the system it builds and the folder holding the vectors (see the header). */
const MEMORY_CHILD = option('--memory-child') as MemorySystem | undefined;
const MEMORY_DATA = option('--data');
const MEMORY = !flag('--no-memory');
/** `--memory-only`: the memory children alone (no ground truth, no search), then exit. */
const MEMORY_ONLY = flag('--memory-only');
const EXACT_QUERIES = Math.min(NQ, QUICK ? 50 : 30);
const SELECTIVITIES = [0.5, 0.1, 0.01, 0.001];
const K = 10;
const M = 16;
const EF_CONSTRUCTION = 64; // pgvector's default, as the engine uses for a definition without index params
const WARMUP = 20;
/** Side-by-side rounds per unfiltered ef (each system keeps its best; the ratio is their median). */
const ROUNDS = QUICK ? 7 : 5;
/** Queries per chunk of a side-by-side round: short enough that a load spike hits both systems. */
const SIDE_BY_SIDE_CHUNK = 25;
/** The built-in filter crawls most of the graph on narrow or far sets: fewer queries there. */
const SLOW_QUERIES = 100;
/**
 * Seconds one filtered measurement may take (raw hnswlib-node's callback on a narrow set of 1M crawls
 * for seconds a query): past it, and after at least BUDGET_MIN_QUERIES, it stops and says so.
 */
const MEASURE_BUDGET_S = 15;
const BUDGET_MIN_QUERIES = 20;
/** hnswlib ef of the store's default search at this size (ef_search 40, grown with the collection). */
const DEFAULT_EF = effectiveEf(benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION }), K, N);
/** Unfiltered widths; the default one is among them (the filtered rows are set against it). */
const EFS = [...new Set([40, 64, 100, 128, DEFAULT_EF])].sort((a, b) => a - b);
/** The graph engine arkivector's stores use here (native unless `ARKIVECTOR_ENGINE=hnswlib-node`). */
const ENGINE = selectedEngine();

// ---- helpers ----

const tty = process.stderr.isTTY === true;
function progress(label: string, done: number, total: number): void {
  if (!tty) return;
  if (done % Math.max(1, Math.floor(total / 100)) !== 0 && done !== total) return;
  process.stderr.write(`\r${label}: ${done}/${total} (${Math.round((100 * done) / total)}%)   `);
  if (done === total) process.stderr.write('\n');
}
function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (() => void) | undefined;
/** RSS after full collections with pauses (V8 frees array buffers off the main thread after a collection). */
async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return process.memoryUsage().rss;
}
const loadAvg = (): number[] => loadavg().map((l) => Math.round(l * 100) / 100);

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

/** Exact top-10 ids over the allowed base vectors (the halfvec-rounded values both systems index). */
function groundTruth(
  src: ExactSource,
  queries: Float32Array[],
  allowed: Int32Array | undefined,
  label: string,
): Int32Array[] {
  const out: Int32Array[] = [];
  for (let i = 0; i < queries.length; i++) {
    out.push(Int32Array.from(exactTopK(METRIC_OPS.cosine, queries[i]!, src, allowed, K).slots));
    progress(label, i + 1, queries.length);
  }
  return out;
}

/**
 * What a timed search returns: raw labels, or the store's answer, whose ids are read only after the
 * clock stops (turning hits into numbers is the bench's bookkeeping, not part of a search).
 */
type Answer = ArrayLike<number> | ReturnType<CollectionStore['search']>;
const idsOf = (got: Answer): ArrayLike<number> =>
  'results' in got ? got.results.map((r) => Number(r.record.id)) : got;

function recallOf(answer: Answer, truth: Int32Array): number {
  const got = idsOf(answer);
  let hit = 0;
  for (let i = 0; i < got.length; i++) if (truth.includes(got[i]!)) hit++;
  return hit / truth.length;
}

type CaseName = 'random' | 'clustered' | 'far';

type Row = {
  system: 'arkivector' | 'hnswlib-node' | 'exact';
  /** arkivector rows: the store's graph engine (ARKIVECTOR_ENGINE). */
  engine?: string;
  n: number;
  dim: number;
  ef: number | null;
  selectivity: number;
  recall_at_10: number;
  qps: number;
  case?: CaseName;
  /**
   * Filtered arkivector rows: `repeated` asks the same `where` text every query (its enumeration is reused
   * within the block: README "Filters"); `fresh` spells it differently each query, more spellings than the
   * store keeps, so each query enumerates it again, as the first query of a filter after a block does.
   */
  filter_memo?: 'repeated' | 'fresh';
  /** Filtered rows: QPS ÷ the same system's unfiltered QPS at the same ef. */
  vs_unfiltered?: number;
  /** Unfiltered arkivector rows: queries per CPU second ÷ hnswlib-node's, median of side-by-side rounds. */
  vs_hnswlib?: number;
  ef_search?: number;
  search_modes?: Record<string, number>;
  build_s?: number;
  build_pts_per_s?: number;
  /** RSS growth per vector of a child process that built this system alone (see the header). */
  bytes_per_vector?: number;
  /** The same less the growth of V8's young generation in that child (see MemoryFigure). */
  bytes_per_vector_less_young?: number;
  /** That child's RSS growth less the young generation's from n/2 to n, per vector added (see MemoryFigure). */
  bytes_per_vector_slope?: number;
  /** Queries answered and timed (filtered rows: fewer than asked when MEASURE_BUDGET_S ran out). */
  queries?: number;
  queries_asked?: number;
  /** The machine's load average (1, 5, 15 min) when the row was measured. */
  load_avg?: number[];
};

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

/**
 * Runs `fn` over the queries (after a warm-up) and returns QPS and mean recall; with `budgetS`, stops
 * once that many seconds have gone by and BUDGET_MIN_QUERIES were answered (`count` says how many).
 */
function measure(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  fn: (q: Float32Array, i: number) => Answer,
  budgetS = Number.POSITIVE_INFINITY,
): { qps: number; recall: number; count: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) fn(queries[i]!, i);
  const got: Answer[] = [];
  const t0 = performance.now();
  for (let i = 0; i < queries.length; i++) {
    got.push(fn(queries[i]!, i));
    if (tty && i % 50 === 49) progress(label, i + 1, queries.length);
    if (i + 1 >= BUDGET_MIN_QUERIES && i + 1 < queries.length && performance.now() - t0 > budgetS * 1000) {
      log(`${label}: time budget (${budgetS} s) spent, ${i + 1} of ${queries.length} queries answered`);
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  progress(label, got.length, got.length);
  let r = 0;
  for (let i = 0; i < got.length; i++) r += recallOf(got[i]!, truth[i]!);
  return { qps: got.length / seconds, recall: r / got.length, count: got.length };
}

/** The systems whose memory a child process measures. */
type MemorySystem = 'hnswlib-node' | 'arkivector';
/**
 * A memory child's answer, per vector: RSS growth, and the same less the growth of V8's young generation
 * (sized by the allocation rate, not by the count: 0 to ~32 MB from run to run, which at 20k vectors is
 * hundreds of bytes each); the slope, RSS growth less the young generation's from the build's halfway
 * point to its end per vector added (what each further vector costs, without the costs paid once: the
 * first pages of the C heap, V8's code and maps, the store's fixed tables); the build's seconds in the child.
 */
type MemoryFigure = { bytes: number; lessYoung: number; slope: number; buildS: number };
/** Committed bytes of V8's young generation (the new space). */
const youngBytes = (): number =>
  getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.physical_space_size ?? 0;

/** Files a memory child reads: the halfvec-rounded vectors (row-major float32) and the two attributes. */
const DATA_FILES = { vectors: 'vectors.f32', bucket: 'bucket.i32', cluster: 'cluster.i32' } as const;

/** Reads a whole file into `into` without an intermediate buffer (no freed memory for a build to reuse). */
function readInto(path: string, into: Float32Array | Int32Array): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
  const fd = openSync(path, 'r');
  try {
    for (let off = 0; off < bytes.length; ) {
      const got = readSync(fd, bytes, off, Math.min(1 << 26, bytes.length - off), off);
      if (got <= 0) throw new Error(`${path}: ${off} of ${bytes.length} bytes`);
      off += got;
    }
  } finally {
    closeSync(fd);
  }
}

/** Gives the C heap's free pages back to the system; false when the native addon is not built. */
function trimCHeap(): boolean {
  try {
    nativeAddon().trimMalloc();
    return true;
  } catch {
    return false;
  }
}

/** In a memory child: builds one system over the data files and answers its RSS growth per vector. */
async function memoryChild(system: MemorySystem, dir: string): Promise<MemoryFigure> {
  const slab = new Float32Array(N * DIM);
  const bucket = new Int32Array(N);
  const cluster = new Int32Array(N);
  readInto(join(dir, DATA_FILES.vectors), slab);
  readInto(join(dir, DATA_FILES.bucket), bucket);
  readInto(join(dir, DATA_FILES.cluster), cluster);
  const vector = (i: number): Float32Array => slab.subarray(i * DIM, (i + 1) * DIM);
  // What module loading freed stays in the C heap's free lists, where a build would reuse it without RSS
  // growing (about 40 MB here): give it back first (glibc's malloc_trim, through the addon when built).
  const trimmed = trimCHeap();
  const before = await settledRss();
  const youngBefore = youngBytes();
  // The halfway point of the slope: its settling pauses are left out of the build's seconds.
  const half = N >> 1;
  let atHalf = { rss: before, young: youngBefore };
  let pausedMs = 0;
  const markHalf = async (): Promise<void> => {
    const t = performance.now();
    atHalf = { rss: await settledRss(), young: youngBytes() };
    pausedMs += performance.now() - t;
  };
  const t0 = performance.now();
  let built: unknown;
  if (system === 'hnswlib-node') {
    const index = new hnswlib.HierarchicalNSW('cosine', DIM);
    index.initIndex(N, M, EF_CONSTRUCTION, 100, true);
    const buf = new Array<number>(DIM);
    for (let i = 0; i < N; i++) {
      const v = vector(i);
      for (let d = 0; d < DIM; d++) buf[d] = v[d]!;
      index.addPoint(buf, i);
      progress(`memory: ${system} build`, i + 1, N);
      if (i + 1 === half) await markHalf();
    }
    built = index;
  } else {
    const store = new CollectionStore('bench', benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION }));
    // Blocks of at most 1,000 records, one of them ending at the halfway point.
    for (let i = 0; i < N; ) {
      const end = Math.min(i < half ? half : N, i + 1000);
      const block: VectorRecord[] = [];
      for (let j = i; j < end; j++) block.push(benchRecord(j, vector(j), { bucket: bucket[j]!, cluster: cluster[j]! }));
      await store.apply({ remove: [], upsert: block });
      progress(`memory: ${system} build`, end, N);
      if (end === half) await markHalf();
      i = end;
    }
    built = store;
  }
  const buildS = (performance.now() - t0 - pausedMs) / 1000;
  const after = await settledRss();
  const bytes = (after - before) / N;
  const young = youngBytes();
  const lessYoung = bytes - (young - youngBefore) / N;
  const slope = (after - atHalf.rss - (young - atHalf.young)) / Math.max(1, N - half);
  log(
    `memory child ${system}: RSS ${(before / 2 ** 20).toFixed(0)} MiB before the build${trimmed ? ' (C heap trimmed)' : ' (C heap not trimmed: no native addon)'}, ${(atHalf.rss / 2 ** 20).toFixed(0)} MiB at ${half} vectors, ${(after / 2 ** 20).toFixed(0)} MiB after, young generation ${((youngBytes() - youngBefore) / 2 ** 20).toFixed(1)} MiB more`,
  );
  // The inputs and the built system stay referenced past the reading: a slab V8 could collect once the
  // build is done would leave RSS with it (51 MB at 100k × 128), understating the system by that much.
  if (built === undefined || slab.length + bucket.length + cluster.length !== N * (DIM + 2))
    throw new Error('memory child: lost its inputs');
  return { bytes, lessYoung, slope, buildS };
}

/** Forks this script as a memory child for `system` and waits for its answer. */
function measureMemory(system: MemorySystem, dir: string): Promise<MemoryFigure> {
  return new Promise((resolve, reject) => {
    const args = ['--memory-child', system, '--data', dir, '--n', String(N), '--dim', String(DIM)];
    // A young generation of fixed size (1 MB semi-spaces): V8 otherwise sizes it by the allocation rate,
    // and its growth or shrinking (±20 MB) would land in the per-vector figure.
    const execArgv = [...process.execArgv, '--max-semi-space-size=1', '--min-semi-space-size=1'];
    const proc = fork(fileURLToPath(import.meta.url), args, {
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: MemoryFigure | undefined;
    proc.on('message', (m) => {
      answer = m as MemoryFigure;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (answer !== undefined) resolve(answer);
      else reject(new Error(`memory child ${system} exited with ${signal ?? `code ${code}`} before answering`));
    });
  });
}

/**
 * Two systems over the same queries, side by side (see the header): each system's best-round QPS and
 * mean recall, and the median over rounds of b's queries per CPU second ÷ a's.
 */
function sideBySide(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  a: (q: Float32Array, i: number) => Answer,
  b: (q: Float32Array, i: number) => Answer,
): { a: { qps: number; recall: number }; b: { qps: number; recall: number }; ratio: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) {
    a(queries[i]!, i);
    b(queries[i]!, i);
  }
  const gotA: Answer[] = [];
  const gotB: Answer[] = [];
  let bestA = 0;
  let bestB = 0;
  const ratios: number[] = [];
  const cpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (let round = 0; round < ROUNDS; round++) {
    let msA = 0;
    let msB = 0;
    let cpuA = 0;
    let cpuB = 0;
    for (let start = 0, chunk = 0; start < queries.length; start += SIDE_BY_SIDE_CHUNK, chunk++) {
      const end = Math.min(queries.length, start + SIDE_BY_SIDE_CHUNK);
      for (let turn = 0; turn < 2; turn++) {
        const first = (chunk + round + turn) % 2 === 0;
        const fn = first ? a : b;
        const got = first ? gotA : gotB;
        const t0 = performance.now();
        const c0 = cpuMs();
        for (let i = start; i < end; i++) {
          const ids = fn(queries[i]!, i);
          if (round === 0) got[i] = ids;
        }
        const cpu = cpuMs() - c0;
        const ms = performance.now() - t0;
        if (first) {
          msA += ms;
          cpuA += cpu;
        } else {
          msB += ms;
          cpuB += cpu;
        }
      }
    }
    bestA = Math.max(bestA, (1000 * queries.length) / msA);
    bestB = Math.max(bestB, (1000 * queries.length) / msB);
    ratios.push(cpuA / cpuB);
    progress(label, round + 1, ROUNDS);
  }
  ratios.sort((x, y) => x - y);
  const recall = (got: Answer[]): number =>
    got.reduce((sum, ids, i) => sum + recallOf(ids, truth[i]!), 0) / queries.length;
  return {
    a: { qps: bestA, recall: recall(gotA) },
    b: { qps: bestB, recall: recall(gotB) },
    ratio: ratios[ratios.length >> 1]!,
  };
}

const pct = (s: number): string => `${+(s * 100).toFixed(2)} %`;

/** The report's memory line, from the memory children's answers. */
function memoryLine(memory: Partial<Record<MemorySystem, MemoryFigure>>): string {
  const raw = memory['hnswlib-node'];
  const ours = memory.arkivector;
  if (raw === undefined || ours === undefined) return 'memory per vector: not measured (--no-memory)';
  return `memory per vector, each system built alone in a child process (RSS growth; less V8's young generation; slope from n/2 to n): hnswlib-node ${Math.round(raw.bytes)} B; ${Math.round(raw.lessYoung)} B; ${Math.round(raw.slope)} B (graph), arkivector ${Math.round(ours.bytes)} B; ${Math.round(ours.lessYoung)} B; ${Math.round(ours.slope)} B (graph, vectors, records and indexes; ${(ours.lessYoung / raw.lessYoung).toFixed(2)}×, slope ${(ours.slope / raw.slope).toFixed(2)}×), n=${N} dim=${DIM}`;
}

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
        const m = await measureMemory(system, dir);
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
  if (MEMORY_ONLY) {
    console.log(memoryLine(memory));
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
  const memoryOf = (system: MemorySystem): Partial<Row> =>
    memory[system] === undefined
      ? {}
      : {
          bytes_per_vector: memory[system].bytes,
          bytes_per_vector_less_young: memory[system].lessYoung,
          bytes_per_vector_slope: memory[system].slope,
        };

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
    const r = sideBySide(`side by side ef=${ef}`, queries, truthAll, (q) => knn(q), ark);
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
  const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 13)}${pad('case', 10)}${pad('selectivity', 13)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 9)}${pad('÷unfilt.', 10)}${pad('queries', 9)}modes`,
  ];
  for (const r of rows) {
    const answeredOf = r.queries_asked === undefined ? String(r.queries ?? '') : `${r.queries}/${r.queries_asked}`;
    lines.push(
      `${pad(r.system, 13)}${pad((r.case ?? '-') + (r.filter_memo === 'fresh' ? '*' : ''), 10)}${pad(r.selectivity === 1 ? '100 %' : pct(r.selectivity), 13)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(Math.round(r.qps).toString(), 9)}${pad(r.vs_unfiltered === undefined ? '' : `${r.vs_unfiltered.toFixed(2)}×`, 10)}${pad(answeredOf, 9)}${r.search_modes ? JSON.stringify(r.search_modes) : ''}`,
    );
  }
  lines.push('');
  if (rows.some((r) => r.queries_asked !== undefined))
    lines.push(
      `queries x/y: the measurement ran out of its ${MEASURE_BUDGET_S} s budget after x of the y queries asked`,
    );
  lines.push(
    "case*: arkivector's filter spelled afresh each query, so enumerated each query (filter_memo fresh); without *, the same text repeated",
  );
  lines.push(
    `build: hnswlib-node ${Math.round(N / rawBuildS)} pts/s, arkivector ${Math.round(N / buildS)} pts/s (${(rawBuildS / buildS).toFixed(2)}×)`,
  );
  lines.push(memoryLine(memory));
  for (const ef of EFS) {
    const a = rows.find((r) => r.system === 'arkivector' && r.ef === ef && r.selectivity === 1)!;
    const h = rows.find((r) => r.system === 'hnswlib-node' && r.ef === ef && r.selectivity === 1)!;
    lines.push(
      `ef=${ef}${ef === DEFAULT_EF ? ' (default at this size)' : ''}: arkivector/hnswlib-node QPS ${a.vs_hnswlib!.toFixed(2)}× per CPU second (wall clock, best rounds: ${(a.qps / h.qps).toFixed(2)}×; recall ${a.recall_at_10.toFixed(3)} vs ${h.recall_at_10.toFixed(3)})`,
    );
  }
  lines.push(`took ${((performance.now() - started) / 1000).toFixed(0)} s, load at the end ${loadAvg().join(' ')}`);
  console.log(lines.join('\n'));
  if (OUT !== undefined) {
    writeFileSync(OUT, `${JSON.stringify(rows, null, 2)}\n`);
    log(`wrote ${OUT}`);
  }
}

if (MEMORY_CHILD !== undefined) {
  if (MEMORY_CHILD !== 'hnswlib-node' && MEMORY_CHILD !== 'arkivector')
    throw new Error(`unknown system ${MEMORY_CHILD}`);
  if (MEMORY_DATA === undefined) throw new Error('--memory-child needs --data DIR');
  const answer = await memoryChild(MEMORY_CHILD, MEMORY_DATA);
  process.send?.(answer, () => process.exit(0));
} else {
  await main();
}
