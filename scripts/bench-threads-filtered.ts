// Filtered REST searches with their graph calls on threads (issue 23 item 5), old against new side by
// side: two child nodes serve the same native store (same vectors, order and seed) over the real HTTP
// app; in `old` the store's pinned searches are switched off, so every filtered search runs its plan's
// graph calls on the main thread (what the service did before), in `new` they run on libuv's threads.
// For each filter, in alternating rounds, autocannon loads one node then the other; each row has the
// requests/s, the latency, the CPU per request of the node's main thread (the ceiling of its requests/s)
// and of the whole process, and the load average when it ran (the machine is shared).
//
// Usage: ARKIVECTOR_ENGINE=native tsx scripts/bench-threads-filtered.ts [--n N] [--dim D] [--seconds S]
//          [--rounds R] [--connections C] [--out file.json]
//   default 40k × 128, 5 s per run, 2 rounds, 16 connections.
// (The children: the same file with --serve old|new.)

import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CollectionStore } from '../src/engine/index.ts';
import { ENGINE_ENV } from '../src/engine/hnsw/engine.ts';
import { createHttpApp, createMetrics, loadAccessPolicy, serveHttp } from '../src/http/index.ts';
import type { IndexerView, ServiceContext } from '../src/service/index.ts';
import { benchDefinition, benchRecord } from './benchRecord.ts';
import { loadAutocannon } from './e2e/autocannon.ts';
import { processCpuSeconds } from './e2e/cpu.ts';
import { clustered, mulberry32 } from './generators.ts';

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    n: { type: 'string' },
    dim: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    out: { type: 'string' },
  },
});
const N = Number(values.n ?? 40_000);
const DIM = Number(values.dim ?? 128);
const SECONDS = Number(values.seconds ?? 5);
const ROUNDS = Number(values.rounds ?? 2);
const CONNECTIONS = Number(values.connections ?? 16);
const K = 10;
const QUERIES = 200;
const COLLECTION = 'bench';
/** A random tenth (the walk at this size), a clustered set (one of the data's clusters), a random 2 % (the exact scan). */
const FILTERS = ['bucket < 10', 'cluster = 3', 'bucket < 2'];
const root = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
if (process.env[ENGINE_ENV] !== 'native') throw new Error(`run with ${ENGINE_ENV}=native`);

async function serve(mode: string): Promise<void> {
  if (mode === 'old') {
    // The service then asks the synchronous search: every graph call on the main thread.
    const proto = CollectionStore.prototype as unknown as Record<string, unknown>;
    proto.searchPinned = undefined;
    proto.hybridSearchPinned = undefined;
  }
  const data = clustered(N, DIM, 1, { latent: 64 });
  const rand = mulberry32(1);
  const store = new CollectionStore(COLLECTION, benchDefinition(DIM, { m: 16, efConstruction: 64 }));
  for (let i = 0; i < N; i += 1000) {
    const block = [];
    for (let j = i; j < Math.min(N, i + 1000); j++)
      block.push(
        benchRecord(j, Array.from(data.vectors[j]!), { bucket: Math.floor(rand() * 100), cluster: data.cluster[j]! }),
      );
    await store.apply({ remove: [], upsert: block });
  }
  // The service reads one published collection at block 1: no chain behind it (the bench measures searches).
  const collection = {
    name: COLLECTION,
    definition: store.definition,
    definitionKey: `0x${'1'.repeat(64)}`,
    definitionCreatedAtBlock: 1,
    definitionExpiresAt: 1n << 40n,
    owner: '0x00000000000000000000000000000000000000aa',
    store,
    conflicts: [],
    stats: { live_entities: N, rejected: 0, shadowed: 0 },
  };
  const indexer = {
    asOfBlock: 1,
    headBlock: 1,
    syncState: 'live',
    lastError: undefined,
    collections: new Map([[COLLECTION, collection]]),
    waitForBlock: async () => true,
  } as unknown as IndexerView;
  const ctx: ServiceContext = { indexer, chain: { chainId: 1, rpc: 'http://127.0.0.1:1' }, minBlockTimeoutMs: 1000 };
  const quiet = () => undefined;
  const logger = { info: quiet, warn: quiet, error: quiet };
  const access = await loadAccessPolicy({ publicRead: true, host: '127.0.0.1' });
  const app = createHttpApp({ ctx, access, metrics: createMetrics(ctx), logger, mcp: { ctx, logger } });
  const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
  process.stdout.write(`READY ${server.url}\n`);
}

