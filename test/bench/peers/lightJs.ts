// The light pure-JavaScript stores agent-memory projects use; both answer a vector query with a linear
// scan (no ANN index), so each gives one point (ef null), filtered or not.
// - Orama 3.1 in memory: schema { id, embedding vector[dim], bucket number, cluster number },
//   insertMultiple in batches of 1000; `search({ mode: 'vector', similarity, limit 10, where })`.
//   Orama drops hits under `similarity` (default 0.8) and sorts what is left, so the threshold is
//   ORAMA_SIMILARITY (default 0.8, its default).
// - Vectra 0.15 LocalIndex (a folder holding index.json, loaded whole into memory): bucket and
//   cluster are `metadata_config.indexed` (kept in index.json, not one file per item), insertItem
//   inside one beginUpdate … endUpdate; `queryItems(vector, '', 10, filter)`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Dataset, type Job, K, log, measure, measuredRow, progress, type Row, rss } from './common.ts';
import { casesFor, filteredOnce } from './filters.ts';
import { requireFromFolder } from './install.ts';

type OramaHit = { id: string; score: number };
type Orama = {
  create(o: { schema: Record<string, string> }): unknown;
  insertMultiple(db: unknown, docs: unknown[], batch?: number): Promise<unknown> | unknown;
  search(db: unknown, params: Record<string, unknown>): Promise<{ hits: OramaHit[] }> | { hits: OramaHit[] };
};

type VectraItem = { item: { id: string }; score: number };
type VectraIndex = {
  createIndex(c: { version: number; metadata_config?: { indexed?: string[] } }): Promise<void>;
  beginUpdate(): Promise<void>;
  endUpdate(): Promise<void>;
  insertItem(item: unknown): Promise<unknown>;
  queryItems(v: number[], q: string, k: number, filter?: unknown): Promise<VectraItem[]>;
};
type Vectra = { LocalIndex: new (folder: string) => VectraIndex };

function onePoint(
  system: 'orama' | 'vectra',
  job: Job,
  buildS: number,
  bytes: number,
  m: Awaited<ReturnType<typeof measure>>,
  note: string,
): Row {
  return measuredRow(system, job, m, {
    build_s: buildS,
    build_pts_per_s: buildS > 0 ? job.n / buildS : null,
    bytes_per_vector: bytes,
    note,
  });
}

export async function runOrama(job: Job, data: Dataset): Promise<Row[]> {
  const orama = requireFromFolder<Orama>('orama', '@orama/orama');
  const { n, dim } = job;
  // Orama's default threshold, and 0 (keep every positive match: no hit of a top 10 is lost to it).
  const similarities = (process.env.ORAMA_SIMILARITY ?? '0.8,0').split(',').map(Number);
  const filters = data.bucket !== undefined;
  const before = await rss();
  const db = orama.create({
    schema: { id: 'string', embedding: `vector[${dim}]`, ...(filters ? { bucket: 'number', cluster: 'number' } : {}) },
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const docs = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      docs.push({
        id: String(j),
        embedding: Array.from(data.base.subarray(j * dim, (j + 1) * dim)),
        ...(filters ? { bucket: data.bucket![j]!, cluster: data.cluster![j]! } : {}),
      });
    }
    await orama.insertMultiple(db, docs, 1000);
    progress('orama build', Math.min(n, i + 1000), n);
  }
  const buildS = (performance.now() - t0) / 1000;
  const bytes = ((await rss()) - before) / n;
  log(`  build ${buildS.toFixed(1)} s (${Math.round(n / buildS)} pts/s), ${Math.round(bytes)} B/vector`);
  const query = async (q: Float32Array, similarity: number, where?: unknown): Promise<number[]> => {
    const res = await orama.search(db, {
      mode: 'vector',
      vector: { value: Array.from(q), property: 'embedding' },
      similarity,
      limit: K,
      includeVectors: false,
      ...(where !== undefined ? { where } : {}),
    });
    return res.hits.map((h) => Number(h.id));
  };
  const count = Math.min(job.queries, 100);
  const rows: Row[] = [];
  for (const similarity of similarities) {
    const variant = `sim${similarity}`;
    const m = await measure(`orama ${variant}`, data, dim, count, (q) => query(q, similarity));
    log(
      `  recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count} queries (similarity ≥ ${similarity})`,
    );
    rows.push({
      ...onePoint('orama', job, buildS, bytes, m, `linear scan, similarity threshold ${similarity}`),
      variant,
    });
    for (const c of casesFor(job, data)) {
      const where = c.orama;
      rows.push(await filteredOnce('orama', job, data, c, (q) => query(q, similarity, where), { count, variant }));
    }
  }
  return rows;
}

export async function runVectra(job: Job, data: Dataset): Promise<Row[]> {
  const { LocalIndex } = requireFromFolder<Vectra>('vectra', 'vectra');
  const { n, dim } = job;
  const filters = data.bucket !== undefined;
  const dir = mkdtempSync(join(tmpdir(), 'arkivector-vectra-'));
  try {
    const before = await rss();
    const index = new LocalIndex(dir);
    await index.createIndex({ version: 1, metadata_config: { indexed: filters ? ['bucket', 'cluster'] : [] } });
    const t0 = performance.now();
    await index.beginUpdate();
    for (let i = 0; i < n; i += 1000) {
      const items = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) {
        items.push({
          id: String(j),
          vector: Array.from(data.base.subarray(j * dim, (j + 1) * dim)),
          metadata: filters ? { bucket: data.bucket![j]!, cluster: data.cluster![j]! } : {},
        });
      }
      // Inside one beginUpdate … endUpdate: insertItem only stages the item, and index.json is written once.
      for (const item of items) await index.insertItem(item);
      progress('vectra build', Math.min(n, i + 1000), n);
    }
    await index.endUpdate();
    const buildS = (performance.now() - t0) / 1000;
    const bytes = ((await rss()) - before) / n;
    log(
      `  build ${buildS.toFixed(1)} s (${Math.round(n / buildS)} pts/s, index.json written), ${Math.round(bytes)} B/vector`,
    );
    const query = async (q: Float32Array, filter?: unknown): Promise<number[]> =>
      (await index.queryItems(Array.from(q), '', K, filter)).map((r) => Number(r.item.id));
    const count = Math.min(job.queries, 100);
    const m = await measure('vectra', data, dim, count, (q) => query(q));
    log(`  recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count} queries`);
    const rows = [onePoint('vectra', job, buildS, bytes, m, 'linear scan over number[] vectors')];
    for (const c of casesFor(job, data)) {
      const filter = c.vectra;
      rows.push(await filteredOnce('vectra', job, data, c, (q) => query(q, filter), { count }));
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
