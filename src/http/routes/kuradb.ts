// KuraDB's REST API (--compat kuradb), as KuraDB's router serves it (agenvoy/KuraDB internal/api/router.go)
// and Agenvoy's HTTP tools call it: GET /api/health, /api/list, /api/search (both branches, or `target`),
// and the aliases /api/keyword and /api/semantic. Same query parameters, JSON bodies and status codes:
// 400 {"error": "db is required" | "\"name\" not exist" | "q is required"}, 500 {"error": …} when a branch
// fails. The answers come from the service operations the KuraDB MCP tools call (listRag, searchRag).
import { problemFor } from '../../errors.ts';
import { listRag, RagArgumentError, type RagMode, searchRag } from '../../service/index.ts';
import type { Ctx, HttpLogger, RouteDefinition, RouteDeps } from '../types.ts';

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

/** The answer to a failed call, as KuraDB gives it; unknown failures are logged, not answered. */
function failed(error: unknown, route: string, logger: HttpLogger): Response {
  if (error instanceof RagArgumentError) return json({ error: error.reason }, 400);
  const problem = problemFor(error);
  if (problem) return json({ error: problem.detail }, 500);
  logger.error(
    { error: error instanceof Error ? (error.stack ?? error.message) : String(error), route },
    'request failed',
  );
  return json({ error: 'internal error; the server log has the details' }, 500);
}

const search =
  (path: string, fixed?: 'keyword' | 'semantic') =>
  async (c: Ctx, { ctx, logger }: RouteDeps): Promise<Response> => {
    // KuraDB's queryDB middleware: an empty db is a missing one.
    const db = c.req.query('db') || undefined;
    try {
      const mode = fixed ?? branches(c.req.query('target') ?? '');
      return json(await searchRag(ctx, { db, q: c.req.query('q'), mode, limit: atoi(c.req.query('limit')) }));
    } catch (error) {
      return failed(error, path, logger);
    }
  };

const route = (path: string, scope: 'read' | null, handler: RouteDefinition['handler']): RouteDefinition => ({
  method: 'GET',
  path,
  scope,
  compat: 'kuradb',
  handler,
});

/** The routes of --compat kuradb, registered with the node's access rules. */
export const KURADB_ROUTES: readonly RouteDefinition[] = [
  route('/api/health', null, () => new Response('OK', { headers: { 'content-type': 'text/plain; charset=utf-8' } })),
  route('/api/list', 'read', async (_c, { ctx, logger }) => {
    try {
      return json(await listRag(ctx));
    } catch (error) {
      return failed(error, '/api/list', logger);
    }
  }),
  route('/api/search', 'read', search('/api/search')),
  // KuraDB keeps these for Agenvoy ("will deprecate in v1"): /api/search with the target fixed.
  route('/api/keyword', 'read', search('/api/keyword', 'keyword')),
  route('/api/semantic', 'read', search('/api/semantic', 'semantic')),
];
