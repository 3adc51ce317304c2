// libSQL 0.5 (the `libsql` package: SQLite fork with native vectors, better-sqlite3 style synchronous
// API) on a file database in a temp folder (WAL, synchronous OFF): a table with an F32_BLOB(dim)
// column and a DiskANN index `libsql_vector_idx(emb, 'metric=cosine', 'max_neighbors=32',
// 'insert_l=64', …)` — max_neighbors 32 = hnswlib's level-0 degree (2 × m 16), insert_l 64 =
// ef_construction; LIBSQL_COMPRESS (default float8) is its `compress_neighbors` option. Rows are
// inserted 1000 per transaction with the index in place (it is maintained per insert).
// Queries: `SELECT id FROM vector_top_k('t_idx', vector32(:v), 10)`. libSQL takes its search width
// `search_l` from the index's parameters (libsql_vector_meta_shadow) on every query and has no
// per-query setting, so the sweep rewrites that one parameter (tag 9, little-endian u64) between widths.
// Filtered cases, two ways: `post-filter` (vector_top_k of max(ef, k) rows joined to the table, the
// `where` applied, ordered by distance, limit k) and `exact` (an exact scan over the rows that pass,
// `WHERE … ORDER BY vector_distance_cos(…) LIMIT k`, with indexes on bucket and cluster).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Dataset,
  duBytes,
  type Job,
  K,
  log,
  measure,
  progress,
  type Row,
  rss,
  sweep,
  sweepRows,
} from './common.ts';
import { casesFor, filteredOnce, filteredSweep } from './filters.ts';
import { requireFromFolder } from './install.ts';

