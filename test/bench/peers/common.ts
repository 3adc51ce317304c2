// What every system of `npm run bench:peers` shares: the settings, the row shape, the dataset files the
// parent writes once and each child reads, memory and timing helpers.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SYSTEMS = [
  'exact',
  'hnswlib-node',
  'arkivector',
  // arkivector with its own native graph engine (ARKIVECTOR_ENGINE=native; README "Native engine").
  'arkivector-native',
  'pglite-pgvector',
  'pgvector',
  // Embedded peers (test/bench/peers/usearch.ts, lancedb.ts, libsql.ts, lightJs.ts), installed into
  // .bench-peers/ (test/bench/peers/install.ts), never into package.json.
  'usearch',
  'usearch-f16',
  'lancedb',
  'libsql',
  'orama',
  'vectra',
] as const;
export type SystemName = (typeof SYSTEMS)[number];

export const K = 10;
export const M = 16;
/** pgvector's default, as the engine uses for a definition without index params. */
export const EF_CONSTRUCTION = 64;
/**
 * The search widths swept (hnswlib's ef; pgvector's `hnsw.ef_search`, whose minimum useful value is
 * k). A system stops at the first width reaching {@link SWEEP_STOP_RECALL}, so every system brackets
 * recall 0.95 and 0.99 without paying for the slow end of the curve.
 */
export const EF_SWEEP = [10, 16, 24, 32, 40, 64, 100, 128, 200, 256, 400, 800] as const;
export const SWEEP_STOP_RECALL = 0.99;
export const WARMUP = 20;

export type Row = {
  system: SystemName;
  n: number;
  dim: number;
  ef: number | null;
  selectivity: number;
  recall_at_10: number;
  qps: number;
  /** Searches per CPU second of the child process (all threads; see Measured.cpuQps). */
  cpu_qps?: number;
  p50_ms: number;
  p99_ms: number;
  queries: number;
  /** Searches timed for qps/p50/p99: the queries, repeated until the point lasted MIN_MEASURE_S. */
  timed_searches: number;
  /**
   * Set when the point ran out of its time budget (POINT_BUDGET_S) before scoring every query asked:
   * the queries asked, of which `queries` (the first ones, in order) were scored and timed.
   */
  queries_asked?: number;
  /** The last point of a sweep that stopped before its widest width: why it stopped (see {@link sweepStop}). */
  sweep_stop?: string;
  build_s: number;
  build_pts_per_s: number | null;
  /** RSS growth of the process that holds the index, per vector (see the README's Benchmarks). */
  bytes_per_vector: number | null;
  /** arkivector: the `ef_search` that maps to this hnswlib ef. */
  ef_search?: number;
  search_modes?: Record<string, number>;
  /** pgvector: `pg_relation_size` of the HNSW index and of the table. */
  index_bytes?: number;
  heap_bytes?: number;
  /** pgvector: the binary COPY and VACUUM ANALYZE before the index build (not in build_s). */
  load_s?: number;
  /** Filtered rows: the filter case (test/bench/peers/filters.ts); absent on unfiltered rows. */
  case?: string;
  /** A system measured in more than one way (LanceDB's HNSW-SQ and flat search, libSQL's post- and prefilter). */
  variant?: string;
  /** The n-th time this system ran in one bench invocation (repeated rounds show drift). */
  run?: number;
  /** On-disk size of what the system wrote (LanceDB, libSQL), bytes. */
  disk_bytes?: number;
  /** Free text: how this row was measured when it departs from the common settings. */
  note?: string;
  /** arkivector rows: the store's graph engine (hnswlib-node or native). */
  engine?: string;
  /** The machine's load average (1, 5, 15 min) when this system's child started: read its QPS beside it. */
  load_avg?: number[];
};

/** What the parent hands a child: the sizes and the folder holding the dataset files. */
export type Job = {
  system: SystemName;
  n: number;
  dim: number;
  queries: number;
  exactQueries: number;
  data: string;
  /** Run the filter cases (test/bench/peers/filters.ts) after the unfiltered sweep. */
  filters?: boolean;
  /** The filter cases the parent draws truth for (names of test/bench/peers/filters.ts's FILTER_CASES). */
  cases?: string[];
  /** 1 for the first run of a system in this invocation, 2 for its repeat… */
  run?: number;
  /**
   * QPS per CPU second of the parent's exact scan while it drew the ground truth, per case (`unfiltered`
   * and each filter case's name): a sweep stops once a point is slower than this (see {@link sweepStop}).
   */
  exactQps?: Record<string, number>;
};

