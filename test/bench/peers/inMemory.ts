// The in-process systems of `npm run bench:peers`: arkivector's CollectionStore (driven as
// scripts/bench/engine.ts drives it, records handed over per block and dropped after apply), raw hnswlib-node
// at the same settings, and the engine's exact scan (exactScan.ts).

import hnswlib from 'hnswlib-node';
import type { CollectionDefinition, VectorRecord } from '../../../src/collections/index.ts';
import { CollectionStore, EF_SEARCH_SCALE, ENGINE_ENV, selectedEngine } from '../../../src/engine/index.ts';
import { benchRecord } from '../../helpers/benchRecord.ts';
import {
  type Dataset,
  EF_CONSTRUCTION,
  type Job,
  K,
  log,
  M,
  measure,
  measuredRow,
  progress,
  type Row,
  rss,
  sweep,
  sweepRows,
} from './common.ts';
import { ExactScan } from './exactScan.ts';
import { allowedIds, allowsId, casesFor, FRESH_FILTER, filteredOnce, filteredSweep, freshWhere } from './filters.ts';

/** hnswlib's random seed, as the engine's graph uses (HNSW_RANDOM_SEED). */
const HNSW_SEED = 100;
/** Records per `apply`, as the indexer hands a block over. */
const BLOCK = 1000;

export async function runExact(job: Job, data: Dataset): Promise<Row[]> {
  // RSS growth holds the scan's whole copy (binary16 elements, inverse norms, the few links it carries).
  const before = await rss();
  const scan = new ExactScan(data.base, job.n, job.dim, (d, t) => progress('exact scan index', d, t));
  const bytes = ((await rss()) - before) / job.n;
  const m = await measure('exact', data, job.dim, job.exactQueries, (q) => scan.topK(q, K));
  log(`  recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count} queries`);
  const filtered: Row[] = [];
  for (const c of casesFor(job, data)) {
    const allowed = Uint32Array.from(allowedIds(c, data));
    filtered.push(
      await filteredOnce('exact', job, data, c, (q) => scan.topK(q, K, allowed), {
        count: job.exactQueries,
      }),
    );
  }
  return [measuredRow('exact', job, m, { bytes_per_vector: bytes }), ...filtered];
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
  const rows = sweepRows('hnswlib-node', job, { seconds, bytesPerVector }, points);
  // Filtered: hnswlib's own filter callback, consulted per visited node during the traversal.
  for (const c of casesFor(job, data)) {
    const allows = allowsId(c, data);
    rows.push(
      ...(await filteredSweep('hnswlib-node', job, data, c, (ef) => {
        index.setEf(ef);
        return (q) => index.searchKnn(toArray(q), K, allows).neighbors;
      })),
    );
  }
  return rows;
}

/** arkivector's store; `job.system` arkivector-native runs its native graph engine (the parent sets ARKIVECTOR_ENGINE). */
export async function runArkivector(job: Job, data: Dataset): Promise<Row[]> {
  const { n, dim } = job;
  const system = job.system === 'arkivector-native' ? 'arkivector-native' : 'arkivector';
  const engine = selectedEngine();
  if ((engine === 'native') !== (system === 'arkivector-native'))
    throw new Error(`${system} runs with ${ENGINE_ENV}=${engine}: the labels would lie`);
  log(`  graph engine: ${engine}`);
  const filters = casesFor(job, data).length > 0;
  const definition: CollectionDefinition = {
    dim,
    metric: 'cosine',
    // With filter cases the records carry the two attributes they test (as scripts/bench/engine.ts does).
    attributes: filters ? { bucket: 'i32', cluster: 'i32' } : {},
    open: true,
    writers: [],
    index: { m: M, ef_construction: EF_CONSTRUCTION, ef_search: 40 },
  };
  const recordOf = (i: number): VectorRecord =>
    benchRecord(
      i,
      data.base.subarray(i * dim, (i + 1) * dim),
      filters ? { bucket: data.bucket![i]!, cluster: data.cluster![i]! } : {},
    );
  const before = await rss();
  const store = new CollectionStore('bench', definition);
  let ms = 0;
  for (let i = 0; i < n; i += BLOCK) {
    const block: VectorRecord[] = [];
    for (let j = i; j < Math.min(n, i + BLOCK); j++) block.push(recordOf(j));
    const t0 = performance.now();
    await store.apply({ remove: [], upsert: block });
    ms += performance.now() - t0;
    progress(`${system} build`, Math.min(n, i + BLOCK), n);
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
    return measure(`${system} ef=${ef}`, data, dim, job.queries, (q, first) => {
      const res = store.search({ vector: q, k: K, efSearch });
      if (first) modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
      return res.results.map((r) => Number(r.record.id));
    });
  });
  const rows = sweepRows(system, job, { seconds, bytesPerVector }, points, (ef) => ({
    engine,
    ef_search: ef / EF_SEARCH_SCALE,
    search_modes: modesAt.get(ef) ?? {},
  }));
  // Filtered: the store's planner (exact scan, graph with the filter in the traversal, or a widened
  // unfiltered search filtered afterwards) at the same ef_search mapping; then again with a filter text
  // of its own at every call (variant fresh-filter), which no memo kept per filter text can answer.
  let calls = 0;
  for (const c of casesFor(job, data)) {
    for (const fresh of [false, true]) {
      const modesOf = new Map<number, Record<string, number>>();
      const caseRows = await filteredSweep(
        system,
        job,
        data,
        c,
        (ef) => {
          const modes: Record<string, number> = {};
          modesOf.set(ef, modes);
          const efSearch = ef / EF_SEARCH_SCALE;
          return (q, first) => {
            const where = fresh ? freshWhere(c, calls++) : c.where;
            const res = store.search({ vector: q, k: K, where, efSearch });
            if (first) modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
            return res.results.map((r) => Number(r.record.id));
          };
        },
        fresh ? { variant: FRESH_FILTER } : {},
      );
      for (const r of caseRows) {
        r.engine = engine;
        r.ef_search = r.ef! / EF_SEARCH_SCALE;
        r.search_modes = modesOf.get(r.ef!) ?? {};
      }
      rows.push(...caseRows);
    }
  }
  return rows;
}
