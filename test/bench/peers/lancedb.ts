// LanceDB 0.31 embedded (Rust core through napi-rs; a Lance table in a temp folder on local disk):
// one table (id int32, vector fixed_size_list<float32>[dim], bucket int32, cluster int32) written in
// one Arrow batch, then an IVF_HNSW_SQ index (LanceDB's HNSW: one IVF partition, as its docs advise
// for tables this size, HNSW m 16, ef_construction 64, 8-bit scalar-quantised vectors in the graph,
// cosine), and BTREE scalar indexes on bucket and cluster for the prefilter.
// Variants: `hnsw-sq` sweeps `ef` (nprobes 1); `hnsw-sq-refine4` the same with refineFactor(4) (re-rank
// 40 candidates on the float32 vectors); `flat` is `bypassVectorIndex()` (exact scan over the
// float32 column). Filtered cases use `where(sql)`, LanceDB's default prefilter (the filter is evaluated
// first and the ANN search is restricted to the rows that pass).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Dataset,
  duBytes,
  EF_CONSTRUCTION,
  EF_SWEEP,
  type Job,
  K,
  log,
  M,
  measure,
  measuredRow,
  type Row,
  rss,
  sweep,
  sweepRows,
} from './common.ts';
import { casesFor, filteredOnce, filteredSweep } from './filters.ts';
import { requireFromFolder } from './install.ts';

type ArrowTable = { getChild(name: string): { toArray(): ArrayLike<number> } | null };
type VectorQuery = {
  distanceType(d: string): VectorQuery;
  select(cols: string[]): VectorQuery;
  limit(k: number): VectorQuery;
  ef(ef: number): VectorQuery;
  nprobes(n: number): VectorQuery;
  where(sql: string): VectorQuery;
  bypassVectorIndex(): VectorQuery;
  refineFactor(r: number): VectorQuery;
  toArrow(): Promise<ArrowTable>;
};
type LTable = {
  createIndex(column: string, options?: { config?: unknown }): Promise<void>;
  countRows(): Promise<number>;
  vectorSearch(v: Float32Array): VectorQuery;
  listIndices(): Promise<unknown[]>;
  close(): void;
};
type LanceDb = {
  connect(uri: string): Promise<{ createTable(name: string, data: unknown): Promise<LTable>; close(): void }>;
  Index: { hnswSq(o: Record<string, unknown>): unknown; btree(): unknown };
};
type Arrow = {
  makeData(o: Record<string, unknown>): unknown;
  makeVector(d: unknown): unknown;
  Float32: new () => unknown;
  FixedSizeList: new (n: number, f: unknown) => unknown;
  Field: new (name: string, t: unknown, nullable: boolean) => unknown;
  Table: new (cols: Record<string, unknown>) => unknown;
};

/**
 * The refine variant re-ranks limit × REFINE candidates on the full float32 vectors: 8-bit SQ distances
 * alone stop short of recall 0.99 (LanceDB's docs advise refine_factor for quantised indexes).
 */
const REFINE = 4;