type Statement = {
  run(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown[];
  get(...args: unknown[]): unknown;
};
type Db = { exec(sql: string): void; prepare(sql: string): Statement; close(): void };
type LibsqlCtor = new (path: string) => Db;

/** DiskANN parameter tags (libsql vectorIndexInt.h). */
const SEARCH_L_TAG = 9;
const MAX_NEIGHBORS = 32;
const INSERT_L = 64;
const BLOCK = 1000;

/** Rewrites search_l in an index's parameter blob (9-byte entries: tag, little-endian u64). */
export function withSearchL(meta: Uint8Array, searchL: number): Buffer {
  const out = Buffer.from(meta);
  if (out.length % 9 !== 0) throw new Error(`unexpected libSQL index parameter blob (${out.length} bytes)`);
  for (let o = 0; o < out.length; o += 9) {
    if (out[o] === SEARCH_L_TAG) {
      out.writeBigUInt64LE(BigInt(searchL), o + 1);
      return out;
    }
  }
  throw new Error('no search_l in the libSQL index parameters');
}

export async function runLibsql(job: Job, data: Dataset): Promise<Row[]> {
  const Database = requireFromFolder<LibsqlCtor>('libsql', 'libsql');
  const { n, dim } = job;
  const compress = process.env.LIBSQL_COMPRESS ?? 'float8';
  const dir = mkdtempSync(join(tmpdir(), 'arkivector-libsql-'));
  const db = new Database(join(dir, 'bench.db'));
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF');
    const filters = data.bucket !== undefined;
    db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, emb F32_BLOB(${dim}), bucket INT, cluster INT)`);
    const options = [
      'metric=cosine',
      `max_neighbors=${MAX_NEIGHBORS}`,
      `insert_l=${INSERT_L}`,
      ...(compress === 'none' ? [] : [`compress_neighbors=${compress}`]),
    ];
    db.exec(`CREATE INDEX t_idx ON t (libsql_vector_idx(emb, ${options.map((o) => `'${o}'`).join(', ')}))`);
    // Multi-argument run() binds positionally; a single Buffer argument would be read as named parameters.
    const insert = db.prepare('INSERT INTO t (id, emb, bucket, cluster) VALUES (?, ?, ?, ?)');
    const before = await rss();
    const t0 = performance.now();
    for (let i = 0; i < n; i += BLOCK) {
      db.exec('BEGIN');
      for (let j = i; j < Math.min(n, i + BLOCK); j++) {
        const v = Buffer.from(data.base.buffer, data.base.byteOffset + j * dim * 4, dim * 4);
        insert.run(j, v, filters ? data.bucket![j]! : 0, filters ? data.cluster![j]! : 0);
      }
      db.exec('COMMIT');
      progress('libsql build', Math.min(n, i + BLOCK), n);
      if (i % 10_000 === 0 && i > 0)
        log(`  ${i} rows, ${Math.round(i / ((performance.now() - t0) / 1000))} rows/s so far`);
    }
    const seconds = (performance.now() - t0) / 1000;
    let scalarS = 0;
    if (filters) {
      const ts = performance.now();
      db.exec('CREATE INDEX t_bucket ON t (bucket); CREATE INDEX t_cluster ON t (cluster, bucket)');
      scalarS = (performance.now() - ts) / 1000;
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const bytesPerVector = ((await rss()) - before) / n;
    const disk = duBytes(dir);
    log(
      `  build ${seconds.toFixed(1)} s (${Math.round(n / seconds)} pts/s; ${options.join(' ')}), scalar indexes ${scalarS.toFixed(1)} s, ${Math.round(bytesPerVector)} B/vector RSS, ${(disk / 2 ** 20).toFixed(1)} MiB on disk`,
    );
    const metaGot = db.prepare("SELECT metadata FROM libsql_vector_meta_shadow WHERE name = 't_idx'").get() as
      | { metadata: ArrayBuffer | Uint8Array }
      | undefined;
    if (metaGot === undefined) throw new Error('no libsql_vector_meta_shadow row for t_idx');
    const metaRow = new Uint8Array(metaGot.metadata as ArrayBuffer);
    const setMeta = db.prepare("UPDATE libsql_vector_meta_shadow SET metadata = :m WHERE name = 't_idx'");
    const setSearchL = (l: number): void => void setMeta.run({ m: withSearchL(metaRow, l) });
    const topk = db.prepare(`SELECT id FROM vector_top_k('t_idx', vector32(:v), ${K})`);
    const vec = (q: Float32Array): Buffer => Buffer.from(q.buffer, q.byteOffset, q.byteLength);
    const ids = (r: unknown[]): number[] => r.map((x) => Number((x as { id: number }).id));
    const extra = { disk_bytes: disk, note: options.join(' ') };
    const points = await sweep((ef) => {
      setSearchL(ef);
      return measure(`libsql search_l=${ef}`, data, dim, job.queries, (q) => ids(topk.all({ v: vec(q) })));
    });
    const rows = sweepRows('libsql', job, { seconds, bytesPerVector }, points, () => extra);
    for (const c of casesFor(job, data)) {
      const post = db.prepare(
        `SELECT t.id FROM vector_top_k('t_idx', vector32(:v), :k) AS v JOIN t ON t.rowid = v.id WHERE ${c.sql} ORDER BY vector_distance_cos(t.emb, vector32(:v)) LIMIT ${K}`,
      );
      const exact = db.prepare(
        `SELECT id FROM t WHERE ${c.sql} ORDER BY vector_distance_cos(emb, vector32(:v)) LIMIT ${K}`,
      );
      rows.push(
        ...(await filteredSweep(
          'libsql',
          job,
          data,
          c,
          (ef) => {
            setSearchL(Math.max(ef, K));
            return (q) => ids(post.all({ v: vec(q), k: Math.max(ef, K) }));
          },
          { variant: 'post-filter', note: 'vector_top_k(max(ef, k)) joined, where, order by distance' },
        )),
      );
      rows.push(
        await filteredOnce('libsql', job, data, c, (q) => ids(exact.all({ v: vec(q) })), {
          variant: 'exact',
          note: 'WHERE … ORDER BY vector_distance_cos LIMIT k (scalar indexes on bucket, cluster)',
          count: Math.min(job.queries, 100),
        }),
      );
    }
    return rows;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
