// KuraDB's REST API (--compat kuradb), as KuraDB's router serves it (agenvoy/KuraDB internal/api/router.go)
// and Agenvoy's HTTP tools call it: GET /api/health, /api/list, /api/search (both branches, or `target`),
// and the aliases /api/keyword and /api/semantic. Same query parameters, JSON bodies and status codes:
// 400 {"error": "db is required" | "\"name\" not exist" | "q is required"}, 500 {"error": …} when a branch
// fails. The answers come from the service operations the KuraDB MCP tools call (listRag, searchRag).
import type { Context } from 'hono';
import { problemFor } from '../errors.ts';
import { listRag, RagArgumentError, type RagMode, searchRag, type ServiceContext } from '../service/index.ts';
import type { HttpLogger } from './app.ts';

export interface KuradbRoute {
  path: string;
  /** null: unguarded, like /healthz. */
  scope: 'read' | null;
  handler: (c: Context) => Promise<Response> | Response;
}

// Go's encoding/json (Gin's c.JSON) escapes <, >, & and the two JavaScript line separators.
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const goJson = (value: unknown) =>
  JSON.stringify(value).replace(GO_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const json = (value: unknown, status = 200) =>
  new Response(goJson(value), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

/** KuraDB's `queryLimit`: strconv.Atoi of the parameter; the service applies the 1–100 fallback. */
const atoi = (value: string | undefined): number | undefined =>
  value !== undefined && /^[+-]?\d{1,18}$/.test(value) ? Number(value) : undefined;

/** `target` as KuraDB's Search handler reads it: lower-cased; empty runs both, anything else neither. */
function branches(target: string): RagMode {
  const t = target.toLowerCase();
  return t === '' ? 'both' : t === 'keyword' || t === 'semantic' ? t : 'none';
}

/**
 * The routes, for createHttpApp to register with its access rules.
 * @param ctx the service context
 * @param logger where unknown failures are logged (answered without their details)
 */
export function kuradbRoutes(ctx: ServiceContext, logger: HttpLogger): KuradbRoute[] {
  const failed = (error: unknown, route: string) => {
    if (error instanceof RagArgumentError) return json({ error: error.reason }, 400);
    const problem = problemFor(error);
    if (problem) return json({ error: problem.detail }, 500);
    logger.error(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error), route },
      'request failed',
    );
    return json({ error: 'internal error; the server log has the details' }, 500);
  };
  const search =
    (path: string, fixed?: 'keyword' | 'semantic') =>
    async (c: Context): Promise<Response> => {
      // KuraDB's queryDB middleware: an empty db is a missing one.
      const db = c.req.query('db') || undefined;
      try {
        const mode = fixed ?? branches(c.req.query('target') ?? '');
        return json(await searchRag(ctx, { db, q: c.req.query('q'), mode, limit: atoi(c.req.query('limit')) }));
      } catch (error) {
        return failed(error, path);
      }
    };
  return [
    {
      path: '/api/health',
      scope: null,
      handler: () => new Response('OK', { headers: { 'content-type': 'text/plain; charset=utf-8' } }),
    },
    {
      path: '/api/list',
      scope: 'read',
      handler: async () => {
        try {
          return json(await listRag(ctx));
        } catch (error) {
          return failed(error, '/api/list');
        }
      },
    },
    { path: '/api/search', scope: 'read', handler: search('/api/search') },
    // KuraDB keeps these for Agenvoy ("will deprecate in v1"): /api/search with the target fixed.
    { path: '/api/keyword', scope: 'read', handler: search('/api/keyword', 'keyword') },
    { path: '/api/semantic', scope: 'read', handler: search('/api/semantic', 'semantic') },
  ];
}
