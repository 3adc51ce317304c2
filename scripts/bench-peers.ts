// `npm run bench:peers`: arkivector side by side with what users would pick instead, on the same
// clustered data and queries as scripts/bench.ts (ARCHITECTURE.md §10.1; base seed 1, query seed 2): raw
// hnswlib-node, an exact scan, pgvector `halfvec` HNSW in PGlite 0.3 (WASM) and native PostgreSQL with
// pgvector when the machine has both. Each system runs in a child process of its own, so its memory is
// the RSS growth of a process that holds nothing else. Every index uses m 16, ef_construction 64; the
// search width is swept until recall@10 reaches 0.99, and QPS is compared at equal recall (0.95, 0.99).
//
// Usage: tsx scripts/bench-peers.ts [--quick] [--out FILE] [--n N] [--dim D] [--queries Q] [--systems a,b]
//   default 100k × 384, 500 queries (PGlite's build alone takes ~6 min); --quick 10k × 128, 200 queries;
//   --systems runs only the systems listed (exact, hnswlib-node, arkivector, pglite-pgvector, pgvector).
// --out FILE gets the rows (a JSON array, as scripts/bench.ts writes); the equal-recall comparison goes
// to stdout and to FILE's sidecar `<FILE without .json>.equal-recall.json`.

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeVectorPayload, encodeVectorPayload } from '../src/collections/index.ts';
import { exactTopK } from '../src/engine/exact.ts';
import { METRIC_OPS } from '../src/engine/index.ts';
import { clustered } from './generators.ts';
import {
  type ChildResult,
  type Job,
  K,
  log,
  progress,
  readDataset,
  type Row,
  SYSTEMS,
  type SystemName,
  writeDataset,
} from './peers/common.ts';
import { compare, formatComparison } from './peers/compare.ts';
import { exactSource, runArkivector, runExact, runHnswlib } from './peers/inMemory.ts';
import { ensurePeers, requirePeer } from './peers/install.ts';
import { runPglite } from './peers/pgvector.ts';
import { detectPostgres, runNative } from './peers/postgres.ts';

/** A child that runs longer than this is killed (PGlite's 100k × 384 build takes ~6 min on an idle machine). */
const CHILD_TIMEOUT_MS = 60 * 60_000;
/** Time a stopped child gets to clean up (stop its PostgreSQL cluster) before SIGKILL. */
const KILL_GRACE_MS = 150_000;
/** Sizes beyond this would not fit PGlite's 32-bit WASM memory anyway. */
const MAX_POINTS = 2_000_000;
const MAX_DIM = 4000;

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
function intOption(name: string, fallback: number, max: number): number {
  const raw = option(name);
  const v = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < K || v > max) throw new Error(`${name} must be an integer from ${K} to ${max}`);
  return v;
}

async function child(system: SystemName, job: Job): Promise<ChildResult> {
  const data = readDataset(job);
  switch (system) {
    case 'exact':
      return { rows: await runExact(job, data) };
    case 'hnswlib-node':
      return { rows: await runHnswlib(job, data) };
    case 'arkivector':
      return { rows: await runArkivector(job, data) };
    case 'pglite-pgvector':
      return { rows: await runPglite(job, data, requirePeer) };
    case 'pgvector': {
      const found = detectPostgres();
      if (!found.ok) return { skipped: found.reason };
      return { rows: await runNative(job, data, found.install, requirePeer) };
    }
  }
}

/** Runs one system in a forked copy of this script and returns its answer. */
function runChild(system: SystemName, job: Job): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = fork(fileURLToPath(import.meta.url), ['--system', system, '--job', JSON.stringify(job)], {
      execArgv: [...process.execArgv, '--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: ChildResult | undefined;
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      log(`${system}: no answer after ${CHILD_TIMEOUT_MS / 60_000} min, stopping it`);
      proc.kill('SIGTERM');
      // The native child stops its cluster on SIGTERM; one that cannot is killed outright.
      kill = setTimeout(() => proc.kill('SIGKILL'), KILL_GRACE_MS);
    }, CHILD_TIMEOUT_MS);
    proc.on('message', (m) => {
      answer = m as ChildResult;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(kill);
      if (answer !== undefined) resolve(answer);
      else reject(new Error(`${system} exited with ${signal ?? `code ${code}`} before answering`));
    });
  });
}