function spawnNode(mode: string): Promise<{ child: ChildProcess; url: string }> {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', mode, '--n', `${N}`, '--dim', `${DIM}`];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)/.exec(out);
      if (match?.[1]) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`the ${mode} node exited (${code}) before serving`)));
  });
}

async function main(): Promise<void> {
  log(`${N} × ${DIM}, filters ${FILTERS.join(' | ')}, ${SECONDS} s × ${ROUNDS} rounds, ${CONNECTIONS} connections`);
  const nodes = await Promise.all([spawnNode('old'), spawnNode('new')]);
  try {
    const autocannon = loadAutocannon(root, log);
    const queries = clustered(QUERIES, DIM, 2, { latent: 64 }).vectors.map((v) => Array.from(v, (x) => +x.toFixed(6)));
    const rows: Record<string, unknown>[] = [];
    for (const where of FILTERS) {
      const bodies = queries.map((vector) => JSON.stringify({ vector, k: K, where }));
      const answers = await Promise.all(
        nodes.map(async ({ url }) => {
          const r = await fetch(`${url}/v1/collections/${COLLECTION}/search`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: bodies[0],
          });
          return (await r.json()) as { results: { id: string }[]; search_mode: string };
        }),
      );
      const ids = answers.map((a) => a.results.map((r) => r.id).join());
      if (ids[0] !== ids[1]) throw new Error(`${where}: old and new answer differently`);
      log(`${where}: search_mode ${answers[0]!.search_mode}`);
      for (let round = 0; round < ROUNDS + 1; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) {
          const { child, url } = nodes[i]!;
          let next = 0;
          const requests = [
            {
              method: 'POST' as const,
              path: `/v1/collections/${COLLECTION}/search`,
              headers: { 'content-type': 'application/json' },
              setupRequest: (request: { body?: string }) => ({ ...request, body: bodies[next++ % bodies.length] }),
            },
          ];
          const load = loadavg()[0]!;
          const main0 = processCpuSeconds(child.pid, true) ?? 0;
          const all0 = processCpuSeconds(child.pid) ?? 0;
          // Round 0 warms both nodes up and is not kept.
          const r = await autocannon({ url, connections: CONNECTIONS, duration: round === 0 ? 1 : SECONDS, requests });
          const mainMs = ((processCpuSeconds(child.pid, true) ?? 0) - main0) * 1000;
          const allMs = ((processCpuSeconds(child.pid) ?? 0) - all0) * 1000;
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${where}: ${r.non2xx} non-2xx, ${r.errors} errors`);
          if (round === 0) continue;
          const row = {
            system: i === 0 ? 'old (graph calls on the main thread)' : 'new (graph calls on threads)',
            where,
            search_mode: answers[0]!.search_mode,
            requests_per_s: Math.round(r.requests.total / r.duration),
            p50_ms: r.latency.p50,
            p99_ms: r.latency.p99,
            main_thread_ms_per_request: +(mainMs / r.requests.total).toFixed(3),
            process_cpu_ms_per_request: +(allMs / r.requests.total).toFixed(3),
            load_average: +load.toFixed(2),
          };
          rows.push(row);
          log(JSON.stringify(row));
        }
      }
    }
    if (values.out) writeFileSync(values.out, `${JSON.stringify({ n: N, dim: DIM, k: K, rows }, null, 2)}\n`);
  } finally {
    for (const { child } of nodes) child.kill('SIGTERM');
  }
}

if (values.serve) await serve(values.serve);
else await main();
