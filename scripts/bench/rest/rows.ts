// The rows of `npm run bench -- rest` (one per measured system and round) and the CPU accounting they
// carry: the server's CPU time per request, read from /proc around the measured phase.
import { loadavg } from 'node:os';
import { processCpuSeconds } from './cpu.ts';

export type System =
  | 'arkivector-rest'
  | 'arkivector-rest-baseline'
  | 'arkivector-mcp-http'
  | 'arkivector-mcp-http-baseline'
  | 'arkivector-mcp-http-concurrent'
  | 'arkivector-mcp-http-concurrent-baseline'
  | 'arkivector-mcp-stdio';

export interface Row {
  system: System;
  n: number;
  dim: number;
  k: number;
  /** Concurrent connections (REST) or MCP sessions, each one request after another. */
  connections: number;
  duration_s: number;
  requests: number;
  requests_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  /** The server process's CPU time (all threads) per request: its cost, whatever share of the cores it got. */
  server_cpu_ms_per_request: number | null;
  /** The server's main thread alone (searches on threads run beside it). */
  server_main_thread_cpu_ms_per_request: number | null;
  /** The bench process's own CPU time per request: the clients (SDK Clients, autocannon) sharing the cores. */
  client_cpu_ms_per_request: number;
  /** The machine's 1-minute load average when the row was measured (other work shares the cores). */
  load_avg: number;
}

/** A server under test: its system label, base URL and process id (for its CPU time). */
export interface Target {
  system: System;
  base: string;
  pid: number | undefined;
}

/** CPU milliseconds per request of `pid` while `run` makes `count(result)` requests. */
export async function withCpu<T>(
  pid: number | undefined,
  run: () => Promise<T>,
  count: (result: T) => number,
): Promise<{ result: T; cpuMsPerRequest: number | null; mainMsPerRequest: number | null; clientMsPerRequest: number }> {
  const before = processCpuSeconds(pid);
  const mainBefore = processCpuSeconds(pid, true);
  const clientBefore = process.cpuUsage();
  const result = await run();
  const client = process.cpuUsage(clientBefore);
  const after = processCpuSeconds(pid);
  const mainAfter = processCpuSeconds(pid, true);
  const requests = count(result);
  const perRequest = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || requests === 0 ? null : ((b - a) * 1000) / requests;
  return {
    result,
    cpuMsPerRequest: perRequest(before, after),
    mainMsPerRequest: perRequest(mainBefore, mainAfter),
    clientMsPerRequest: (client.user + client.system) / 1000 / Math.max(1, requests),
  };
}

/** The 1-minute load average, rounded to hundredths. */
export const loadNow = (): number => Math.round((loadavg()[0] ?? 0) * 100) / 100;
