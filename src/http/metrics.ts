// Prometheus metrics of a node (GET /metrics): HTTP and MCP tool latency and outcomes, observed as they
// happen, and chain/sync/collection gauges read from the ServiceContext at scrape time so they are
// never stale. `arkivector serve` creates one Metrics and hands it to createHttpApp.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ServiceContext } from '../service/index.ts';
import { SYNC_STATES } from '../../indexer/index.ts';

// Reads answer in well under a millisecond from memory; waits for min_block and embedder calls take seconds.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface HttpSample {
  method: string;
  /** Route template (`/v1/collections/:c`), never the concrete path, to bound label cardinality. */
  route: string;
  status: number;
  seconds: number;
}

export interface Metrics {
  /** This node's own registry (never prom-client's global one, so several nodes fit in one process). */
  readonly registry: Registry;
  readonly contentType: string;
  observeHttp(sample: HttpSample): void;
  /** Matches BuildServerDeps.observe, so it can be passed to buildServer as is. */
  observeTool(tool: string, ok: boolean, seconds: number): void;
  /** The exposition text. */
  render(): Promise<string>;
}

/**
 * Creates the metrics of one node.
 * @param ctx the service context the gauges read at scrape time
 * @param options.defaultMetrics also export prom-client's process metrics (CPU, memory, event loop lag)
 * @returns the registry and the observers createHttpApp and buildServer call
 * @example const metrics = createMetrics(ctx, { defaultMetrics: true })
 */
export function createMetrics(ctx: ServiceContext, options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];

  const httpDuration = new Histogram({
    name: 'arkivector_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const httpRequests = new Counter({
    name: 'arkivector_http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const toolDuration = new Histogram({
    name: 'arkivector_mcp_tool_call_duration_seconds',
    help: 'MCP tool call latency by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const toolCalls = new Counter({
    name: 'arkivector_mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome (ok or error)',
    labelNames: ['tool', 'outcome'] as const,
    registers,
  });

  new Gauge({
    name: 'arkivector_head_block',
    help: 'Chain head block last seen by the indexer',
    registers,
    collect() {
      this.reset();
      if (ctx.indexer.headBlock !== undefined) this.set(ctx.indexer.headBlock);
    },
  });
  new Gauge({
    name: 'arkivector_as_of_block',
    help: 'Last block fully applied by the indexer (what answers reflect)',
    registers,
    collect() {
      this.reset();
      if (ctx.indexer.asOfBlock !== undefined) this.set(ctx.indexer.asOfBlock);
    },
  });
  new Gauge({
    name: 'arkivector_sync_lag_blocks',
    help: 'head_block_estimated - as_of_block, as /v1/status lag',
    registers,
    collect() {
      this.reset();
      const { headBlock, headBlockEstimated, asOfBlock } = ctx.indexer;
      const head = headBlockEstimated ?? headBlock;
      if (head !== undefined && asOfBlock !== undefined) this.set(head - asOfBlock);
    },
  });
  new Gauge({
    name: 'arkivector_sync_state',
    help: 'Sync state, one-hot: 1 for the current state, 0 for the others',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const current = ctx.indexer.syncState;
      for (const state of SYNC_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  const perCollection = (
    name: string,
    help: string,
    read: (stats: { live_entities: number; rejected: number; shadowed: number }) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['collection'] as const,
      registers,
      collect() {
        // Reset first so a collection that disappeared (definition deleted, reorg) drops its series.
        this.reset();
        for (const [collection, c] of ctx.indexer.collections) this.set({ collection }, read(c.stats));
      },
    });
  perCollection('arkivector_collection_live_entities', 'Live entities per collection', (s) => s.live_entities);
  perCollection(
    'arkivector_collection_rejected_entities',
    'Vector entities of allowed writers rejected per collection (payload, dim or attributes break the definition)',
    (s) => s.rejected,
  );
  perCollection(
    'arkivector_collection_shadowed_entities',
    'Vector entities shadowed by a newer entity with the same id',
    (s) => s.shadowed,
  );

  new Gauge({
    name: 'arkivector_indexer_events',
    help: 'Indexer work since start: blocks applied, entity operations, anomalies, reorgs, bootstraps, snapshots loaded and written',
    labelNames: ['event'] as const,
    registers,
    collect() {
      for (const [event, value] of Object.entries(ctx.indexer.counters ?? {})) this.set({ event }, value);
    },
  });

  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'arkivector_' });

  return {
    registry,
    contentType: registry.contentType,
    observeHttp({ method, route, status, seconds }) {
      const labels = { method, route, status: String(status) };
      httpDuration.observe(labels, seconds);
      httpRequests.inc(labels);
    },
    observeTool: (tool, ok, seconds) => {
      const labels = { tool, outcome: ok ? 'ok' : 'error' };
      toolDuration.observe(labels, seconds);
      toolCalls.inc(labels);
    },
    render: () => registry.metrics(),
  };
}
