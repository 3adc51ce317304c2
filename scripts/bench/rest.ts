// `npm run bench -- rest` (`npm run bench:e2e`): arkivector end to end, as a user runs it. The embedded devnet and the real
// `arkivector serve` (a child process, with a signer, on loopback) hold a collection written through the
// REST API; then REST search throughput and latency under load (autocannon, installed on demand), and
// `arkivector_search` calls through the MCP SDK's real Client: sequential ones over streamable HTTP and
// over stdio (a second `serve --stdio` child that indexes the same chain), and concurrent ones from
// several sessions over streamable HTTP (rest/mcp.ts). Query vectors come from the seeded generator
// (test/helpers/generators.ts: ARCHITECTURE.md §10.1 clustered data, base seed 1, queries seed 2).
//
// Usage: npm run bench -- rest [--quick] [--out FILE] [--n N] [--dim D] [--connections C] [--duration S]
//                             [--calls N] [--sessions S] [--profile DIR] [--systems LIST]
//                             [--baseline CHECKOUT] [--rounds R]
//   default 10k × 384, 16 connections for 10 s, 1,000 sequential MCP calls, 16 MCP sessions for 10 s;
//   --quick 1k × 384, 3 s, 200 calls. --systems: any of rest, mcp-http, mcp-http-concurrent, mcp-stdio.
//   --profile DIR: run the HTTP serve under `node --cpu-prof` and write its .cpuprofile into DIR.
// The server and the load generator share the machine's cores: on 2 cores autocannon takes a share.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startDevnet } from '../../src/devnet/index.ts';
import { loadAutocannon } from './rest/autocannon.ts';
import { benchConcurrent, benchSequential, connectHttp, connectMcp, type McpSearch } from './rest/mcp.ts';
import { loadNow, type Row, type Target, withCpu } from './rest/rows.ts';
import { killChildren, type ServeProcess, spawnServe, waitLive } from '../../test/helpers/serveProcess.ts';
import { clustered } from '../../test/helpers/generators.ts';
import { benchArgs } from './args.ts';
import { median, writeJson } from './output.ts';

const values = benchArgs({
  quick: { type: 'boolean', default: false },
  out: { type: 'string' },
  n: { type: 'string' },
  dim: { type: 'string', default: '384' },
  connections: { type: 'string', default: '16' },
  duration: { type: 'string' },
  calls: { type: 'string' },
  sessions: { type: 'string', default: '16' },
  profile: { type: 'string' },
  systems: { type: 'string', default: 'rest,mcp-http,mcp-http-concurrent,mcp-stdio' },
  baseline: { type: 'string' },
  rounds: { type: 'string' },
});
const QUICK = values.quick === true;
const N = Number(values.n ?? (QUICK ? 1_000 : 10_000));
const DIM = Number(values.dim);
const CONNECTIONS = Number(values.connections);
const DURATION_S = Number(values.duration ?? (QUICK ? 3 : 10));
const CALLS = Number(values.calls ?? (QUICK ? 200 : 1_000));
const WARMUP_CALLS = QUICK ? 20 : 50;
/** Concurrent MCP sessions over streamable HTTP, each calling in a loop for the duration. */
const SESSIONS = Number(values.sessions);
const SYSTEMS = new Set((values.systems ?? '').split(','));
for (const system of SYSTEMS)
  if (!['rest', 'mcp-http', 'mcp-http-concurrent', 'mcp-stdio'].includes(system))
    throw new Error(`--systems: unknown system ${system}`);
/** Another checkout (with node_modules) whose serve takes the same REST load, interleaved: before/after. */
const BASELINE = values.baseline;
const ROUNDS = Number(values.rounds ?? (BASELINE ? 3 : 1));
const K = 10;
const QUERIES = 1_000;
const UPSERT_BATCH = 100; // UPSERT_MAX_ENTITIES: one transaction per request
const UPSERTS_IN_FLIGHT = 4;
const COLLECTION = 'bench';
/** Bounds of every wait: a phase that overruns fails the bench rather than hanging it. */
const INDEX_WAIT_ROUNDS = 10;
const MCP_PHASE_MS = 180_000;
for (const [name, value] of Object.entries({ N, DIM, CONNECTIONS, DURATION_S, CALLS, SESSIONS, ROUNDS }))
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);