/** A child's answer to the parent. */
export type ChildResult = { rows: Row[] } | { skipped: string };

export type Dataset = {
  /** Base vectors, halfvec-rounded as the indexer decodes them, row-major n × dim. */
  base: Float32Array;
  /** Query vectors (float32, not members of the base set), row-major. */
  queries: Float32Array;
  /** Exact top-k base ids per query, row-major queries × k. */
  truth: Int32Array;
  /** Per base vector: the random bucket 0–999 (mulberry32(7), as scripts/bench/engine.ts) and its cluster. */
  bucket?: Int32Array;
  cluster?: Int32Array;
  /** Exact top-k among the allowed base ids, per filter case name (over the case's queries). */
  filteredTruth?: Record<string, Int32Array>;
  /** The query ids a case asks, for a case that asks only some (`far`); absent: every query. */
  caseQueries?: Record<string, Int32Array>;
};

const bytesOf = (a: Float32Array | Int32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

export function writeDataset(dir: string, d: Dataset): void {
  writeFileSync(join(dir, 'base.f32'), bytesOf(d.base));
  writeFileSync(join(dir, 'queries.f32'), bytesOf(d.queries));
  writeFileSync(join(dir, 'truth.i32'), bytesOf(d.truth));
  if (d.bucket !== undefined) writeFileSync(join(dir, 'bucket.i32'), bytesOf(d.bucket));
  if (d.cluster !== undefined) writeFileSync(join(dir, 'cluster.i32'), bytesOf(d.cluster));
  for (const [name, t] of Object.entries(d.filteredTruth ?? {}))
    writeFileSync(join(dir, `truth-${name}.i32`), bytesOf(t));
  for (const [name, ids] of Object.entries(d.caseQueries ?? {}))
    writeFileSync(join(dir, `queries-${name}.i32`), bytesOf(ids));
}

export function readDataset(job: Job): Dataset {
  const read = (name: string, bytes: number): ArrayBuffer => {
    const b = readFileSync(join(job.data, name));
    if (b.length !== bytes) throw new Error(`${name}: ${b.length} bytes, expected ${bytes}`);
    const out = new ArrayBuffer(bytes);
    new Uint8Array(out).set(b);
    return out;
  };
  const d: Dataset = {
    base: new Float32Array(read('base.f32', job.n * job.dim * 4)),
    queries: new Float32Array(read('queries.f32', job.queries * job.dim * 4)),
    truth: new Int32Array(read('truth.i32', job.queries * K * 4)),
  };
  if (existsSync(join(job.data, 'bucket.i32'))) {
    d.bucket = new Int32Array(read('bucket.i32', job.n * 4));
    d.cluster = new Int32Array(read('cluster.i32', job.n * 4));
    d.filteredTruth = {};
    d.caseQueries = {};
    const files = readdirSync(job.data);
    for (const f of files) {
      const m = /^queries-(.+)\.i32$/.exec(f);
      if (!m) continue;
      const b = readFileSync(join(job.data, f));
      const ids = new Int32Array(b.length >> 2);
      new Uint8Array(ids.buffer).set(b.subarray(0, ids.length * 4));
      if (ids.length * 4 !== b.length || ids.some((i) => i < 0 || i >= job.queries))
        throw new Error(`${f}: not a list of query ids below ${job.queries}`);
      d.caseQueries[m[1]!] = ids;
    }
    for (const f of files) {
      const m = /^truth-(.+)\.i32$/.exec(f);
      if (m) d.filteredTruth[m[1]!] = new Int32Array(read(f, (d.caseQueries[m[1]!]?.length ?? job.queries) * K * 4));
    }
  }
  return d;
}

export function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

const tty = process.stderr.isTTY === true;
export function progress(label: string, done: number, total: number): void {
  if (!tty) return;
  if (done % Math.max(1, Math.floor(total / 100)) !== 0 && done !== total) return;
  process.stderr.write(`\r${label}: ${done}/${total} (${Math.round((100 * done) / total)}%)   `);
  if (done === total) process.stderr.write('\n');
}

/** Pause between collections, so that memory V8 frees off the main thread (array buffers) is gone. */
const SETTLE_MS = 100;

/**
 * RSS after full collections (children run with --expose-gc) with short pauses between them: V8 frees
 * array buffers concurrently after a collection, so a reading taken at once still counts freed garbage.
 */
export async function rss(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }
  return process.memoryUsage().rss;
}

