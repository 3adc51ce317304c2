// The HTTP surface of a node: the route table (routes/table.ts) over the service operations, MCP
// streamable HTTP on /mcp, health/readiness probes and /metrics, with access control (guard.ts) on every
// guarded route and one error renderer (problems.ts). What the node adds beside the API (the console, the
// docs) comes in as mounts. `arkivector serve` builds it and hands it to serveHttp; tests call it over a
// real socket.
import { Hono } from 'hono';
import { SignerNotConfiguredError, search, type ServiceContext } from '../service/index.ts';
import type { BuildServerDeps } from '../../tools/server.ts';
import type { AccessPolicy } from './auth.ts';
import { jsonObject, withCollection } from './body.ts';
import { fastSearch, type FastPath } from './fastSearch.ts';
import { DOCS_ROUTE } from './docs.ts';
import { createGuard } from './guard.ts';
import type { Metrics } from './metrics.ts';
import { clientAddress, clientGone, rejectMalformedEscapes } from './params.ts';
import { errorRenderer, notFoundResponse } from './problems.ts';
import { SEARCH_ROUTE } from './routes/reads.ts';
import { ROUTES } from './routes/table.ts';
import type { StdioFacts } from '../stdioSnippet.ts';
import type { HttpEnv, HttpLogger, RegisterRoute, RouteDeps, RouteMount } from './types.ts';

export interface HttpAppDeps {
  ctx: ServiceContext;
  access: AccessPolicy;
  metrics: Metrics;
  logger: HttpLogger;
  /** What each /mcp request's server is built from; `observe` defaults to metrics.observeTool. */
  mcp: BuildServerDeps;
  /** Requests per minute per caller (token, else client IP); 0 or absent: no limit. */
  rateLimitPerMinute?: number;
  /** What a stdio node against the same chain needs, for the console's Connect page. */
  stdio?: StdioFacts;
  /** Routes beside the API (the console, the docs), mounted in this order; none when absent. */
  mounts?: readonly RouteMount[];
}

/**
 * The node's Hono app, with the fast path of its search route: serveHttp lets the fast path see each
 * request first.
 */
export type HttpApp = Hono<HttpEnv> & { fastPath: FastPath };

/**
 * Builds the Hono app of a node.
 * @param deps service context, access policy, metrics, logger, the MCP server deps and the mounts
 * @returns the app; serve it with serveHttp or call `app.request()` in process
 * @example
 * const app = createHttpApp({ ctx, access, metrics, logger, mcp: { ctx, logger, observe: metrics.observeTool } })
 * const server = await serveHttp({ host: '127.0.0.1', port: 8787, app })
 */
export function createHttpApp(deps: HttpAppDeps): HttpApp {
  const { ctx, access, metrics, logger } = deps;
  const app = new Hono<HttpEnv>();
  const guard = createGuard(access, deps.rateLimitPerMinute ?? 0);
  const errorResponse = errorRenderer(logger);

  app.use('*', async (c, next) => {
    // performance.now(), not hrtime.bigint(): two BigInts less per request, the same microseconds.
    const started = performance.now();
    try {
      await next();
    } finally {
      // Route templates, not paths: a label per entity id would grow without bound.
      metrics.observeHttp({
        method: c.req.method,
        route: c.get('route') ?? 'unmatched',
        status: c.res.status,
        seconds: (performance.now() - started) / 1000,
      });
    }
  });

  // Hono keeps a malformed percent-escape (`%ZZ`, a cut `%C3`) as it came, so `/entities/caf%C3` would
  // be looked up as the id `caf%C3` (and `?where=…%C3` filter on that text): an answer to a request that
  // names nothing. It is invalid_argument. Only on `/v1`: KuraDB's routes answer as KuraDB does.
  app.use('/v1/*', async (c, next) => {
    if (c.req.url.includes('%')) rejectMalformedEscapes(c.req.url);
    await next();
  });
  app.onError((error, c) => errorResponse(error, c.req.method, c.get('route') ?? 'unmatched', clientGone(c)));

  /** Registers a route with its template (for metrics) and the scope it needs (null: unguarded probe). */
  const route: RegisterRoute = (method, path, scope, handler) => {
    app.on(method, path, async (c) => {
      c.set('route', path);
      // The real reason first: without a signer no token could make a write succeed.
      if (scope === 'write' && !ctx.writer) throw new SignerNotConfiguredError();
      if (scope !== null) {
        // Security: every guarded route authorizes before reading its body or touching the service.
        c.set('grant', guard.request(c, scope));
        guard.take(c.get('grant'), clientAddress(c));
      }
      return handler(c);
    });
  };

  for (const mount of deps.mounts ?? [])
    mount(app, { ctx, access, logger, stdio: deps.stdio, guard: guard.request, route });

  app.notFound((c) => notFoundResponse(c.req.method, c.req.path));

  const routeDeps: RouteDeps = {
    ctx,
    metrics,
    logger,
    mcp: {
      ...deps.mcp,
      observe: deps.mcp.observe ?? metrics.observeTool,
      httpDocs: app.routes.some((r) => r.path === DOCS_ROUTE),
    },
  };
  for (const definition of ROUTES)
    if (definition.compat === undefined || definition.compat === deps.mcp.compat)
      route(definition.method, definition.path, definition.scope, (c) => definition.handler(c, routeDeps));

  const fastPath = fastSearch({
    route: SEARCH_ROUTE,
    answer: async (header, address, collection, body) => {
      guard.take(guard.headers(header, address, 'read'), address);
      return JSON.stringify(await search(ctx, withCollection(jsonObject(await body()), collection)));
    },
    errorResponse,
    observe: metrics.observeHttp,
  });
  return Object.assign(app, { fastPath });
}
