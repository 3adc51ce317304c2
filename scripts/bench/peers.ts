// `npm run bench -- peers` (`npm run bench:peers`): arkivector (default and native graph engine) side by side with what users would
// pick instead, on the same clustered data and queries as scripts/bench/engine.ts (ARCHITECTURE.md §10.1; base
// seed 1, query seed 2): raw hnswlib-node, an exact scan, pgvector `halfvec` HNSW in PGlite 0.3 (WASM),
// native PostgreSQL with pgvector when the machine has both, and the embedded peers USearch (f32, f16),
// LanceDB, libSQL, Orama and Vectra (installed into .bench-peers/, test/bench/peers/install.ts). Each system
// runs in a child process of its own, so its memory is the RSS growth of a process that holds nothing
// else. Every index uses m 16, ef_construction 64; the search width is swept until recall@10 reaches
// 0.99, and QPS is compared at equal recall (0.95, 0.99): each system's fastest point measured at or above
// it (test/bench/peers/compare.ts), on wall clock and per CPU second. The ground truth is the engine's
// native exact scan (test/bench/peers/exactScan.ts).
// The run is bounded: the ground truth is drawn once here for every system, timing the exact scan per
// case; a sweep also stops at the first width slower (per CPU second) than that scan, and a point stops
// scoring after POINT_BUDGET_S once it has answered BUDGET_MIN_QUERIES (test/bench/peers/common.ts). The
// output says where each happened, and how long each system took.
//
// Usage: npm run bench -- peers [--quick] [--out FILE] [--n N] [--dim D] [--queries Q] [--systems a,b]
//          [--filters [case,…]]
//        npm run bench -- peers --install
//   default 100k × 384, 500 queries (PGlite's build takes minutes); --quick 10k × 128, 200 queries;
//   --systems runs the systems listed, in that order, repeats allowed (a repeat is labelled system#2);
//   --filters adds the filter cases (test/bench/peers/filters.ts; all of them, or the ones listed);
//   --install installs every peer at its pinned version (USearch's addon compiled by node-gyp) and exits.
// --out FILE gets the rows (a JSON array, as scripts/bench/engine.ts writes), FILE.partial.json after each
// system; the equal-recall comparison goes to stdout and to FILE's sidecar `<FILE without .json>.equal-recall.json`.

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeVectorPayload, encodeVectorPayload } from '../../src/collections/index.ts';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import { clustered } from '../../test/helpers/generators.ts';
import { BENCH_ENTRY, childArgs, suiteArgv } from './args.ts';
import {
  type ChildResult,
  type Job,
  K,
  log,
  POINT_BUDGET_S,
  progress,
  readDataset,
  type Row,
  SYSTEMS,
  type SystemName,
  setExactQps,
  writeDataset,
} from '../../test/bench/peers/common.ts';
import { compare, compareAll, formatComparison, formatFull, labelOf } from '../../test/bench/peers/compare.ts';
import { buckets, FILTER_CASES, parseFilterCases } from '../../test/bench/peers/filters.ts';
import { ExactScan } from '../../test/bench/peers/exactScan.ts';
import { runArkivector, runExact, runHnswlib } from '../../test/bench/peers/inMemory.ts';
import {
  ensurePeerFolder,
  ensurePeers,
  FOLDER_OF,
  PEER_FOLDERS,
  type PeerFolder,
  requirePeer,
} from '../../test/bench/peers/install.ts';
import { runLancedb } from '../../test/bench/peers/lancedb.ts';
import { runLibsql } from '../../test/bench/peers/libsql.ts';
import { runOrama, runVectra } from '../../test/bench/peers/lightJs.ts';
import { runPglite } from '../../test/bench/peers/pgvector.ts';
import { detectPostgres, runNative } from '../../test/bench/peers/postgres.ts';
import { runUsearch } from '../../test/bench/peers/usearch.ts';

/** A child that runs longer than this is killed (PGlite's build at full size takes minutes: docs/benchmarks.md). */
const CHILD_TIMEOUT_MS = 60 * 60_000;
/** Time a stopped child gets to clean up (stop its PostgreSQL cluster) before SIGKILL. */
const KILL_GRACE_MS = 150_000;
/** Sizes beyond this would not fit PGlite's 32-bit WASM memory anyway. */
const MAX_POINTS = 2_000_000;
const MAX_DIM = 4000;

