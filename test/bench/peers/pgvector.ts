// pgvector `halfvec` HNSW, the same SQL in PGlite (WASM, in this process) and in a native PostgreSQL
// (a throwaway cluster, see postgres.ts): a binary COPY of the halfvec-rounded base vectors,
// VACUUM ANALYZE, CREATE INDEX … USING hnsw (m 16, ef_construction 64) in memory, then
// `ORDER BY v <=> $1 LIMIT 10` per query at each `hnsw.ef_search`.

import { floatToHalfBits } from '../../../src/collections/index.ts';
import {
  type Dataset,
  EF_CONSTRUCTION,
  type Job,
  K,
  log,
  M,
  measure,
  type Row,
  rss,
  sweep,
  sweepRows,
} from './common.ts';

/**
 * Big enough for the whole graph to build in memory at the sizes the bench runs (the halfvec graph is
 * ~1.1 KiB per vector at 384 dims); below it pgvector spills to a much slower on-disk build.
 */
export const PG_MAINTENANCE_WORK_MEM = '1GB';

/** The few calls the bench makes, over PGlite or `pg`. */
export type SqlSession = {
  exec(sql: string): Promise<void>;
  rows(sql: string): Promise<unknown[][]>;
  /** The ids of `SELECT id … ORDER BY v <=> literal LIMIT k`. */
  knn(literal: string): Promise<number[]>;
};

/** The statement every query runs: pgvector rounds the literal to halfvec, as it stores the rows. */
export function knnSql(dim: number): string {
  return `SELECT id FROM bench ORDER BY v <=> $1::halfvec(${dim}) LIMIT ${K}`;
}

/** A PostgreSQL binary COPY stream of `(id int4, v halfvec(dim))` rows (halfvec_recv: int16 dim, int16 0, big-endian halves). */
export function binaryCopy(base: Float32Array, n: number, dim: number): Uint8Array {
  const tuple = 2 + 4 + 4 + 4 + 4 + 2 * dim;
  const out = new Uint8Array(19 + n * tuple + 2);
  const view = new DataView(out.buffer);
  out.set([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00], 0); // PGCOPY\n\377\r\n\0, flags 0, no extension
  let o = 19;
  for (let i = 0; i < n; i++) {
    view.setInt16(o, 2);
    view.setInt32(o + 2, 4);
    view.setInt32(o + 6, i);
    view.setInt32(o + 10, 4 + 2 * dim);
    view.setInt16(o + 14, dim);
    view.setInt16(o + 16, 0);
    o += 18;
    for (let d = i * dim; d < (i + 1) * dim; d++, o += 2) view.setUint16(o, floatToHalfBits(base[d]!));
  }
  view.setInt16(o, -1);
  return out;
}

/** The query as a text literal; JavaScript's shortest round-trip form gives the exact float32 value. */
export function vectorLiteral(q: Float32Array): string {
  return `[${Array.prototype.join.call(q, ',')}]`;
}

export type PgTarget = {
  system: 'pglite-pgvector' | 'pgvector';
  session: SqlSession;
  /** Loads the binary COPY stream into table `bench`. */
  copy(stream: Uint8Array): Promise<void>;
  /** The memory figure to report, read before the load and after the build (bytes). */
  memory(): Promise<number>;
};

