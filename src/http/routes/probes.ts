// Liveness, readiness and the Prometheus metrics.
import type { RouteDefinition } from '../types.ts';

export const PROBE_ROUTES: readonly RouteDefinition[] = [
  { method: 'GET', path: '/healthz', scope: null, handler: (c) => c.json({ status: 'ok' }) },
  {
    method: 'GET',
    path: '/readyz',
    scope: null,
    handler: (c, { ctx }) => {
      const { syncState, asOfBlock, headBlock } = ctx.indexer;
      const body = {
        ready: syncState === 'live',
        sync_state: syncState,
        as_of_block: asOfBlock ?? null,
        head_block: headBlock ?? null,
      };
      return c.json(body, body.ready ? 200 : 503);
    },
  },
  {
    method: 'GET',
    path: '/metrics',
    scope: 'read',
    handler: async (c, { metrics }) => c.body(await metrics.render(), 200, { 'content-type': metrics.contentType }),
  },
];