const root = fileURLToPath(new URL('../..', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
/** float32 as a client would send it: 8 significant digits, as embedding APIs print them. */
const asJson = (v: Float32Array) => Array.from(v, (x) => Number(x.toPrecision(8)));

async function json<T>(response: Response): Promise<T> {
  const body = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${response.url}: ${body.slice(0, 500)}`);
  return JSON.parse(body) as T;
}

/**
 * fetch, tried a second time when the connection drops before an answer: a pooled keep-alive socket can
 * be closed by the server's idle timeout just as it is reused (seen on a loaded machine). Every request
 * of the bench may be repeated (a repeated upsert of the same ids updates them).
 */
async function fetchOnce(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return fetch(url, init);
  }
}

async function post<T>(url: string, body: unknown): Promise<T> {
  return json<T>(
    await fetchOnce(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/** Writes N entities through REST upserts (100 per transaction, a few in flight); returns the last block. */
async function fill(base: string): Promise<number> {
  const data = clustered(N, DIM, 1, { latent: 64 }).vectors;
  const created = await post<{ block_number: number }>(`${base}/v1/collections`, {
    name: COLLECTION,
    dim: DIM,
    metric: 'cosine',
    attributes: { topic: 'str', rank: 'i32' },
  });
  let lastBlock = created.block_number;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < N) {
      const from = next;
      next = Math.min(N, next + UPSERT_BATCH);
      const entities = [];
      for (let i = from; i < next; i++)
        entities.push({
          id: `v${i}`,
          vector: asJson(data[i] as Float32Array),
          document: `document ${i}`,
          attributes: { topic: `t${i % 7}`, rank: i },
        });
      const answer = await post<{ block_number: number }>(`${base}/v1/collections/${COLLECTION}/entities`, {
        entities,
        wait: 'receipt',
      });
      lastBlock = Math.max(lastBlock, answer.block_number);
      if (process.stderr.isTTY) process.stderr.write(`\rwriting: ${next} / ${N}`);
    }
  };
  await Promise.all(Array.from({ length: UPSERTS_IN_FLIGHT }, worker));
  log(`\nwrote ${N} × ${DIM} through REST upserts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return lastBlock;
}

/** Waits (through min_block, which the node awaits itself) until the node has indexed `block`. */
async function waitIndexed(base: string, block: number): Promise<void> {
  for (let round = 0; round < INDEX_WAIT_ROUNDS; round++) {
    const response = await fetchOnce(`${base}/v1/collections/${COLLECTION}?min_block=${block}`);
    if (response.status === 503) continue; // not_yet_indexed after --min-block-timeout: ask again
    const collection = await json<{ stats: { live_entities: number }; as_of_block: number }>(response);
    if (collection.stats.live_entities !== N)
      throw new Error(`the node indexed ${collection.stats.live_entities} entities, expected ${N}`);
    log(`node at block ${collection.as_of_block} with ${N} live entities`);
    return;
  }
  throw new Error(`the node did not reach block ${block} in ${INDEX_WAIT_ROUNDS} rounds`);
}

/** REST search load (autocannon) against each of `targets`, interleaved round by round. */
async function benchRest(targets: Target[], bodies: string[]): Promise<Row[]> {
  const autocannon = loadAutocannon(root, log);
  for (const { base } of targets) {
    const sample = await post<{ results: unknown[] }>(
      `${base}/v1/collections/${COLLECTION}/search`,
      JSON.parse(bodies[0] as string),
    );
    if (sample.results.length !== K)
      throw new Error(`a search answered ${sample.results.length} results, expected ${K}`);
  }
  let i = 0;
  const requests = [
    {
      method: 'POST' as const,
      path: `/v1/collections/${COLLECTION}/search`,
      headers: { 'content-type': 'application/json' },
      setupRequest: (request: { body?: string }) => ({ ...request, body: bodies[i++ % bodies.length] }),
    },
  ];
  const run = async (base: string, duration: number) => {
    const result = await autocannon({ url: base, connections: CONNECTIONS, duration, requests });
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
      throw new Error(`REST load: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    return result;
  };
  const rows: Row[] = [];
  for (const { base } of targets) await run(base, Math.max(1, Math.round(DURATION_S / 3)));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order, so neither system always runs right after the other's load.
    const ordered = round % 2 === 0 ? targets : [...targets].reverse();
    for (const { system, base, pid } of ordered) {
      log(`${system}: ${CONNECTIONS} connections for ${DURATION_S} s${ROUNDS > 1 ? ` (round ${round + 1})` : ''}`);
      const { result, cpuMsPerRequest, mainMsPerRequest, clientMsPerRequest } = await withCpu(
        pid,
        () => run(base, DURATION_S),
        (r) => r.requests.total,
      );
      rows.push({
        system,
        n: N,
        dim: DIM,
        k: K,
        connections: CONNECTIONS,
        duration_s: result.duration,
        requests: result.requests.total,
        requests_per_s: result.requests.total / result.duration,
        p50_ms: result.latency.p50,
        p90_ms: result.latency.p90,
        p99_ms: result.latency.p99,
        server_cpu_ms_per_request: cpuMsPerRequest,
        server_main_thread_cpu_ms_per_request: mainMsPerRequest,
        client_cpu_ms_per_request: clientMsPerRequest,
        load_avg: loadNow(),
      });
    }
  }
  return rows;
}

log(`bench rest on ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(2)} (the load generator shares them)`);
const devnet = await startDevnet({ host: '127.0.0.1', port: 0, blockTime: 0 });
const servers: ServeProcess[] = [];
let stdio: StdioClientTransport | undefined;
const abort = (signal: NodeJS.Signals) => {
  log(`\n${signal}: stopping the gateways and the devnet`);
  killChildren();
  if (stdio?.pid) process.kill(stdio.pid, 'SIGKILL');
  void devnet.stop().finally(() => process.exit(130));
};
process.once('SIGINT', abort);
process.once('SIGTERM', abort);
const rows: Row[] = [];
/** Phase boundaries on the monotonic clock in µs, the clock of V8's CPU profiles (`startTime`). */
const phases: Record<string, [number, number]> = {};
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  const start = monotonicUs();
  try {
    return await run();
  } finally {
    phases[name] = [start, monotonicUs()];
  }
}
if (values.profile) mkdirSync(values.profile, { recursive: true });
const rpcArgs = ['--rpc', devnet.url, '--ws', devnet.wsUrl, '--min-block-timeout', '60'];
try {
  const signer = devnet.accounts[0];
  if (!signer) throw new Error('the devnet has no funded account');
  const serve = await spawnServe({
    cwd: root,
    args: [...rpcArgs, '--http', '127.0.0.1:0'],
    nodeArgs: values.profile ? ['--cpu-prof', '--cpu-prof-dir', values.profile] : [],
    env: { ARKIVECTOR_PRIVATE_KEY: signer.privateKey },
  });
  servers.push(serve);
  await waitLive(serve.url);
  const lastBlock = await phase('fill', () => fill(serve.url));
  await waitIndexed(serve.url, lastBlock);
  const queries = clustered(QUERIES, DIM, 2, { latent: 64 }).vectors.map(asJson);

  // The node under test: the writer itself, or with --baseline a read-only node of this checkout started
  // like the baseline's, so both index the chain the same way (bootstrap) and build the same graph.
  let node = serve;
  let baseline: ServeProcess | undefined;
  if (BASELINE) {
    for (const cwd of [root, BASELINE]) {
      const started = await spawnServe({ cwd, args: [...rpcArgs, '--http', '127.0.0.1:0'] });
      servers.push(started);
      await waitLive(started.url);
      await waitIndexed(started.url, lastBlock);
      if (cwd === root) node = started;
      else baseline = started;
    }
  }
  if (SYSTEMS.has('rest')) {
    const targets: Target[] = [{ system: 'arkivector-rest', base: node.url, pid: node.pid }];
    if (baseline) targets.push({ system: 'arkivector-rest-baseline', base: baseline.url, pid: baseline.pid });
    const bodies = queries.map((vector) => JSON.stringify({ vector, k: K }));
    rows.push(...(await phase('rest', () => benchRest(targets, bodies))));
  }
  const search: McpSearch = { collection: COLLECTION, k: K, n: N, dim: DIM, queries, log };
  const sequential = { calls: CALLS, warmup: WARMUP_CALLS, deadlineMs: MCP_PHASE_MS };
  /** Each target measured `rounds` times, alternating which one goes first. */
  const interleaved = async (targets: Target[], measure: (target: Target, i: number) => Promise<Row>) => {
    for (let round = 0; round < (baseline ? ROUNDS : 1); round++)
      for (const i of (round % 2 === 0 ? [0, 1] : [1, 0]).filter((i) => i < targets.length))
        rows.push(await measure(targets[i] as Target, i));
  };
  const httpTargets = (system: 'mcp-http' | 'mcp-http-concurrent'): Target[] => [
    { system: `arkivector-${system}`, base: node.url, pid: node.pid },
    ...(baseline ? [{ system: `arkivector-${system}-baseline` as const, base: baseline.url, pid: baseline.pid }] : []),
  ];
  if (SYSTEMS.has('mcp-http')) {
    const targets = httpTargets('mcp-http');
    const clients = await Promise.all(targets.map(({ base }) => connectHttp(base)));
    try {
      await phase('mcp-http', () =>
        interleaved(targets, (target, i) => benchSequential(target, clients[i] as Client, search, sequential)),
      );
    } finally {
      for (const client of clients) await client.close();
    }
  }
  if (SYSTEMS.has('mcp-http-concurrent')) {
    const targets = httpTargets('mcp-http-concurrent');
    const sessions = await Promise.all(
      targets.map(({ base }) => Promise.all(Array.from({ length: SESSIONS }, () => connectHttp(base)))),
    );
    try {
      await phase('mcp-http-concurrent', () =>
        interleaved(targets, (target, i) => benchConcurrent(target, sessions[i] ?? [], search, DURATION_S)),
      );
    } finally {
      for (const client of sessions.flat()) await client.close();
    }
  }
  while (servers.length) await servers.pop()?.stop();
  if (values.profile) {
    writeFileSync(join(values.profile, 'phases.json'), `${JSON.stringify(phases, null, 2)}\n`);
    log(`CPU profile of the HTTP serve and its phases.json written to ${values.profile}/`);
  }

  if (SYSTEMS.has('mcp-stdio')) {
    // A read-only node on stdio indexes the same chain; min_block makes its first answer wait for the data.
    stdio = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/arkivector.js', 'serve', '--stdio', ...rpcArgs],
      cwd: root,
      stderr: 'ignore',
    });
    const client = await connectMcp(stdio);
    try {
      for (let round = 0; ; round++) {
        const listed = await client.callTool({
          name: 'arkivector_list_collections',
          arguments: { min_block: lastBlock },
        });
        if (!listed.isError) break;
        if (round + 1 >= INDEX_WAIT_ROUNDS) throw new Error(`stdio node: ${JSON.stringify(listed.content)}`);
      }
      const target: Target = { system: 'arkivector-mcp-stdio', base: '', pid: stdio.pid ?? undefined };
      rows.push(await benchSequential(target, client, search, sequential));
    } finally {
      await client.close();
      stdio = undefined;
    }
  }
} catch (error) {
  for (const serve of servers) log(`serve stderr (tail):\n${serve.stderrTail()}`);
  throw error;
} finally {
  for (const serve of servers) await serve.stop();
  killChildren();
  await devnet.stop();
}

console.table(
  rows.map((r) => ({
    system: r.system,
    'n × dim': `${r.n} × ${r.dim}`,
    connections: r.connections,
    'req/s': Math.round(r.requests_per_s),
    'p50 ms': r.p50_ms.toFixed(2),
    'p90 ms': r.p90_ms.toFixed(2),
    'p99 ms': r.p99_ms.toFixed(2),
    'server CPU ms/req': r.server_cpu_ms_per_request?.toFixed(3) ?? '-',
    'main thread ms/req': r.server_main_thread_cpu_ms_per_request?.toFixed(3) ?? '-',
    'client CPU ms/req': r.client_cpu_ms_per_request.toFixed(3),
    load: r.load_avg,
  })),
);
writeJson(values.out, rows);
if (BASELINE) {
  const of = (system: Row['system'], read: (r: Row) => number | null) =>
    rows.filter((r) => r.system === system).map((r) => read(r) ?? Number.NaN);
  const ratios = (after: Row['system'], before: Row['system'], read: (r: Row) => number | null) =>
    of(after, read)
      .map((a, i) => (a / (of(before, read)[i] ?? Number.NaN)).toFixed(2))
      .join(', ');
  for (const [label, after, before] of [
    ['REST', 'arkivector-rest', 'arkivector-rest-baseline'],
    ['MCP over HTTP', 'arkivector-mcp-http', 'arkivector-mcp-http-baseline'],
    ['MCP over HTTP, concurrent sessions', 'arkivector-mcp-http-concurrent', 'arkivector-mcp-http-concurrent-baseline'],
  ] as const) {
    if (!of(after, (r) => r.requests_per_s).length) continue;
    log(`${label}, this checkout / baseline, per round:`);
    log(`  requests/s ${ratios(after, before, (r) => r.requests_per_s)}`);
    log(`  server CPU ms per request ${ratios(after, before, (r) => r.server_cpu_ms_per_request)}`);
    log(`  main thread CPU ms per request ${ratios(after, before, (r) => r.server_main_thread_cpu_ms_per_request)}`);
  }
}
// The MCP target: concurrent MCP calls against REST requests, in server CPU per request (medians of rounds).
for (const suffix of ['', '-baseline'] as const) {
  const cpu = (system: string) =>
    median(rows.filter((r) => r.system === system).map((r) => r.server_cpu_ms_per_request ?? Number.NaN));
  const ratio = cpu(`arkivector-mcp-http-concurrent${suffix}`) / cpu(`arkivector-rest${suffix}`);
  if (Number.isFinite(ratio))
    log(`MCP over HTTP (${SESSIONS} sessions) ÷ REST${suffix}, server CPU per request: ${ratio.toFixed(2)}`);
}