/** `count`: queries whose recall was scored; `timed`: searches timed (count × passes). */
export type Measured = {
  recall: number;
  qps: number;
  /** Searches per second of this process's CPU time (all its threads): what load from other processes does not change. */
  cpuQps: number;
  p50: number;
  p99: number;
  count: number;
  timed: number;
  /** The queries asked (more than `count` when the first pass ran out of POINT_BUDGET_S). */
  asked: number;
};

type Answer = ArrayLike<number>;

function summarise(
  got: Answer[],
  truth: Int32Array,
  latencies: Float64Array,
  seconds: number,
  cpuSeconds: number,
  asked: number,
): Measured {
  let hits = 0;
  for (let i = 0; i < got.length; i++) {
    const t = truth.subarray(i * K, (i + 1) * K);
    const g = got[i]!;
    for (let j = 0; j < g.length; j++) if (t.includes(g[j]!)) hits++;
  }
  const sorted = latencies.sort();
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return {
    recall: hits / (K * got.length),
    qps: latencies.length / seconds,
    cpuQps: latencies.length / cpuSeconds,
    p50: pct(0.5),
    p99: pct(0.99),
    count: got.length,
    timed: latencies.length,
    asked,
  };
}

/**
 * A point is timed over repeated passes of its queries until this much time has gone by, so fast systems
 * are not timed over a few milliseconds (the first pass gives the recall)…
 */
export const MIN_MEASURE_S = 1;
/** …and never more passes than this. */
export const MAX_PASSES = 50;
/**
 * Seconds the first (scored) pass of one point may take: a slow system (a filter callback crawling the
 * graph, a linear scan) stops scoring there once it has answered {@link BUDGET_MIN_QUERIES}, and its row
 * says how many of the queries asked it answered (`queries` of `queries_asked`; the log says so too).
 */
export const POINT_BUDGET_S = 4;
export const BUDGET_MIN_QUERIES = 50;

/**
 * Times `fn` over the first `count` queries (at most those the dataset has), one at a time, after a warm-up.
 * @param fn the search; `first` is true on the first timed pass only (for per-query tallies)
 * @returns mean recall@10 against the dataset's truth, QPS and p50/p99 latency (ms)
 */
