// `npm run bench`: recall@10 and QPS of raw hnswlib-node, of arkivector's CollectionStore at equal
// settings, and of an exact scan, unfiltered and filtered (50 / 10 / 1 / 0.1 % random selectivity, plus
// an allowed set far from the query), with build rate and memory per vector (the store's whole RSS
// growth: records are made per block and dropped after apply, as the indexer does). Synthetic
// clustered data as in shared/reference/perf.md §1 (64-d latent Gaussian mixture, 16 centres, linear
// map to d, noise, L2-normalised; base seed 1, query seed 2).
//
// Usage: tsx scripts/bench.ts [--quick] [--out FILE] [--n N] [--dim D] [--queries Q]
//   default 100k × 384 (minutes); --quick 20k × 128 (under a minute).

import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import {
  type CollectionDefinition,
  decodeVectorPayload,
  encodeVectorPayload,
  type VectorRecord,
} from '../src/collections/index.ts';
import { type ExactSource, exactTopK, SLAB_CHUNK_SLOTS } from '../src/engine/exact.ts';
import { CollectionStore, EF_SEARCH_SCALE, METRIC_OPS } from '../src/engine/index.ts';
import { clustered, mulberry32 } from './generators.ts';

// ---- arguments ----

const argv = process.argv.slice(2);
const flag = (name: string): boolean => argv.includes(name);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const QUICK = flag('--quick');
const N = Number(option('--n') ?? (QUICK ? 20000 : 100000));
const DIM = Number(option('--dim') ?? (QUICK ? 128 : 384));
const NQ = Number(option('--queries') ?? (QUICK ? 200 : 500));
const OUT = option('--out');
const EXACT_QUERIES = Math.min(NQ, QUICK ? 50 : 30);
const EFS = [40, 64, 100, 128];
const SELECTIVITIES = [0.5, 0.1, 0.01, 0.001];
const K = 10;
const M = 16;
const EF_CONSTRUCTION = 64; // pgvector's default, as the engine uses for a definition without index params
const WARMUP = 20;

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

/** perf.md §1 `clustered`: a 64-d latent Gaussian mixture, 16 centres, projected linearly. */
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

function recallOf(got: ArrayLike<number>, truth: Int32Array): number {
  let hit = 0;
  for (let i = 0; i < got.length; i++) if (truth.includes(got[i]!)) hit++;
  return hit / truth.length;
}

type Row = {
  system: 'arkivector' | 'hnswlib-node' | 'exact';
  n: number;
  dim: number;
  ef: number | null;
  selectivity: number;
  recall_at_10: number;
  qps: number;
  case?: 'random' | 'far';
  ef_search?: number;
  search_modes?: Record<string, number>;
  build_s?: number;
  build_pts_per_s?: number;
  bytes_per_vector?: number;
};

/** Runs `fn` over the queries (after a warm-up) and returns QPS and mean recall. */
function measure(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  fn: (q: Float32Array, i: number) => ArrayLike<number>,
): { qps: number; recall: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) fn(queries[i]!, i);
  const got: ArrayLike<number>[] = [];
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

// ---- main ----

