// Unum USearch 2.26 (native HNSW, numkong SIMD kernels) through its Node binding: `cos` metric,
// connectivity 16 (level 0 gets 2 × 16, as hnswlib's M), expansion_add 64 (= ef_construction), f32 or
// f16 storage (`usearch-f16`: the vectors held as half floats, as arkivector holds them). Built on one
// thread (`add(…, threads = 1)`) and searched one query at a time on one thread, as every system here.
//
// The Node binding fixes expansion_search when the index is made and has no setter, so the sweep
// saves the built index once and loads it into a fresh Index per width (the saved file holds the
// graph; the search width is a runtime setting of the loaded copy).
// It has no filtered search either (the C++ core's predicate search is not bound): the filtered
// cases post-filter in the caller, asking for max(ef, k) neighbours and keeping the first k allowed.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { allowsId, casesFor, filteredSweep, firstAllowed } from './filters.ts';
import { requireFromFolder } from './install.ts';

type Matches = { keys: BigUint64Array; distances: Float32Array };
type UIndex = {
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  search(vector: Float32Array, k: number, threads: number): Matches;
  save(path: string): void;
  load(path: string): void;
  size(): number;
  capacity(): number;
};
type USearch = {
  Index: new (config: {
    dimensions: number;
    metric: string;
    quantization: string;
    connectivity: number;
    expansion_add: number;
    expansion_search: number;
    multi: boolean;
  }) => UIndex;
};

/** Vectors per `add` call, as the indexer hands a block over. */
const BLOCK = 1000;

export async function runUsearch(job: Job, data: Dataset, quantization: 'f32' | 'f16'): Promise<Row[]> {
  const system = quantization === 'f16' ? 'usearch-f16' : 'usearch';
  const { Index } = requireFromFolder<USearch>('usearch', 'usearch');
  const { n, dim } = job;
  const make = (ef: number): UIndex =>
    new Index({
      dimensions: dim,
      metric: 'cos',
      quantization,
      connectivity: M,
      expansion_add: EF_CONSTRUCTION,
      expansion_search: ef,
      multi: false,
    });
  const keys = BigUint64Array.from({ length: n }, (_, i) => BigInt(i));
  const before = await rss();
  let index: UIndex | undefined = make(EF_CONSTRUCTION);
  const t0 = performance.now();
  for (let i = 0; i < n; i += BLOCK) {
    const end = Math.min(n, i + BLOCK);
    index.add(keys.subarray(i, end), data.base.subarray(i * dim, end * dim), 1);
    progress(`${system} build`, end, n);
  }
  const seconds = (performance.now() - t0) / 1000;
  const bytesPerVector = ((await rss()) - before) / n;
  log(
    `  build ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s), ${Math.round(bytesPerVector)} B/vector, capacity ${index.capacity()}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'arkivector-usearch-'));
  const file = join(dir, 'index.usearch');
  try {
    index.save(file);
    index = undefined;
    const at = async (ef: number): Promise<UIndex> => {
      await rss(); // collect the previous copy (no longer referenced) before loading the next
      const idx = make(ef);
      idx.load(file);
      return idx;
    };
    const ids = (m: Matches): number[] => Array.from(m.keys, Number);
    const points = await sweep(async (ef) => {
      const idx = await at(ef);
      return measure(`${system} ef=${ef}`, data, dim, job.queries, (q) => ids(idx.search(q, K, 1)));
    });
    const rows = sweepRows(system, job, { seconds, bytesPerVector }, points);
    for (const c of casesFor(job, data)) {
      const allows = allowsId(c, data);
      rows.push(
        ...(await filteredSweep(
          system,
          job,
          data,
          c,
          async (ef) => {
            const idx = await at(ef); // loaded outside the timed loop
            const wanted = Math.max(ef, K);
            return (q) => firstAllowed(ids(idx.search(q, wanted, 1)), allows);
          },
          {
            variant: 'post-filter',
            note: 'no filtered search in the Node binding: max(ef, k) neighbours, first k allowed',
          },
        )),
      );
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
