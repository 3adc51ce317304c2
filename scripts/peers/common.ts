// What every system of `npm run bench:peers` shares: the settings, the row shape, the dataset files the
// parent writes once and each child reads, memory and timing helpers.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SYSTEMS = ['exact', 'hnswlib-node', 'arkivector', 'pglite-pgvector', 'pgvector'] as const;
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
  p50_ms: number;
  p99_ms: number;
  queries: number;
  /** Searches timed for qps/p50/p99: the queries, repeated until the point lasted MIN_MEASURE_S. */
  timed_searches: number;
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
};

/** What the parent hands a child: the sizes and the folder holding the dataset files. */
export type Job = { system: SystemName; n: number; dim: number; queries: number; exactQueries: number; data: string };

/** A child's answer to the parent. */
export type ChildResult = { rows: Row[] } | { skipped: string };

export type Dataset = {
  /** Base vectors, halfvec-rounded as the indexer decodes them, row-major n × dim. */
  base: Float32Array;
  /** Query vectors (float32, not members of the base set), row-major. */
  queries: Float32Array;
  /** Exact top-k base ids per query, row-major queries × k. */
  truth: Int32Array;
};

export function writeDataset(dir: string, d: Dataset): void {
  writeFileSync(join(dir, 'base.f32'), new Uint8Array(d.base.buffer, d.base.byteOffset, d.base.byteLength));
  writeFileSync(join(dir, 'queries.f32'), new Uint8Array(d.queries.buffer, d.queries.byteOffset, d.queries.byteLength));
  writeFileSync(join(dir, 'truth.i32'), new Uint8Array(d.truth.buffer, d.truth.byteOffset, d.truth.byteLength));
}

export function readDataset(job: Job): Dataset {
  const read = (name: string, bytes: number): ArrayBuffer => {
    const b = readFileSync(join(job.data, name));
    if (b.length !== bytes) throw new Error(`${name}: ${b.length} bytes, expected ${bytes}`);
    const out = new ArrayBuffer(bytes);
    new Uint8Array(out).set(b);
    return out;
  };
  return {
    base: new Float32Array(read('base.f32', job.n * job.dim * 4)),
    queries: new Float32Array(read('queries.f32', job.queries * job.dim * 4)),
    truth: new Int32Array(read('truth.i32', job.queries * K * 4)),
  };
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
export type Measured = { recall: number; qps: number; p50: number; p99: number; count: number; timed: number };

type Answer = ArrayLike<number>;

function summarise(got: Answer[], truth: Int32Array, latencies: Float64Array, seconds: number): Measured {
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
    p50: pct(0.5),
    p99: pct(0.99),
    count: got.length,
    timed: latencies.length,
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
 * Times `fn` over the first `count` queries, one at a time, after a warm-up.
 * @param fn the search; `first` is true on the first timed pass only (for per-query tallies)
 * @returns mean recall@10 against the dataset's truth, QPS and p50/p99 latency (ms)
 */
export async function measure(
  label: string,
  data: Dataset,
  dim: number,
  count: number,
  fn: (q: Float32Array, first: boolean) => Answer | Promise<Answer>,
): Promise<Measured> {
  const q = (i: number): Float32Array => data.queries.subarray(i * dim, (i + 1) * dim);
  for (let i = 0; i < Math.min(WARMUP, count); i++) await fn(q(i), false);
  const got: Answer[] = [];
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let pass = 0; pass < MAX_PASSES && (pass === 0 || performance.now() - t0 < MIN_MEASURE_S * 1000); pass++) {
    for (let i = 0; i < count; i++) {
      const s = performance.now();
      const answer = await fn(q(i), pass === 0);
      latencies.push(performance.now() - s);
      if (pass === 0) {
        got.push(answer);
        progress(label, i + 1, count);
      }
    }
  }
  return summarise(got, data.truth, Float64Array.from(latencies), (performance.now() - t0) / 1000);
}

/**
 * Runs `point(ef)` over {@link EF_SWEEP} in order and stops at the first width whose recall reaches
 * {@link SWEEP_STOP_RECALL}.
 */
export async function sweep(point: (ef: number) => Promise<Measured>): Promise<Array<Measured & { ef: number }>> {
  const out: Array<Measured & { ef: number }> = [];
  for (const ef of EF_SWEEP) {
    const m = await point(ef);
    out.push({ ...m, ef });
    log(`  ef=${ef}: recall@10 ${m.recall.toFixed(3)}, ${Math.round(m.qps)} QPS, p50 ${m.p50.toFixed(3)} ms`);
    if (m.recall >= SWEEP_STOP_RECALL) break;
  }
  return out;
}

/** The common fields of a system's rows, one per swept width. */
export function sweepRows(
  system: SystemName,
  job: Job,
  build: { seconds: number; bytesPerVector: number | null },
  points: Array<Measured & { ef: number }>,
  extra: (ef: number) => Partial<Row> = () => ({}),
): Row[] {
  return points.map((p) => ({
    system,
    n: job.n,
    dim: job.dim,
    ef: p.ef,
    selectivity: 1,
    recall_at_10: p.recall,
    qps: p.qps,
    p50_ms: p.p50,
    p99_ms: p.p99,
    queries: p.count,
    timed_searches: p.timed,
    build_s: build.seconds,
    build_pts_per_s: build.seconds > 0 ? job.n / build.seconds : null,
    bytes_per_vector: build.bytesPerVector,
    ...extra(p.ef),
  }));
}
