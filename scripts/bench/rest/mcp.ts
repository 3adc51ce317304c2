// The MCP cases of `npm run bench -- rest`: `arkivector_search` through the SDK's real Client, one call
// after another over one session (streamable HTTP or stdio), or from several sessions at once over
// streamable HTTP, each session calling in a loop as an agent does.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type LatencySummary, timeConcurrent, timeSequential } from './latency.ts';
import { loadNow, type Row, type Target, withCpu } from './rows.ts';

export interface McpSearch {
  collection: string;
  k: number;
  n: number;
  dim: number;
  queries: readonly number[][];
  log(line: string): void;
}

/** A Client connected over `transport` (initialize done), with the tool list read once as agents do. */
export async function connectMcp(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'arkivector-bench-e2e', version: '1.0.0' });
  await client.connect(transport);
  // The listing caches the output schemas: each answer is then validated against its schema.
  await client.listTools();
  return client;
}

/** A Client over streamable HTTP to `base`/mcp. */
export const connectHttp = (base: string): Promise<Client> =>
  connectMcp(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));

/** One `arkivector_search` call with query `i` (cycling), checked to answer k results. */
function searchCall(system: Row['system'], client: Client, search: McpSearch) {
  return async (i: number) => {
    const result = await client.callTool({
      name: 'arkivector_search',
      arguments: { collection: search.collection, vector: search.queries[i % search.queries.length], k: search.k },
    });
    const hits = (result.structuredContent as { results?: unknown[] } | undefined)?.results?.length;
    if (result.isError || hits !== search.k)
      throw new Error(`${system}: ${JSON.stringify(result.content).slice(0, 500)}`);
  };
}

function row(system: Row['system'], search: McpSearch, connections: number, measured: Measured): Row {
  const { result: summary, cpuMsPerRequest, mainMsPerRequest, clientMsPerRequest } = measured;
  return {
    system,
    n: search.n,
    dim: search.dim,
    k: search.k,
    connections,
    duration_s: summary.seconds,
    requests: summary.calls,
    requests_per_s: summary.per_s,
    p50_ms: summary.p50_ms,
    p90_ms: summary.p90_ms,
    p99_ms: summary.p99_ms,
    server_cpu_ms_per_request: cpuMsPerRequest,
    server_main_thread_cpu_ms_per_request: mainMsPerRequest,
    client_cpu_ms_per_request: clientMsPerRequest,
    load_avg: loadNow(),
  };
}

type Measured = Awaited<ReturnType<typeof withCpu<LatencySummary>>>;

/** `calls` sequential calls over one session after `warmup` untimed ones; stops at `deadlineMs`. */
export async function benchSequential(
  target: Target,
  client: Client,
  search: McpSearch,
  options: { calls: number; warmup: number; deadlineMs: number },
): Promise<Row> {
  const call = searchCall(target.system, client, search);
  search.log(`${target.system}: ${options.warmup} warm-up calls, then ${options.calls} sequential calls`);
  for (let i = 0; i < options.warmup; i++) await call(i);
  const measured = await withCpu(
    target.pid,
    () => timeSequential(call, options.calls, 0, options.deadlineMs),
    (r) => r.calls,
  );
  return row(target.system, search, 1, measured);
}

/**
 * Every session of `clients` calls in a loop for `durationS` seconds (after a third of that untimed);
 * the row counts every call of every session.
 */
export async function benchConcurrent(
  target: Target,
  clients: readonly Client[],
  search: McpSearch,
  durationS: number,
): Promise<Row> {
  // Sessions start at different queries, as independent agents would.
  const workers = clients.map((client, s) => {
    const call = searchCall(target.system, client, search);
    return (i: number) => call(s * 61 + i);
  });
  search.log(`${target.system}: ${clients.length} sessions for ${durationS} s`);
  await timeConcurrent(workers, Math.max(1, Math.round(durationS / 3)) * 1000);
  const measured = await withCpu(
    target.pid,
    () => timeConcurrent(workers, durationS * 1000),
    (r) => r.calls,
  );
  return row(target.system, search, clients.length, measured);
}