function dataset(job: Job): void {
  const { n, dim, queries } = job;
  const gen = clustered(n, dim, 1, { latent: 64, onProgress: (d, t) => progress(`generate ${n} × ${dim}`, d, t) });
  const base = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    // The values every system indexes: halfvec-rounded, as the indexer decodes them.
    base.set(decodeVectorPayload(encodeVectorPayload({ vector: gen.vectors[i]!, document: '' })).vector, i * dim);
  }
  gen.vectors.length = 0;
  const qs = clustered(queries, dim, 2, { latent: 64 }).vectors;
  const q = new Float32Array(queries * dim);
  for (let i = 0; i < queries; i++) q.set(qs[i]!, i * dim);
  const src = exactSource(base, n, dim);
  const truth = new Int32Array(queries * K);
  for (let i = 0; i < queries; i++) {
    truth.set(exactTopK(METRIC_OPS.cosine, qs[i]!, src, undefined, K).slots, i * K);
    progress('ground truth', i + 1, queries);
  }
  writeDataset(job.data, { base, queries: q, truth });
}

function table(rows: Row[]): string {
  const pad = (s: string, w: number): string => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 17)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}`,
  ];
  for (const r of rows) {
    lines.push(
      `${pad(r.system, 17)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(String(Math.round(r.qps)), 9)}${pad(r.p50_ms.toFixed(3), 9)}${pad(r.p99_ms.toFixed(3), 9)}`,
    );
  }
  lines.push('');
  for (const system of SYSTEMS) {
    const r = rows.find((x) => x.system === system);
    if (r === undefined) continue;
    const build =
      r.build_pts_per_s === null ? '' : `build ${r.build_s.toFixed(1)} s (${Math.round(r.build_pts_per_s)} pts/s), `;
    const mem = r.bytes_per_vector === null ? '' : `${Math.round(r.bytes_per_vector)} B/vector (RSS growth)`;
    const index =
      r.index_bytes === undefined
        ? ''
        : `, index ${Math.round(r.index_bytes / r.n)} B/vector + heap ${Math.round((r.heap_bytes ?? 0) / r.n)} B/vector`;
    lines.push(`${pad(system, 17)}${build}${mem}${index}`);
  }
  return lines.join('\n');
}

async function parent(): Promise<void> {
  const quick = argv.includes('--quick');
  const out = option('--out');
  const n = intOption('--n', quick ? 10_000 : 100_000, MAX_POINTS);
  const dim = intOption('--dim', quick ? 128 : 384, MAX_DIM);
  const queries = intOption('--queries', quick ? 200 : 500, 100_000);
  const only = option('--systems')?.split(',');
  const unknown = only?.filter((s) => !(SYSTEMS as readonly string[]).includes(s)) ?? [];
  if (unknown.length > 0) throw new Error(`--systems: unknown ${unknown.join(', ')} (known: ${SYSTEMS.join(', ')})`);
  const data = mkdtempSync(join(tmpdir(), 'arkivector-peers-'));
  const job: Omit<Job, 'system'> = { n, dim, queries, exactQueries: Math.min(queries, quick ? 50 : 30), data };
  log(`arkivector bench:peers: n=${n} dim=${dim} queries=${queries} (m=16, ef_construction=64, k=${K})`);
  const started = performance.now();
  const rows: Row[] = [];
  const skipped: Record<string, string> = {};
  try {
    const native = detectPostgres();
    if (!native.ok) {
      skipped.pgvector = native.reason;
      log(`pgvector (native): skipped: ${native.reason}`);
    }
    const wanted = (s: SystemName): boolean => skipped[s] === undefined && (only === undefined || only.includes(s));
    if (wanted('pglite-pgvector') || wanted('pgvector')) ensurePeers();
    dataset({ ...job, system: 'exact' });
    for (const system of SYSTEMS) {
      if (!wanted(system)) continue;
      log(`${system}:`);
      // One system failing (a peer that will not install or start) must not cost the others' rows.
      const res = await runChild(system, { ...job, system }).catch(
        (err: Error): ChildResult => ({ skipped: `failed: ${err.message}` }),
      );
      if ('skipped' in res) {
        skipped[system] = res.skipped;
        log(`${system}: skipped: ${res.skipped}`);
      } else rows.push(...res.rows);
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
  const comparison = compare(rows);
  console.log(table(rows));
  console.log('');
  console.log(formatComparison(comparison));
  for (const [system, why] of Object.entries(skipped)) console.log(`${system}: skipped: ${why}`);
  log(`bench:peers took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (out !== undefined) {
    writeFileSync(out, `${JSON.stringify(rows, null, 2)}\n`);
    const sidecar = `${out.replace(/\.json$/, '')}.equal-recall.json`;
    writeFileSync(sidecar, `${JSON.stringify({ n, dim, queries, ...comparison, skipped }, null, 2)}\n`);
    log(`wrote ${out} and ${sidecar}`);
  }
}

const system = option('--system');
if (system === undefined) {
  await parent();
} else {
  if (!(SYSTEMS as readonly string[]).includes(system)) throw new Error(`unknown system ${system}`);
  const job = JSON.parse(option('--job') ?? '{}') as Job;
  const result = await child(system as SystemName, job);
  // Exit once the answer is flushed: a peer's handles (PGlite, pg) must not keep the child alive.
  process.send?.(result, () => process.exit(0));
}
