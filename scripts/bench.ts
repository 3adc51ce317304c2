// `npm run bench`: recall@10 and QPS of raw hnswlib-node, of arkivector's CollectionStore at equal
// settings, and of an exact scan, unfiltered and filtered, with build rate and memory per vector (the
// store's whole RSS growth: records are made per block and dropped after apply, as the indexer does).
// Filter cases: random allowed sets (50 / 10 / 1 / 0.1 %), clustered ones (the allowed records sit in
// a few of the data's clusters: ~50 % and ~10 %, queries from everywhere) and the far case (the ~10 %
// clustered set, queries from the other clusters only). Each filtered row carries its QPS as a
// ratio of the same system's unfiltered QPS at the same ef. Synthetic clustered data as in
// ARCHITECTURE.md §10.1 (64-d latent Gaussian mixture, 16 centres, linear map to d, noise,
// L2-normalised; base seed 1, query seed 2).
//
// Usage: tsx scripts/bench.ts [--quick | --long] [--out FILE] [--n N] [--dim D] [--queries Q]
//   default 100k × 384 (minutes); --quick 20k × 128 (seconds); --long 1M × 128, arkivector alone
//   (build time, RSS per vector, QPS and recall at scale; ~15–25 min on 2 cores).
// Unfiltered QPS of hnswlib-node and arkivector is measured side by side: each round runs the queries
// in chunks, alternating the two systems chunk by chunk (which goes first alternates too), so load
// from other processes hits both alike. A system's QPS is its best round (wall clock); the engine ÷
// raw ratio (`vs_hnswlib`) is the median over rounds of the two systems' query rates per second of
// this process's CPU time, which time spent waiting for a core (other processes) does not inflate.

import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import { decodeVectorPayload, encodeVectorPayload, type VectorRecord } from '../src/collections/index.ts';
import { type ExactSource, exactTopK, SLAB_CHUNK_SLOTS } from '../src/engine/exact.ts';
import { selectedEngine } from '../src/engine/hnsw/engine.ts';
import { CollectionStore, EF_SEARCH_SCALE, effectiveEf, METRIC_OPS } from '../src/engine/index.ts';
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
function rss(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}

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
  /** Filtered rows: QPS ÷ the same system's unfiltered QPS at the same ef. */
  vs_unfiltered?: number;
  /** Unfiltered arkivector rows: queries per CPU second ÷ hnswlib-node's, median of side-by-side rounds. */
  vs_hnswlib?: number;
  ef_search?: number;
  search_modes?: Record<string, number>;
  build_s?: number;
  build_pts_per_s?: number;
  bytes_per_vector?: number;
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

/** Runs `fn` over the queries (after a warm-up) and returns QPS and mean recall. */
function measure(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  fn: (q: Float32Array, i: number) => Answer,
): { qps: number; recall: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) fn(queries[i]!, i);
  const got: Answer[] = [];
  const t0 = performance.now();
  for (let i = 0; i < queries.length; i++) {
    got.push(fn(queries[i]!, i));
    if (tty && i % 50 === 49) progress(label, i + 1, queries.length);
  }
  const seconds = (performance.now() - t0) / 1000;
  progress(label, queries.length, queries.length);
  let r = 0;
  for (let i = 0; i < queries.length; i++) r += recallOf(got[i]!, truth[i]!);
  return { qps: queries.length / seconds, recall: r / queries.length };
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

// ---- main ----

