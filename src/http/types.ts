// The types every part of the HTTP surface shares: the app's context, its logger, a route of the table and
// a mount (routes the node adds beside the API, like the console). They live here, not in app.ts, so the
// route modules depend on them without depending on the app that registers them.
import type { Context, Hono } from 'hono';
import type { BuildServerDeps } from '../../tools/server.ts';
import type { ServiceContext } from '../service/index.ts';
import type { StdioFacts } from '../stdioSnippet.ts';
import type { AccessPolicy, Grant, Scope } from './auth.ts';
import type { Metrics } from './metrics.ts';

type LogFn = (fields: Record<string, unknown>, message: string) => void;
export interface HttpLogger {
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

/** What a request carries through the app: its route template (for metrics) and its grant. */
export type HttpEnv = { Variables: { route: string; grant: Grant } };
export type Ctx = Context<HttpEnv>;
export type Method = 'GET' | 'POST' | 'DELETE';

/** What a route's handler may use besides its request. */
export interface RouteDeps {
  ctx: ServiceContext;
  metrics: Metrics;
  logger: HttpLogger;
  /** What each /mcp request's server is built from. */
  mcp: BuildServerDeps;
}

/** One route of the table (routes/table.ts). */
export interface RouteDefinition {
  method: Method;
  path: string;
  /** The scope a caller needs; null: open to anyone (the probes). */
  scope: Scope | null;
  /** Only on nodes started with this --compat. */
  compat?: 'kuradb';
  handler(c: Ctx, deps: RouteDeps): Promise<Response> | Response;
}

/** Registers a route as the table's are registered: labelled for metrics, guarded, rate limited. */
export type RegisterRoute = (
  method: Method,
  path: string,
  scope: Scope | null,
  handler: (c: Ctx) => Promise<Response> | Response,
) => void;

/** What a mount gets from the app. */
export interface MountDeps {
  ctx: ServiceContext;
  access: AccessPolicy;
  logger: HttpLogger;
  /** What a stdio node against the same chain needs, for the console's Connect page. */
  stdio?: StdioFacts;
  /** The node's access check (Origin, proxies, tokens, failed tries), without the rate limit. */
  guard(c: Context, scope: Scope): Grant;
  route: RegisterRoute;
}

/** Routes the node adds beside the API (the console, the docs), under the same access rules. */
export type RouteMount = (app: Hono<HttpEnv>, deps: MountDeps) => void;
