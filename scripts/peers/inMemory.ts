// The in-process systems of `npm run bench:peers`: arkivector's CollectionStore (driven as
// scripts/bench.ts drives it, records handed over per block and dropped after apply), raw hnswlib-node
// at the same settings, and the engine's exact scan.

import hnswlib from 'hnswlib-node';
import type { CollectionDefinition, VectorRecord } from '../../src/collections/index.ts';
import { type ExactSource, exactTopK, SLAB_CHUNK_SLOTS } from '../../src/engine/exact.ts';
import { CollectionStore, EF_SEARCH_SCALE, METRIC_OPS } from '../../src/engine/index.ts';
import { benchRecord } from '../benchRecord.ts';
import {
  type Dataset,
  EF_CONSTRUCTION,
  type Job,
  K,
  log,
  M,
  measure,
  progress,
  type Row,
  rss,
  sweep,
  sweepRows,
} from './common.ts';

/** hnswlib's random seed, as the engine's graph uses (HNSW_RANDOM_SEED). */
const HNSW_SEED = 100;
/** Records per `apply`, as the indexer hands a block over. */
const BLOCK = 1000;

/** An exact-search view of a row-major slab (the engine's chunked layout). */
export function exactSource(base: Float32Array, n: number, dim: number): ExactSource {
  const chunks = Array.from({ length: Math.ceil(n / SLAB_CHUNK_SLOTS) }, (_, c) =>
    base.subarray(c * SLAB_CHUNK_SLOTS * dim, (c + 1) * SLAB_CHUNK_SLOTS * dim),
  );
  const invNorms = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let d = i * dim; d < (i + 1) * dim; d++) s += base[d]! * base[d]!;
    invNorms[i] = 1 / Math.sqrt(s);
  }
  return { chunks, invNorms, slotCount: n };
}

export async function runExact(job: Job, data: Dataset): Promise<Row[]> {
  // The slab is the dataset itself; what exact search adds is the chunk views and inverse norms, so the
  // vectors' own float32 bytes are counted explicitly.
  const before = await rss();
  const src = exactSource(data.base, job.n, job.dim);
  const bytes = ((await rss()) - before) / job.n + 4 * job.dim;
  const m = await measure(
    'exact',
    data,
    job.dim,
    job.exactQueries,
    (q) => exactTopK(METRIC_OPS.cosine, q, src, undefined, K).slots,
  );
  log(`  recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count} queries`);
  return [
    {
      system: 'exact',
      n: job.n,
      dim: job.dim,
      ef: null,
      selectivity: 1,
      recall_at_10: m.recall,
      qps: m.qps,
      p50_ms: m.p50,
      p99_ms: m.p99,
      queries: m.count,
      timed_searches: m.timed,
      build_s: 0,
      build_pts_per_s: null,
      bytes_per_vector: bytes,
    },
  ];
}

export async function runHnswlib(job: Job, data: Dataset): Promise<Row[]> {
  const { n, dim } = job;
  const before = await rss();
  const index = new hnswlib.HierarchicalNSW('cosine', dim);
  index.initIndex(n, M, EF_CONSTRUCTION, HNSW_SEED, true);
  const buf = new Array<number>(dim);
  // hnswlib-node takes number[] only; an indexed copy is its cheapest conversion (ARCHITECTURE.md §10.3).
  const toArray = (v: Float32Array): number[] => {
    for (let d = 0; d < dim; d++) buf[d] = v[d]!;
    return buf;
  };
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    index.addPoint(toArray(data.base.subarray(i * dim, (i + 1) * dim)), i);
    progress('hnswlib-node build', i + 1, n);
  }
  const seconds = (performance.now() - t0) / 1000;
  const bytesPerVector = ((await rss()) - before) / n;
  log(`  build ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s), ${Math.round(bytesPerVector)} B/vector`);
  const points = await sweep((ef) => {
    index.setEf(ef);
    return measure(`hnswlib-node ef=${ef}`, data, dim, job.queries, (q) => index.searchKnn(toArray(q), K).neighbors);
  });
  return sweepRows('hnswlib-node', job, { seconds, bytesPerVector }, points);
}

export async function runArkivector(job: Job, data: Dataset): Promise<Row[]> {
  const { n, dim } = job;
  const definition: CollectionDefinition = {
    dim,
    metric: 'cosine',
    attributes: {},
    open: true,
    writers: [],
    index: { m: M, ef_construction: EF_CONSTRUCTION, ef_search: 40 },
  };
  const recordOf = (i: number): VectorRecord => benchRecord(i, data.base.subarray(i * dim, (i + 1) * dim));
  const before = await rss();
  const store = new CollectionStore('bench', definition);
  let ms = 0;
  for (let i = 0; i < n; i += BLOCK) {
    const block: VectorRecord[] = [];
    for (let j = i; j < Math.min(n, i + BLOCK); j++) block.push(recordOf(j));
    const t0 = performance.now();
    await store.apply({ remove: [], upsert: block });
    ms += performance.now() - t0;
    progress('arkivector build', Math.min(n, i + BLOCK), n);
  }
  const seconds = ms / 1000;
  // Records were made per block and not kept here, so this is what the store retains.
  const bytesPerVector = ((await rss()) - before) / n;
  log(`  build ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s), ${Math.round(bytesPerVector)} B/vector`);
  const modesAt = new Map<number, Record<string, number>>();
  const points = await sweep((ef) => {
    const modes: Record<string, number> = {};
    modesAt.set(ef, modes);
    const efSearch = ef / EF_SEARCH_SCALE;
    return measure(`arkivector ef=${ef}`, data, dim, job.queries, (q, first) => {
      const res = store.search({ vector: q, k: K, efSearch });
      if (first) modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
      return res.results.map((r) => Number(r.record.id));
    });
  });
  return sweepRows('arkivector', job, { seconds, bytesPerVector }, points, (ef) => ({
    ef_search: ef / EF_SEARCH_SCALE,
    search_modes: modesAt.get(ef) ?? {},
  }));
}