export async function runPgvector(job: Job, data: Dataset, target: PgTarget): Promise<Row[]> {
  const { n, dim } = job;
  const { session } = target;
  await session.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const version = (await session.rows("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))[0]?.[0];
  const server = (await session.rows('SHOW server_version'))[0]?.[0];
  log(`  PostgreSQL ${String(server)}, pgvector ${String(version)}`);
  await session.exec(`DROP TABLE IF EXISTS bench; CREATE TABLE bench (id int4, v halfvec(${dim}))`);
  await session.exec(`SET maintenance_work_mem = '${PG_MAINTENANCE_WORK_MEM}'`);
  // One process per system, as every other system here builds on one thread.
  await session.exec('SET max_parallel_maintenance_workers = 0');
  const stream = binaryCopy(data.base, n, dim);
  // One small build first: what the engine allocates once (PGlite's WASM heap grows, caches fill) is
  // then not counted per vector, and the first real statement pays no start-up cost.
  const one = vectorLiteral(data.base.subarray(0, dim));
  await session.exec(`CREATE TABLE bench_warm (id int4, v halfvec(${dim}))`);
  await session.exec(`INSERT INTO bench_warm SELECT i, '${one}' FROM generate_series(1, 200) i`);
  await session.exec('CREATE INDEX ON bench_warm USING hnsw (v halfvec_cosine_ops)');
  await session.rows(`SELECT id FROM bench_warm ORDER BY v <=> '${one}' LIMIT ${K}`);
  await session.exec('DROP TABLE bench_warm');

  const before = await target.memory();
  const tl = performance.now();
  await target.copy(stream);
  await session.exec('VACUUM ANALYZE bench');
  const loadS = (performance.now() - tl) / 1000;
  log(`  load (binary COPY + VACUUM ANALYZE) ${loadS.toFixed(1)} s`);
  const tb = performance.now();
  await session.exec(
    `CREATE INDEX bench_v ON bench USING hnsw (v halfvec_cosine_ops) WITH (m = ${M}, ef_construction = ${EF_CONSTRUCTION})`,
  );
  const seconds = (performance.now() - tb) / 1000;
  const bytesPerVector = ((await target.memory()) - before) / n;
  const [sizes] = await session.rows("SELECT pg_relation_size('bench_v')::float8, pg_relation_size('bench')::float8");
  const indexBytes = Number(sizes?.[0]);
  const heapBytes = Number(sizes?.[1]);
  log(
    `  build ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s), ${Math.round(bytesPerVector)} B/vector, index ${(indexBytes / 2 ** 20).toFixed(1)} MiB, heap ${(heapBytes / 2 ** 20).toFixed(1)} MiB`,
  );

  // Each system must answer from its HNSW index, not a sequential scan the planner might prefer.
  const q0 = vectorLiteral(data.queries.subarray(0, dim));
  const plan = (await session.rows(`EXPLAIN ${knnSql(dim).replace('$1', `'${q0}'`)}`))
    .map((r) => String(r[0]))
    .join('\n');
  if (!plan.includes('bench_v')) throw new Error(`the query plan does not use the HNSW index:\n${plan}`);

  const points = await sweep(async (ef) => {
    await session.exec(`SET hnsw.ef_search = ${ef}`);
    return measure(`${target.system} ef=${ef}`, data, dim, job.queries, (q) => session.knn(vectorLiteral(q)));
  });
  return sweepRows(target.system, job, { seconds, bytesPerVector }, points, () => ({
    index_bytes: indexBytes,
    heap_bytes: heapBytes,
    load_s: loadS,
  }));
}

// ---- PGlite ----

type PGliteResults = { rows: unknown[][] };
type PGliteDb = {
  exec(sql: string): Promise<unknown>;
  query(sql: string, params?: unknown[], options?: { rowMode?: 'array'; blob?: Blob }): Promise<PGliteResults>;
  close(): Promise<void>;
};
type PGliteModule = { PGlite: { create(options: { extensions: Record<string, unknown> }): Promise<PGliteDb> } };

/** PGlite in memory (no dataDir), in this process: its RSS growth is its memory. */
export async function runPglite(job: Job, data: Dataset, load: <T>(specifier: string) => T): Promise<Row[]> {
  const { PGlite } = load<PGliteModule>('@electric-sql/pglite');
  const { vector } = load<{ vector: unknown }>('@electric-sql/pglite/vector');
  const db = await PGlite.create({ extensions: { vector } });
  const sql = knnSql(job.dim);
  try {
    return await runPgvector(job, data, {
      system: 'pglite-pgvector',
      session: {
        exec: async (s) => void (await db.exec(s)),
        rows: async (s) => (await db.query(s, [], { rowMode: 'array' })).rows,
        // An unnamed statement, parsed and planned per call: PGlite's API has no named prepared statements.
        knn: async (lit) => (await db.query(sql, [lit], { rowMode: 'array' })).rows.map((r) => Number(r[0])),
      },
      copy: async (stream) => {
        await db.query("COPY bench (id, v) FROM '/dev/blob' WITH (FORMAT binary)", [], { blob: new Blob([stream]) });
      },
      memory: rss,
    });
  } finally {
    await db.close();
  }
}