export async function runLancedb(job: Job, data: Dataset): Promise<Row[]> {
  // LanceDB logs a deprecation warning per query that selects columns without `_distance`; the query
  // below selects `_distance` too, so nothing is printed per query.
  const lancedb = requireFromFolder<LanceDb>('lancedb', '@lancedb/lancedb');
  const arrow = requireFromFolder<Arrow>('lancedb', 'apache-arrow');
  const { n, dim } = job;
  const dir = mkdtempSync(join(tmpdir(), 'arkivector-lancedb-'));
  try {
    const before = await rss();
    const db = await lancedb.connect(dir);
    const child = arrow.makeData({ type: new arrow.Float32(), length: n * dim, data: data.base });
    const fsl = arrow.makeData({
      type: new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true)),
      length: n,
      nullCount: 0,
      child,
    });
    const cols: Record<string, unknown> = {
      id: arrow.makeVector(Int32Array.from({ length: n }, (_, i) => i)),
      vector: arrow.makeVector(fsl),
    };
    if (data.bucket !== undefined) {
      cols.bucket = arrow.makeVector(data.bucket);
      cols.cluster = arrow.makeVector(data.cluster);
    }
    const tl = performance.now();
    const tbl = await db.createTable('bench', new arrow.Table(cols));
    const loadS = (performance.now() - tl) / 1000;
    if ((await tbl.countRows()) !== n) throw new Error('LanceDB table row count differs');
    log(`  load (one Arrow batch into a Lance table) ${loadS.toFixed(1)} s`);
    const tb = performance.now();
    await tbl.createIndex('vector', {
      config: lancedb.Index.hnswSq({ distanceType: 'cosine', numPartitions: 1, m: M, efConstruction: EF_CONSTRUCTION }),
    });
    const seconds = (performance.now() - tb) / 1000;
    let scalarS = 0;
    if (data.bucket !== undefined) {
      const ts = performance.now();
      await tbl.createIndex('bucket', { config: lancedb.Index.btree() });
      await tbl.createIndex('cluster', { config: lancedb.Index.btree() });
      scalarS = (performance.now() - ts) / 1000;
    }
    const bytesPerVector = ((await rss()) - before) / n;
    const disk = duBytes(dir);
    log(
      `  build IVF_HNSW_SQ ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s), scalar indexes ${scalarS.toFixed(1)} s, ${Math.round(bytesPerVector)} B/vector RSS, ${(disk / 2 ** 20).toFixed(1)} MiB on disk`,
    );
    const ids = (t: ArrowTable): number[] => Array.from(t.getChild('id')!.toArray(), Number);
    const ann = (q: Float32Array, ef: number, refine: boolean): VectorQuery => {
      const v = tbl.vectorSearch(q).distanceType('cosine').select(['id', '_distance']).limit(K).ef(ef).nprobes(1);
      return refine ? v.refineFactor(REFINE) : v;
    };
    const flat = (q: Float32Array): VectorQuery =>
      tbl.vectorSearch(q).distanceType('cosine').select(['id', '_distance']).limit(K).bypassVectorIndex();
    const extra = { load_s: loadS, disk_bytes: disk };
    const rows: Row[] = [];
    for (const refine of [false, true]) {
      const variant = refine ? `hnsw-sq-refine${REFINE}` : 'hnsw-sq';
      log(`  ${variant}:`);
      // LanceDB requires ef ≥ the candidates it fetches (limit × refine factor).
      const points = await sweep(
        (ef) =>
          measure(`lancedb ${variant} ef=${ef}`, data, dim, job.queries, async (q) =>
            ids(await ann(q, ef, refine).toArrow()),
          ),
        refine ? EF_SWEEP.filter((ef) => ef >= K * REFINE) : EF_SWEEP,
      );
      rows.push(...sweepRows('lancedb', job, { seconds, bytesPerVector }, points, () => ({ variant, ...extra })));
    }
    // Flat: the exact scan; one point, over the exact system's query count.
    const m = await measure('lancedb flat', data, dim, job.exactQueries, async (q) => ids(await flat(q).toArrow()));
    log(`  flat: recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count} queries`);
    rows.push(measuredRow('lancedb', job, m, { variant: 'flat', bytes_per_vector: bytesPerVector, ...extra }));
    for (const c of casesFor(job, data)) {
      const sql = c.sql;
      for (const refine of [false, true]) {
        rows.push(
          ...(await filteredSweep(
            'lancedb',
            job,
            data,
            c,
            (ef) => async (q) => ids(await ann(q, ef, refine).where(sql).toArrow()),
            {
              variant: refine ? `hnsw-sq-refine${REFINE}` : 'hnsw-sq',
              note: 'where() prefilter (default), BTREE indexes on bucket and cluster',
              ...(refine ? { efs: EF_SWEEP.filter((ef) => ef >= K * REFINE) } : {}),
            },
          )),
        );
      }
      rows.push(
        await filteredOnce('lancedb', job, data, c, async (q) => ids(await flat(q).where(sql).toArrow()), {
          variant: 'flat',
          count: job.exactQueries,
        }),
      );
    }
    tbl.close();
    db.close();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