async function main(): Promise<void> {
  log(
    `arkivector bench (${ENGINE} engine): n=${N} dim=${DIM} queries=${NQ} (m=${M}, ef_construction=${EF_CONSTRUCTION}, k=${K})${LONG ? ' long mode: arkivector only' : ''}`,
  );
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
  // Far: the ~10 % clustered set, asked only from the other clusters.
  addCase(
    'far',
    'cluster < 2 && bucket < 800',
    near,
    allQueries.filter((q) => queryGen.cluster[q]! >= 2),
  );
  const caseQueries = (c: FilterCase): Float32Array[] =>
    c.queryIds.slice(0, c.slow ? SLOW_QUERIES : c.queryIds.length).map((q) => queries[q]!);

  // ---- builds ----
  // The raw index is kept alive to the end so the engine's graph cannot reuse its freed pages (RSS
  // deltas stay honest), and so the two are queried side by side.
  let raw: { index: InstanceType<typeof hnswlib.HierarchicalNSW>; buildS: number; bytes: number } | undefined;
  if (!LONG) {
    const memBefore = rss();
    const index = new hnswlib.HierarchicalNSW('cosine', DIM);
    index.initIndex(N, M, EF_CONSTRUCTION, 100, true);
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      index.addPoint(toArray(base[i]!), i);
      progress('hnswlib-node build', i + 1, N);
    }
    const buildS = (performance.now() - t0) / 1000;
    const bytes = (rss() - memBefore) / N;
    raw = { index, buildS, bytes };
    log(`hnswlib-node build: ${buildS.toFixed(1)} s, ${Math.round(N / buildS)} pts/s, ${Math.round(bytes)} B/vector`);
  }

  const definition = benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION });
  const memBefore = rss();
  const store = new CollectionStore('bench', definition);
  const BLOCK = 1000;
  let buildMs = 0;
  for (let i = 0; i < N; i += BLOCK) {
    const block: VectorRecord[] = [];
    for (let j = i; j < Math.min(N, i + BLOCK); j++) block.push(recordOf(j));
    const t0 = performance.now();
    await store.apply({ remove: [], upsert: block });
    buildMs += performance.now() - t0;
    progress('arkivector build', Math.min(N, i + BLOCK), N);
  }
  const buildS = buildMs / 1000;
  // Records were made per block and not kept here, so this is all the store retains.
  const bytes = (rss() - memBefore) / N;
  log(`arkivector build: ${buildS.toFixed(1)} s, ${Math.round(N / buildS)} pts/s, ${Math.round(bytes)} B/vector`);

  // ---- unfiltered, side by side ----
  const buf = new Array<number>(DIM);
  const knn = (q: Float32Array, filter?: (label: number) => boolean): number[] => {
    const index = raw!.index;
    for (let d = 0; d < DIM; d++) buf[d] = q[d]!;
    return (filter === undefined ? index.searchKnn(buf, K) : index.searchKnn(buf, K, filter)).neighbors;
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
    let best = { qps: 0, recall: 0 };
    let bestRaw = { qps: 0, recall: 0 };
    let ratio: number | undefined;
    if (raw !== undefined) {
      raw.index.setEf(ef);
      const r = sideBySide(`side by side ef=${ef}`, queries, truthAll, (q) => knn(q), ark);
      bestRaw = r.a;
      best = r.b;
      ratio = r.ratio;
    } else {
      for (let round = 0; round < ROUNDS; round++) {
        const a = measure(`arkivector ef=${ef}`, queries, truthAll, ark);
        if (a.qps > best.qps) best = a;
      }
    }
    if (raw !== undefined) {
      unfiltered.set(`hnswlib-node ${ef}`, bestRaw.qps);
      rows.push({
        system: 'hnswlib-node',
        n: N,
        dim: DIM,
        ef,
        selectivity: 1,
        recall_at_10: bestRaw.recall,
        qps: bestRaw.qps,
        build_s: raw.buildS,
        build_pts_per_s: N / raw.buildS,
        bytes_per_vector: raw.bytes,
      });
    }
    unfiltered.set(`arkivector ${ef}`, best.qps);
    rows.push({
      system: 'arkivector',
      engine: ENGINE,
      n: N,
      dim: DIM,
      ef,
      ef_search: efSearch,
      selectivity: 1,
      recall_at_10: best.recall,
      qps: best.qps,
      ...(ratio !== undefined ? { vs_hnswlib: ratio } : {}),
      search_modes: modes,
      build_s: buildS,
      build_pts_per_s: N / buildS,
      bytes_per_vector: bytes,
    });
  }

  // ---- filtered (default ef_search) ----
  for (const c of cases) {
    const qs = caseQueries(c);
    const truth = c.truth.slice(0, qs.length);
    const selectivity = c.allowed.length / N;
    const tag = `${c.name} ${pct(selectivity)}`;
    if (raw !== undefined) {
      raw.index.setEf(DEFAULT_EF);
      const allows = c.allows;
      const r = measure(`hnswlib-node filter ${tag}`, qs, truth, (q) => knn(q, allows));
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
      });
    }
    const modes: Record<string, number> = {};
    const where = c.where;
    const a = measure(`arkivector filter ${tag}`, qs, truth, (q) => {
      const res = store.search({ vector: q, k: K, where });
      modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
      return res;
    });
    rows.push({
      system: 'arkivector',
      engine: ENGINE,
      n: N,
      dim: DIM,
      ef: DEFAULT_EF,
      ef_search: 40,
      selectivity,
      case: c.name,
      recall_at_10: a.recall,
      qps: a.qps,
      vs_unfiltered: a.qps / unfiltered.get(`arkivector ${DEFAULT_EF}`)!,
      search_modes: modes,
    });
  }

  // ---- exact ----
  if (!LONG) {
    const src = exactSrc;
    const nq = EXACT_QUERIES;
    const r = measure(
      'exact',
      queries.slice(0, nq),
      truthAll,
      (q) => exactTopK(METRIC_OPS.cosine, q, src, undefined, K).slots,
    );
    rows.push({ system: 'exact', n: N, dim: DIM, ef: null, selectivity: 1, recall_at_10: r.recall, qps: r.qps });
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
      });
    }
  }

  // ---- report ----
  const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 13)}${pad('case', 10)}${pad('selectivity', 13)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 9)}${pad('÷unfilt.', 10)}modes`,
  ];
  for (const r of rows) {
    lines.push(
      `${pad(r.system, 13)}${pad(r.case ?? '-', 10)}${pad(r.selectivity === 1 ? '100 %' : pct(r.selectivity), 13)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(Math.round(r.qps).toString(), 9)}${pad(r.vs_unfiltered === undefined ? '' : `${r.vs_unfiltered.toFixed(2)}×`, 10)}${r.search_modes ? JSON.stringify(r.search_modes) : ''}`,
    );
  }
  const ark = rows.find((r) => r.system === 'arkivector' && r.build_s !== undefined)!;
  lines.push('');
  if (raw !== undefined) {
    lines.push(
      `build: hnswlib-node ${Math.round(N / raw.buildS)} pts/s, arkivector ${Math.round(ark.build_pts_per_s!)} pts/s (${(ark.build_pts_per_s! / (N / raw.buildS)).toFixed(2)}×)`,
    );
    lines.push(
      `memory per vector: hnswlib-node ${Math.round(raw.bytes)} B, arkivector ${Math.round(ark.bytes_per_vector!)} B (graph, vectors, records and indexes)`,
    );
    for (const ef of EFS) {
      const a = rows.find((r) => r.system === 'arkivector' && r.ef === ef && r.selectivity === 1)!;
      const h = rows.find((r) => r.system === 'hnswlib-node' && r.ef === ef && r.selectivity === 1)!;
      lines.push(
        `ef=${ef}: arkivector/hnswlib-node QPS ${a.vs_hnswlib!.toFixed(2)}× per CPU second (wall clock, best rounds: ${(a.qps / h.qps).toFixed(2)}×; recall ${a.recall_at_10.toFixed(3)} vs ${h.recall_at_10.toFixed(3)})`,
      );
    }
  } else {
    lines.push(
      `build: arkivector ${buildS.toFixed(1)} s, ${Math.round(ark.build_pts_per_s!)} pts/s; RSS ${Math.round(bytes)} B per vector`,
    );
  }
  console.log(lines.join('\n'));
  if (OUT !== undefined) {
    writeFileSync(OUT, `${JSON.stringify(rows, null, 2)}\n`);
    log(`wrote ${OUT}`);
  }
}

await main();