export async function measure(
  label: string,
  data: Dataset,
  dim: number,
  count: number,
  fn: (q: Float32Array, first: boolean) => Answer | Promise<Answer>,
  truth: Int32Array = data.truth,
): Promise<Measured> {
  const q = (i: number): Float32Array => data.queries.subarray(i * dim, (i + 1) * dim);
  const asked = Math.min(count, data.queries.length / dim);
  count = asked;
  for (let i = 0; i < Math.min(WARMUP, count); i++) await fn(q(i), false);
  const got: Answer[] = [];
  const latencies: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let pass = 0; pass < MAX_PASSES && (pass === 0 || performance.now() - t0 < MIN_MEASURE_S * 1000); pass++) {
    for (let i = 0; i < count; i++) {
      const s = performance.now();
      const answer = await fn(q(i), pass === 0);
      latencies.push(performance.now() - s);
      if (pass === 0) {
        got.push(answer);
        progress(label, i + 1, count);
        if (i + 1 >= BUDGET_MIN_QUERIES && i + 1 < count && performance.now() - t0 > POINT_BUDGET_S * 1000) {
          count = i + 1;
          log(`  ${label}: time budget (${POINT_BUDGET_S} s) spent, scored ${count} of ${asked} queries`);
        }
      }
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return summarise(got, truth, Float64Array.from(latencies), seconds, (c.user + c.system) / 1e6, asked);
}

/** The exact scan's QPS per case in this child's job (set once by the child, read by {@link sweepStop}). */
let exactQps: Record<string, number> = {};
export function setExactQps(qps: Record<string, number> | undefined): void {
  exactQps = qps ?? {};
}

/**
 * Why a sweep stops after this point below {@link SWEEP_STOP_RECALL}, or undefined to go on to the next
 * width: the point answered fewer queries per CPU second than the exact scan of the same case (which
 * gives recall 1.0), so every wider, slower width loses to that scan. CPU time on both sides, so load
 * from other processes does not decide where a sweep ends.
 * @param caseName 'unfiltered' or the filter case's name
 */
export function sweepStop(m: Pick<Measured, 'recall' | 'cpuQps'>, caseName: string): string | undefined {
  if (m.recall >= SWEEP_STOP_RECALL) return undefined;
  const floor = exactQps[caseName];
  if (floor !== undefined && m.cpuQps < floor)
    return `slower than the exact scan (${m.cpuQps.toFixed(1)} < ${floor.toFixed(1)} QPS per CPU second) at recall ${m.recall.toFixed(3)}`;
  return undefined;
}

/** A swept point: its width, and on the last point of a sweep cut short, why (see {@link sweepStop}). */
export type SweptPoint = Measured & { ef: number; stop?: string };

/**
 * Runs `point(ef)` over {@link EF_SWEEP} in order and stops at the first width whose recall reaches
 * {@link SWEEP_STOP_RECALL}, or that is slower than the exact scan ({@link sweepStop}).
 * @param caseName the case the exact scan's QPS is read for: 'unfiltered', or a filter case's name
 * @param tag what the log line starts with (a filter case and variant)
 */
export async function sweep(
  point: (ef: number) => Promise<Measured>,
  efs: readonly number[] = EF_SWEEP,
  caseName = 'unfiltered',
  tag = '',
): Promise<SweptPoint[]> {
  const out: SweptPoint[] = [];
  for (const ef of efs) {
    const m = await point(ef);
    const budget = m.count < m.asked ? `, ${m.count} of ${m.asked} queries (time budget)` : '';
    log(
      `  ${tag}ef=${ef}: recall@10 ${m.recall.toFixed(3)}, ${Math.round(m.qps)} QPS (${Math.round(m.cpuQps)} per CPU s), p50 ${m.p50.toFixed(3)} ms${budget}`,
    );
    if (m.recall >= SWEEP_STOP_RECALL) {
      out.push({ ...m, ef });
      break;
    }
    const stop = sweepStop(m, caseName);
    out.push({ ...m, ef, ...(stop !== undefined && ef !== efs[efs.length - 1] ? { stop } : {}) });
    if (stop !== undefined) {
      log(`  ${tag}sweep stopped at ef=${ef}: ${stop}`);
      break;
    }
  }
  return out;
}

/**
 * One measured point as a row: the system's sizes and the point's recall, QPS and latencies; `fields`
 * sets the rest (ef, the build, the case…). Unset: ef null (a scan), selectivity 1, no build, no memory.
 */
export function measuredRow(system: SystemName, job: Job, m: Measured, fields: Partial<Row> = {}): Row {
  return {
    system,
    n: job.n,
    dim: job.dim,
    ef: null,
    selectivity: 1,
    recall_at_10: m.recall,
    qps: m.qps,
    cpu_qps: m.cpuQps,
    p50_ms: m.p50,
    p99_ms: m.p99,
    queries: m.count,
    timed_searches: m.timed,
    ...(m.count < m.asked ? { queries_asked: m.asked } : {}),
    build_s: 0,
    build_pts_per_s: null,
    bytes_per_vector: null,
    ...(job.run !== undefined && job.run > 1 ? { run: job.run } : {}),
    ...fields,
  };
}

/** The common fields of a system's rows, one per swept width. */
export function sweepRows(
  system: SystemName,
  job: Job,
  build: { seconds: number; bytesPerVector: number | null },
  points: SweptPoint[],
  extra: (ef: number) => Partial<Row> = () => ({}),
): Row[] {
  return points.map((p) =>
    measuredRow(system, job, p, {
      ef: p.ef,
      ...(p.stop !== undefined ? { sweep_stop: p.stop } : {}),
      build_s: build.seconds,
      build_pts_per_s: build.seconds > 0 ? job.n / build.seconds : null,
      bytes_per_vector: build.bytesPerVector,
      ...extra(p.ef),
    }),
  );
}

/** Bytes a folder holds on disk (`du -sb`), NaN when du fails: what LanceDB and libSQL wrote. */
export function duBytes(dir: string): number {
  try {
    return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8', timeout: 60_000 }).split('\t')[0]);
  } catch {
    return Number.NaN;
  }
}