const argv = suiteArgv();
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
  setExactQps(job.exactQps);
  switch (system) {
    case 'exact':
      return { rows: await runExact(job, data) };
    case 'hnswlib-node':
      return { rows: await runHnswlib(job, data) };
    case 'arkivector':
    case 'arkivector-native':
      return { rows: await runArkivector(job, data) };
    case 'pglite-pgvector':
      return { rows: await runPglite(job, data, requirePeer) };
    case 'pgvector': {
      const found = detectPostgres();
      if (!found.ok) return { skipped: found.reason };
      return { rows: await runNative(job, data, found.install, requirePeer) };
    }
    case 'usearch':
      return { rows: await runUsearch(job, data, 'f32') };
    case 'usearch-f16':
      return { rows: await runUsearch(job, data, 'f16') };
    case 'lancedb':
      return { rows: await runLancedb(job, data) };
    case 'libsql':
      return { rows: await runLibsql(job, data) };
    case 'orama':
      return { rows: await runOrama(job, data) };
    case 'vectra':
      return { rows: await runVectra(job, data) };
  }
}

/** Runs one system in a child process (the bench entry, forked) and returns its answer. */
function runChild(system: SystemName, job: Job): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = fork(BENCH_ENTRY, childArgs(['--system', system, '--job', JSON.stringify(job)]), {
      execArgv: [...process.execArgv, '--expose-gc'],
      // Every arkivector system runs the native engine (the only one): the retired setting is cleared.
      env: { ...process.env, [ENGINE_ENV]: undefined },
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

/**
 * Writes the dataset files and the ground truth, computed once for every system; returns the exact
 * scan's QPS per CPU second per case ('unfiltered' and each filter case), timed while it drew that truth.
 */
function dataset(job: Job): Record<string, number> {
  const { n, dim, queries } = job;
  const cases = FILTER_CASES.filter((c) => job.cases?.includes(c.name));
  const gen = clustered(n, dim, 1, { latent: 64, onProgress: (d, t) => progress(`generate ${n} × ${dim}`, d, t) });
  const cluster = Int32Array.from(gen.cluster);
  const base = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    // The values every system indexes: halfvec-rounded, as the indexer decodes them.
    base.set(decodeVectorPayload(encodeVectorPayload({ vector: gen.vectors[i]!, document: '' })).vector, i * dim);
  }
  gen.vectors.length = 0;
  const queryGen = clustered(queries, dim, 2, { latent: 64 });
  const qs = queryGen.vectors;
  const q = new Float32Array(queries * dim);
  for (let i = 0; i < queries; i++) q.set(qs[i]!, i * dim);
  // The engine's exact scan (native), as the store's exact plan runs it: what a sweep is held to.
  const scan = new ExactScan(base, n, dim, (d, t) => progress('exact scan index', d, t));
  const truth = new Int32Array(queries * K);
  const exactQps: Record<string, number> = {};
  // Searches per CPU second of this process (as a child's cpu_qps): what a sweep's point is held to.
  const cpuSeconds = (since: NodeJS.CpuUsage): number => {
    const u = process.cpuUsage(since);
    return (u.user + u.system) / 1e6;
  };
  let c0 = process.cpuUsage();
  for (let i = 0; i < queries; i++) {
    truth.set(scan.topK(qs[i]!, K), i * K);
    progress('ground truth', i + 1, queries);
  }
  exactQps.unfiltered = queries / cpuSeconds(c0);
  log(`ground truth: exact scan ${exactQps.unfiltered.toFixed(1)} QPS per CPU second over ${queries} queries`);
  if (cases.length === 0) {
    writeDataset(job.data, { base, queries: q, truth });
    return exactQps;
  }
  // Filter attributes as scripts/bench/engine.ts draws them, and the exact top-k among each case's allowed ids.
  const bucket = buckets(n);
  const filteredTruth: Record<string, Int32Array> = {};
  const caseQueries: Record<string, Int32Array> = {};
  for (const c of cases) {
    const ok: number[] = [];
    for (let i = 0; i < n; i++) if (c.allows(bucket[i]!, cluster[i]!)) ok.push(i);
    const allowed = Uint32Array.from(ok);
    const asks = c.asks;
    const ids =
      asks === undefined ? qs.map((_, i) => i) : qs.map((_, i) => i).filter((i) => asks(queryGen.cluster[i]!));
    if (asks !== undefined) caseQueries[c.name] = Int32Array.from(ids);
    const t = new Int32Array(ids.length * K);
    c0 = process.cpuUsage();
    ids.forEach((qi, i) => {
      t.set(scan.topK(qs[qi]!, K, allowed), i * K);
      progress(`ground truth ${c.name}`, i + 1, ids.length);
    });
    exactQps[c.name] = ids.length / cpuSeconds(c0);
    filteredTruth[c.name] = t;
    log(
      `filter ${c.name} (${c.where}): ${allowed.length} of ${n} pass (${((100 * allowed.length) / n).toFixed(1)} %), ${ids.length} queries, exact scan ${exactQps[c.name]!.toFixed(1)} QPS per CPU second`,
    );
  }
  writeDataset(job.data, { base, queries: q, truth, bucket, cluster, filteredTruth, caseQueries });
  return exactQps;
}

function table(rows: Row[]): string {
  const pad = (s: string, w: number): string => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 32)}${pad('case', 14)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}queries`,
  ];
  for (const r of rows) {
    // `120/500`: the point's time budget ran out after 120 of the 500 queries asked.
    const queries = r.queries_asked === undefined ? String(r.queries) : `${r.queries}/${r.queries_asked}`;
    lines.push(
      `${pad(labelOf(r), 32)}${pad(r.case ?? '-', 14)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(r.qps >= 100 ? String(Math.round(r.qps)) : r.qps.toFixed(1), 9)}${pad(r.p50_ms.toFixed(3), 9)}${pad(r.p99_ms.toFixed(3), 9)}${queries}`,
    );
  }
  lines.push('');
  const budgeted = rows.filter((r) => r.queries_asked !== undefined).length;
  if (budgeted > 0)
    lines.push(
      `${budgeted} point(s) scored fewer queries than asked (queries x/y): their first pass ran out of the ${POINT_BUDGET_S} s time budget per point`,
    );
  for (const r of rows)
    if (r.sweep_stop !== undefined)
      lines.push(`${labelOf(r)} ${r.case ?? 'unfiltered'}: sweep stopped at ef ${r.ef}, ${r.sweep_stop}`);
  lines.push('');
  const seen = new Set<string>();
  for (const r of rows) {
    const system = labelOf(r);
    if (seen.has(system) || r.case !== undefined) continue;
    seen.add(system);
    const build =
      r.build_pts_per_s === null ? '' : `build ${r.build_s.toFixed(1)} s (${Math.round(r.build_pts_per_s)} pts/s), `;
    const mem = r.bytes_per_vector === null ? '' : `${Math.round(r.bytes_per_vector)} B/vector (RSS growth)`;
    const index =
      r.index_bytes === undefined
        ? ''
        : `, index ${Math.round(r.index_bytes / r.n)} B/vector + heap ${Math.round((r.heap_bytes ?? 0) / r.n)} B/vector`;
    const disk = r.disk_bytes === undefined ? '' : `, ${Math.round(r.disk_bytes / r.n)} B/vector on disk`;
    const load = r.load_s === undefined ? '' : `, load ${r.load_s.toFixed(1)} s`;
    lines.push(`${pad(system, 26)}${build}${mem}${index}${disk}${load}`);
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
  const cases = filterCasesOption();
  const unknown = only?.filter((s) => !(SYSTEMS as readonly string[]).includes(s)) ?? [];
  if (unknown.length > 0) throw new Error(`--systems: unknown ${unknown.join(', ')} (known: ${SYSTEMS.join(', ')})`);
  const data = mkdtempSync(join(tmpdir(), 'arkivector-peers-'));
  const job: Omit<Job, 'system'> = {
    n,
    dim,
    queries,
    exactQueries: Math.min(queries, quick ? 50 : 30),
    data,
    filters: cases.length > 0,
    cases,
  };
  log(
    `arkivector bench:peers: n=${n} dim=${dim} queries=${queries} (m=16, ef_construction=64, k=${K})${cases.length > 0 ? `, filter cases ${cases.join(', ')}` : ''}`,
  );
  const started = performance.now();
  const rows: Row[] = [];
  const skipped: Record<string, string> = {};
  /** Wall-clock seconds each system's child took (build, sweeps, filter cases). */
  const seconds: Record<string, number> = {};
  try {
    const native = detectPostgres();
    if (!native.ok) {
      skipped.pgvector = native.reason;
      log(`pgvector (native): skipped: ${native.reason}`);
    }
    // --systems runs in the order given, repeats included (a repeated system shows drift); the default
    // is every system once, in SYSTEMS order.
    const order = (only ?? [...SYSTEMS]) as SystemName[];
    const wanted = (s: SystemName): boolean => skipped[s] === undefined && (only === undefined || only.includes(s));
    if (wanted('pglite-pgvector') || wanted('pgvector')) ensurePeers();
    // The embedded peers the run asks for, installed once into .bench-peers/ (a failure skips only that peer).
    for (const folder of new Set(
      order.flatMap((s) => (wanted(s) && s in FOLDER_OF ? [FOLDER_OF[s as keyof typeof FOLDER_OF]] : [])),
    )) {
      try {
        ensurePeerFolder(folder);
      } catch (err) {
        for (const s of order)
          if (FOLDER_OF[s as keyof typeof FOLDER_OF] === folder)
            skipped[s] = `not installed: ${(err as Error).message}`;
        log(`${folder}: not installed: ${(err as Error).message}`);
      }
    }
    job.exactQps = dataset({ ...job, system: 'exact' });
    log(`ground truth and dataset: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const runs = new Map<SystemName, number>();
    for (const system of order) {
      if (!wanted(system)) continue;
      const run = (runs.get(system) ?? 0) + 1;
      runs.set(system, run);
      const load = loadavg().map((l) => Math.round(l * 100) / 100);
      log(`${system}${run > 1 ? ` (run ${run})` : ''}: ${new Date().toISOString()} load ${load.join(' ')}`);
      // One system failing (a peer that will not install or start) must not cost the others' rows.
      const t0 = performance.now();
      const res = await runChild(system, { ...job, system, run }).catch(
        (err: Error): ChildResult => ({ skipped: `failed: ${err.message}` }),
      );
      const label = run > 1 ? `${system}#${run}` : system;
      seconds[label] = Math.round((performance.now() - t0) / 1000);
      log(`${label}: ${seconds[label]} s`);
      if ('skipped' in res) {
        skipped[run > 1 ? `${system}#${run}` : system] = res.skipped;
        log(`${system}: skipped: ${res.skipped}`);
      } else {
        rows.push(...res.rows.map((r) => ({ ...r, load_avg: load })));
        // Rows so far, so a later failure or a stop leaves what was measured.
        if (out !== undefined)
          writeFileSync(`${out.replace(/\.json$/, '')}.partial.json`, `${JSON.stringify(rows, null, 2)}\n`);
      }
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
  const comparison = compare(rows);
  const full = compareAll(rows);
  console.log(table(rows));
  console.log('');
  console.log(formatComparison(comparison));
  console.log('');
  console.log(formatFull(full));
  // The same comparison on searches per CPU second of each child, which load from other processes
  // on the machine does not inflate (multi-threaded peers pay for every thread they use).
  const fullCpu = compareAll(rows.map((r) => ({ ...r, qps: r.cpu_qps ?? r.qps })));
  console.log('');
  console.log('---- per CPU second ----');
  console.log(formatFull(fullCpu));
  for (const [system, why] of Object.entries(skipped)) console.log(`${system}: skipped: ${why}`);
  const took = Math.round((performance.now() - started) / 1000);
  console.log(
    `seconds per system: ${Object.entries(seconds)
      .map(([s, t]) => `${s} ${t}`)
      .join(', ')}; ${took} s in all`,
  );
  log(`bench:peers took ${took} s`);
  if (out !== undefined) {
    writeFileSync(out, `${JSON.stringify(rows, null, 2)}\n`);
    const sidecar = `${out.replace(/\.json$/, '')}.equal-recall.json`;
    const machine = { load_avg_end: loadavg().map((l) => Math.round(l * 100) / 100), node: process.version };
    writeFileSync(
      sidecar,
      `${JSON.stringify({ n, dim, queries, cases, machine, exact_qps: job.exactQps, seconds, took_s: took, ...comparison, full, fullCpu, skipped }, null, 2)}\n`,
    );
    log(`wrote ${out} and ${sidecar}`);
  }
}

/**
 * `--filters` alone (or before another option) asks for every filter case, `--filters a,b` for those;
 * absent, none.
 */
function filterCasesOption(): string[] {
  const i = argv.indexOf('--filters');
  if (i < 0) return [];
  const value = argv[i + 1];
  return parseFilterCases(value === undefined || value.startsWith('--') ? undefined : value);
}

/** `--install`: every peer at its pinned version, then exit (what a later run would install on demand). */
function installAll(): void {
  const t0 = performance.now();
  ensurePeers();
  for (const folder of Object.keys(PEER_FOLDERS) as PeerFolder[]) ensurePeerFolder(folder);
  log(`bench:peers --install: every peer in place (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}

const system = option('--system');
if (argv.includes('--install')) {
  installAll();
} else if (system === undefined) {
  await parent();
} else {
  if (!(SYSTEMS as readonly string[]).includes(system)) throw new Error(`unknown system ${system}`);
  const job = JSON.parse(option('--job') ?? '{}') as Job;
  const result = await child(system as SystemName, job);
  // Exit once the answer is flushed: a peer's handles (PGlite, pg) must not keep the child alive.
  process.send?.(result, () => process.exit(0));
}