async function main(): Promise<void> {
  log(`arkivector bench: n=${N} dim=${DIM} queries=${NQ} (m=${M}, ef_construction=${EF_CONSTRUCTION}, k=${K})`);
  const rows: Row[] = [];
  const gen = generate(N, DIM, 1);
  const queries = generate(NQ, DIM, 2).vectors;

  // The vectors both systems index (halfvec-rounded, as the indexer decodes them) in one slab, for
  // ground truth and the raw build. Records are made per block, as the indexer hands them over, and
  // dropped after apply: the store's RSS delta is then everything it keeps per vector.
  const rand = mulberry32(7);
  const bucket = new Int32Array(N);
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
  const recordOf = (i: number): VectorRecord => {
    const p = decodeVectorPayload(encodeVectorPayload({ vector: base[i]!, document: '' }));
    return {
      key: `0x${i.toString(16).padStart(64, '0')}`,
      owner: '0x00000000000000000000000000000000000000aa',
      creator: undefined,
      collection: 'bench',
      id: String(i),
      expiresAt: 1n << 40n,
      dim: DIM,
      vector: p.vector,
      halfvec: p.halfvec,
      document: '',
      attributes: Object.assign(Object.create(null), { bucket: bucket[i]!, cluster: gen.cluster[i]! }),
    };
  };

  // Ground truth, unfiltered and per filter.
  const truthAll = groundTruth(exactSrc, queries, undefined, 'ground truth (unfiltered)');
  const allowedBy = (pred: (i: number) => boolean): Int32Array => {
    const out: number[] = [];
    for (let i = 0; i < N; i++) if (pred(i)) out.push(i);
    return Int32Array.from(out);
  };
  const filtered = SELECTIVITIES.map((s) => {
    const limit = Math.round(s * 1000);
    const allowed = allowedBy((i) => bucket[i]! < limit);
    return { s, limit, allowed, truth: groundTruth(exactSrc, queries, allowed, `ground truth ${s * 100} %`) };
  });
  // Far: allowed = cluster 0, queries from other clusters.
  const qCluster = generate(NQ, DIM, 2).cluster;
  const farQueries = queries.filter((_, i) => qCluster[i] !== 0);
  const farAllowed = allowedBy((i) => gen.cluster[i] === 0);
  const farTruth = groundTruth(exactSrc, farQueries, farAllowed, 'ground truth (far)');

  // ---- raw hnswlib-node ----
  // Kept alive to the end so the engine's graph cannot reuse its freed pages (RSS deltas stay honest).
  let keepAlive: unknown;
  {
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
    keepAlive = index;
    log(`hnswlib-node build: ${buildS.toFixed(1)} s, ${Math.round(N / buildS)} pts/s, ${Math.round(bytes)} B/vector`);
    const buf = new Array<number>(DIM);
    const knn = (q: Float32Array, filter?: (label: number) => boolean): number[] => {
      for (let d = 0; d < DIM; d++) buf[d] = q[d]!;
      return (filter === undefined ? index.searchKnn(buf, K) : index.searchKnn(buf, K, filter)).neighbors;
    };
    for (const ef of EFS) {
      index.setEf(ef);
      const r = measure(`hnswlib-node ef=${ef}`, queries, truthAll, (q) => knn(q));
      rows.push({
        system: 'hnswlib-node',
        n: N,
        dim: DIM,
        ef,
        selectivity: 1,
        recall_at_10: r.recall,
        qps: r.qps,
        build_s: buildS,
        build_pts_per_s: N / buildS,
        bytes_per_vector: bytes,
      });
    }
    const defaultEf = Math.round(40 * EF_SEARCH_SCALE);
    index.setEf(defaultEf);
    for (const f of filtered) {
      const nq = f.s >= 0.01 ? NQ : Math.min(NQ, 100); // the built-in filter walks most of the graph at 0.1 %
      const r = measure(`hnswlib-node filter ${f.s * 100} %`, queries.slice(0, nq), f.truth, (q) =>
        knn(q, (l) => bucket[l]! < f.limit),
      );
      rows.push({
        system: 'hnswlib-node',
        n: N,
        dim: DIM,
        ef: defaultEf,
        selectivity: f.s,
        case: 'random',
        recall_at_10: r.recall,
        qps: r.qps,
      });
    }
    const clusterOf = gen.cluster;
    const rf = measure('hnswlib-node filter far', farQueries.slice(0, 100), farTruth, (q) =>
      knn(q, (l) => clusterOf[l] === 0),
    );
    rows.push({
      system: 'hnswlib-node',
      n: N,
      dim: DIM,
      ef: defaultEf,
      selectivity: farAllowed.length / N,
      case: 'far',
      recall_at_10: rf.recall,
      qps: rf.qps,
    });
  }

  // ---- arkivector ----
  {
    const definition: CollectionDefinition = {
      dim: DIM,
      metric: 'cosine',
      attributes: { bucket: 'i32', cluster: 'i32' },
      open: true,
      writers: [],
      index: { m: M, ef_construction: EF_CONSTRUCTION, ef_search: 40 },
    };
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
    const idOf = (res: ReturnType<CollectionStore['search']>): number[] => res.results.map((r) => Number(r.record.id));
    for (const ef of EFS) {
      const efSearch = ef / EF_SEARCH_SCALE;
      const modes: Record<string, number> = {};
      const r = measure(`arkivector ef=${ef}`, queries, truthAll, (q) => {
        const res = store.search({ vector: q, k: K, efSearch });
        modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
        return idOf(res);
      });
      rows.push({
        system: 'arkivector',
        n: N,
        dim: DIM,
        ef,
        ef_search: efSearch,
        selectivity: 1,
        recall_at_10: r.recall,
        qps: r.qps,
        search_modes: modes,
        build_s: buildS,
        build_pts_per_s: N / buildS,
        bytes_per_vector: bytes,
      });
    }
    const defaultEf = Math.round(40 * EF_SEARCH_SCALE);
    for (const f of filtered) {
      const modes: Record<string, number> = {};
      const where = `bucket < ${f.limit}`;
      const r = measure(`arkivector filter ${f.s * 100} %`, queries, f.truth, (q) => {
        const res = store.search({ vector: q, k: K, where });
        modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
        return idOf(res);
      });
      rows.push({
        system: 'arkivector',
        n: N,
        dim: DIM,
        ef: defaultEf,
        ef_search: 40,
        selectivity: f.s,
        case: 'random',
        recall_at_10: r.recall,
        qps: r.qps,
        search_modes: modes,
      });
    }
    const modes: Record<string, number> = {};
    const rf = measure('arkivector filter far', farQueries.slice(0, 100), farTruth, (q) => {
      const res = store.search({ vector: q, k: K, filter: { eq: { cluster: 0 } } });
      modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
      return idOf(res);
    });
    rows.push({
      system: 'arkivector',
      n: N,
      dim: DIM,
      ef: defaultEf,
      ef_search: 40,
      selectivity: farAllowed.length / N,
      case: 'far',
      recall_at_10: rf.recall,
      qps: rf.qps,
      search_modes: modes,
    });
  }

  // ---- exact ----
  {
    const src = exactSrc;
    const r = measure(
      'exact',
      queries.slice(0, EXACT_QUERIES),
      truthAll,
      (q) => exactTopK(METRIC_OPS.cosine, q, src, undefined, K).slots,
    );
    rows.push({ system: 'exact', n: N, dim: DIM, ef: null, selectivity: 1, recall_at_10: r.recall, qps: r.qps });
    for (const f of filtered) {
      const rf2 = measure(
        `exact filter ${f.s * 100} %`,
        queries.slice(0, EXACT_QUERIES),
        f.truth,
        (q) => exactTopK(METRIC_OPS.cosine, q, src, f.allowed, K).slots,
      );
      rows.push({
        system: 'exact',
        n: N,
        dim: DIM,
        ef: null,
        selectivity: f.s,
        case: 'random',
        recall_at_10: rf2.recall,
        qps: rf2.qps,
      });
    }
  }

  void keepAlive;

  // ---- report ----
  const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 13)}${pad('case', 8)}${pad('selectivity', 13)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 10)}modes`,
  ];
  for (const r of rows) {
    lines.push(
      `${pad(r.system, 13)}${pad(r.case ?? '-', 8)}${pad(r.selectivity === 1 ? '100 %' : `${+(r.selectivity * 100).toFixed(2)} %`, 13)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(Math.round(r.qps).toString(), 10)}${r.search_modes ? JSON.stringify(r.search_modes) : ''}`,
    );
  }
  const raw = rows.find((r) => r.system === 'hnswlib-node' && r.build_s !== undefined)!;
  const ark = rows.find((r) => r.system === 'arkivector' && r.build_s !== undefined)!;
  lines.push('');
  lines.push(
    `build: hnswlib-node ${Math.round(raw.build_pts_per_s!)} pts/s, arkivector ${Math.round(ark.build_pts_per_s!)} pts/s (${(ark.build_pts_per_s! / raw.build_pts_per_s!).toFixed(2)}×)`,
  );
  lines.push(
    `memory per vector: hnswlib-node ${Math.round(raw.bytes_per_vector!)} B, arkivector ${Math.round(ark.bytes_per_vector!)} B (graph, vectors, records and indexes)`,
  );
  for (const ef of EFS) {
    const a = rows.find((r) => r.system === 'arkivector' && r.ef === ef && r.selectivity === 1)!;
    const h = rows.find((r) => r.system === 'hnswlib-node' && r.ef === ef && r.selectivity === 1)!;
    lines.push(
      `ef=${ef}: arkivector/hnswlib-node QPS ${(a.qps / h.qps).toFixed(2)}× (recall ${a.recall_at_10.toFixed(3)} vs ${h.recall_at_10.toFixed(3)})`,
    );
  }
  console.log(lines.join('\n'));
  if (OUT !== undefined) {
    writeFileSync(OUT, `${JSON.stringify(rows, null, 2)}\n`);
    log(`wrote ${OUT}`);
  }
}

await main();
