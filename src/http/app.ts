// The HTTP surface of a node (README, "REST API"): the REST routes over the service operations, MCP streamable
// HTTP on /mcp, health/readiness probes and /metrics, with access control (auth.ts) on every guarded
// route and one error renderer (application/problem+json). `arkivector serve` builds it and hands it to
// serveHttp; tests call it over a real socket.
import { Hono, type Context } from 'hono';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ArkivectorError, internalProblem, problemFor, toProblem, type Problem } from '../errors.ts';
import {
  MAX_REQUEST_BYTES,
  count,
  createCollection,
  deleteEntities,
  get,
  getCollection,
  listCollections,
  listEntities,
  search,
  SignerNotConfiguredError,
  status,
  upsert,
  type ServiceContext,
} from '../service/index.ts';
import { buildServer, type BuildServerDeps } from '../../tools/server.ts';
import { AccessError, accessRequest, authorize, type AccessPolicy, type Grant, type Scope } from './auth.ts';
import type { Metrics } from './metrics.ts';
import { mountConsole } from '../console/index.ts';
import type { StdioFacts } from '../stdioSnippet.ts';
import { createAuthFailureLimiter, createRateLimiter, RateLimitedError } from './rateLimit.ts';
import { kuradbRoutes } from './kuradb.ts';
import { fastPaths, fastSearch } from './fastSearch.ts';

type LogFn = (fields: Record<string, unknown>, message: string) => void;
export interface HttpLogger {
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

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
}

type Env = { Variables: { route: string; grant: Grant } };
type Ctx = Context<Env>;

const PROBLEM_TYPE = 'application/problem+json';

function problemResponse(
  problem: Problem | Record<string, unknown>,
  status: number,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(problem), { status, headers: { 'content-type': PROBLEM_TYPE, ...headers } });
}

/** The body of a route no one registered: a problem with the same shape as every other error. */
function notFoundProblem(method: string, path: string) {
  return toProblem(new ArkivectorError('not_found', `no route ${method} ${path}`));
}

/**
 * Paths an OAuth-capable MCP client probes after a 401 (RFC 9728 protected-resource metadata, RFC 8414 /
 * OIDC authorization-server metadata, and the MCP spec's fallback endpoints at the server's origin). This
 * node takes static bearer tokens only: each answers 404 (no metadata: the client's OAuth discovery ends
 * there, and the 401's WWW-Authenticate names no `resource_metadata`), saying how to pass the token.
 */
const OAUTH_PATHS =
  /^\/(?:\.well-known\/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/.*)?|register|authorize|token)$/;

function noOAuthProblem(method: string, path: string) {
  return toProblem(
    new ArkivectorError(
      'not_found',
      `no route ${method} ${path}: this node has no OAuth; it takes static bearer tokens, sent as "Authorization: Bearer <token>" (README, "Access")`,
    ),
  );
}

const tooLarge = (limit: number) =>
  new ArkivectorError('payload_too_large', `request body over ${limit} bytes`, { meta: { limit_bytes: limit } });

/**
 * Reads a request body, refusing more than `limit` bytes as soon as it is exceeded (Content-Length
 * first, then while streaming, since chunked bodies announce no length).
 */
async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  // A declared length bounds the body (Node's HTTP parser reads exactly that many bytes), so it can be
  // read whole: @hono/node-server then reads the socket directly instead of building a web Request and
  // a stream per request (about a tenth of a search request's CPU).
  if (declared !== null && /^\d+$/.test(declared)) return new Uint8Array(await request.arrayBuffer());
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

// One decoder for every request: without `stream`, each decode() starts afresh, also after a failure.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object of a POST body (empty body = `{}`); anything else is invalid_argument. */
async function jsonBody(c: Ctx): Promise<Record<string, unknown>> {
  return jsonObject(await readBody(c.req.raw, MAX_REQUEST_BYTES));
}

/** The JSON object of a body's bytes (none = `{}`); anything else is invalid_argument. */
function jsonObject(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.byteLength === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'not UTF-8';
    throw new ArkivectorError('invalid_argument', `request body is not valid JSON: ${reason}`, {
      meta: { errors: [{ path: '', message: 'invalid JSON' }] },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ArkivectorError('invalid_argument', 'request body must be a JSON object', {
      meta: { errors: [{ path: '', message: 'expected object' }] },
    });
  }
  return value as Record<string, unknown>;
}

/**
 * The JSON object of a write's body, which must say it is JSON: a page of another origin can POST
 * `text/plain` without a preflight, and a write is what such a page would want.
 */
async function writeBody(c: Ctx): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type');
  const media = type?.split(';')[0]?.trim().toLowerCase();
  if (media !== 'application/json')
    throw new ArkivectorError('unsupported_media_type', 'a write body must be sent as content-type: application/json', {
      meta: { expected: 'application/json' },
    });
  return jsonBody(c);
}

/** Arguments of a collection route: the body plus the collection from the path (which must agree). */
function withCollection(body: Record<string, unknown>, collection: string): Record<string, unknown> {
  if (body.collection !== undefined && body.collection !== collection) {
    throw new ArkivectorError(
      'invalid_argument',
      `collection: the body names ${JSON.stringify(body.collection)} but the path names ${JSON.stringify(collection)}`,
      {
        meta: { errors: [{ path: 'collection', message: 'does not match the path' }] },
      },
    );
  }
  // The body is this request's own parse: set in place (where a spread would copy it), which puts the
  // field where the spread did (kept where the body had it, else last).
  body.collection = collection;
  return body;
}

// Query strings carry text; the service's zod schemas want numbers and booleans. Only well-formed values
// are converted: anything else reaches zod as the original string and fails there with its path. A number
// is any literal a JSON body could hold (`1e3` is 1000, as in a body), so `1.5` or `1e20` answers the
// bound it breaks ("expected int", "too big"), not "expected number, received string".
const QUERY_NUMBER = /^-?\d{1,64}(\.\d{1,64})?([eE][+-]?\d{1,4})?$/;
const queryInteger = (value: string | undefined): unknown =>
  value !== undefined && QUERY_NUMBER.test(value) ? Number(value) : value;
const queryBoolean = (value: string | undefined): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

/** A JSON query parameter (`filter`); text that is not JSON is invalid_argument with its name as path. */
function queryJson(value: string | undefined, name: string): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw new ArkivectorError('invalid_argument', `${name}: not valid JSON`, {
      meta: { errors: [{ path: name, message: 'invalid JSON' }] },
    });
  }
}

/**
 * Throws invalid_argument when a request's path or query string holds a percent-escape that decodes to no
 * UTF-8 text (errors[].path `path` or `query`).
 */
function rejectMalformedEscapes(url: string): void {
  const { pathname, search } = new URL(url);
  for (const [part, text] of [
    ['path', pathname],
    ['query', search],
  ] as const) {
    try {
      decodeURIComponent(text);
    } catch {
      throw new ArkivectorError('invalid_argument', `${part}: a malformed percent-escape (not %XX of UTF-8 bytes)`, {
        meta: { errors: [{ path: part, message: 'malformed percent-escape' }] },
      });
    }
  }
}

/** A path parameter of the route (Hono has already percent-decoded it; a malformed escape was refused). */
const pathParam = (c: Ctx, name: string): string => c.req.param(name) ?? '';

/** The peer address of the connection (@hono/node-server's bindings); `unknown` in process (app.request). */
function clientAddress(c: Ctx): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/**
 * Whether the client went away (closed or reset its connection) before the answer: reading its body
 * then fails, and that is the client's doing, not a fault of the node.
 */
function clientGone(c: Ctx): boolean {
  const env = c.env as { incoming?: { destroyed?: boolean; socket?: { destroyed?: boolean } } } | undefined;
  return env?.incoming?.destroyed === true || env?.incoming?.socket?.destroyed === true;
}

/** Drops undefined values, so absent query parameters stay absent for zod's defaults. */
function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}

/**
 * Builds the Hono app of a node.
 * @param deps service context, access policy, metrics, logger and the MCP server deps
 * @returns the app; serve it with serveHttp or call `app.request()` in process
 * @example
 * const app = createHttpApp({ ctx, access, metrics, logger, mcp: { ctx, logger, observe: metrics.observeTool } })
 * const server = await serveHttp({ host: '127.0.0.1', port: 8787, app })
 */
export function createHttpApp(deps: HttpAppDeps): Hono<Env> {
  const { ctx, access, metrics, logger } = deps;
  const mcpDeps: BuildServerDeps = { ...deps.mcp, observe: deps.mcp.observe ?? metrics.observeTool };
  const app = new Hono<Env>();
  const limiter = createRateLimiter(deps.rateLimitPerMinute ?? 0);
  const authFailures = createAuthFailureLimiter();

  /**
   * Authorizes a request for `scope`: an address over its failed authentications is refused before its
   * token is even compared, and each refused token counts against the address it came from.
   */
  const guard = (c: Context, scope: Scope): Grant =>
    guardRequest((name) => c.req.header(name), clientAddress(c as Ctx), scope);
  const guardRequest = (header: (name: string) => string | undefined, address: string, scope: Scope): Grant => {
    const request = accessRequest(header);
    const presented = request.authorization != null && access.tokens.length > 0;
    if (presented) authFailures.check(address);
    try {
      return authorize(access, request, scope);
    } catch (error) {
      if (presented && error instanceof AccessError && error.code === 'unauthorized') authFailures.fail(address);
      throw error;
    }
  };

  /** Takes one request from the caller's bucket: tokens by name, anonymous and local callers by address. */
  const takeRequest = ({ principal }: Grant, address: string) =>
    limiter.take(principal === 'anonymous' || principal === 'local' ? `ip:${address}` : `token:${principal}`);

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

  /** The answer to an error a route threw (also the fast search path's, fastSearch.ts). */
  const errorResponse = (error: unknown, method: string, route: string, gone: boolean): Response => {
    const problem = problemFor(error);
    if (problem) {
      const headers: Record<string, string> = {};
      if (error instanceof AccessError && error.challenge) headers['www-authenticate'] = error.challenge;
      if (error instanceof RateLimitedError) headers['retry-after'] = String(error.retryAfterSeconds);
      return problemResponse(problem, problem.status, headers);
    }
    if (gone) {
      logger.info({ method, route, reason: String((error as Error)?.message) }, 'client disconnected');
      return problemResponse(internalProblem(), 500);
    }
    // Security: unknown errors are logged in full here and answered generically, so no stack, path or
    // configuration detail reaches the client.
    logger.error(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error), method, route },
      'request failed',
    );
    return problemResponse(internalProblem(), 500);
  };
  app.onError((error, c) => errorResponse(error, c.req.method, c.get('route') ?? 'unmatched', clientGone(c)));

  mountConsole(app, { ...deps, guard });

  app.notFound((c) =>
    problemResponse(
      OAUTH_PATHS.test(c.req.path)
        ? noOAuthProblem(c.req.method, c.req.path)
        : notFoundProblem(c.req.method, c.req.path),
      404,
    ),
  );

  /** Registers a route with its template (for metrics) and the scope it needs (null: unguarded probe). */
  const route = (
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    scope: Scope | null,
    handler: (c: Ctx) => Promise<Response> | Response,
  ) => {
    app.on(method, path, async (c) => {
      c.set('route', path);
      // The real reason first: without a signer no token could make a write succeed.
      if (scope === 'write' && !ctx.writer) throw new SignerNotConfiguredError();
      if (scope !== null) {
        // Security: every guarded route authorizes before reading its body or touching the service.
        c.set('grant', guard(c, scope));
        takeRequest(c.get('grant'), clientAddress(c));
      }
      return handler(c);
    });
  };

  route('GET', '/healthz', null, (c) => c.json({ status: 'ok' }));
  route('GET', '/readyz', null, (c) => {
    const { syncState, asOfBlock, headBlock } = ctx.indexer;
    const body = {
      ready: syncState === 'live',
      sync_state: syncState,
      as_of_block: asOfBlock ?? null,
      head_block: headBlock ?? null,
    };
    return c.json(body, body.ready ? 200 : 503);
  });
  route('GET', '/metrics', 'read', async (c) =>
    c.body(await metrics.render(), 200, { 'content-type': metrics.contentType }),
  );

  route('GET', '/v1/status', 'read', async (c) => c.json(await status(ctx)));
  route('GET', '/v1/collections', 'read', async (c) =>
    c.json(
      await listCollections(
        ctx,
        defined({
          min_block: queryInteger(c.req.query('min_block')),
          limit: queryInteger(c.req.query('limit')),
          cursor: c.req.query('cursor'),
        }),
      ),
    ),
  );
  route('GET', '/v1/collections/:c', 'read', async (c) =>
    c.json(
      await getCollection(
        ctx,
        defined({ collection: pathParam(c, 'c'), min_block: queryInteger(c.req.query('min_block')) }),
      ),
    ),
  );
  route('POST', '/v1/collections/:c/search', 'read', async (c) =>
    c.json(await search(ctx, withCollection(await jsonBody(c), pathParam(c, 'c')))),
  );
  fastPaths.set(
    app,
    fastSearch({
      route: '/v1/collections/:c/search',
      answer: async (header, address, collection, body) => {
        takeRequest(guardRequest(header, address, 'read'), address);
        return JSON.stringify(await search(ctx, withCollection(jsonObject(await body()), collection)));
      },
      errorResponse,
      observe: metrics.observeHttp,
    }),
  );
  route('POST', '/v1/collections/:c/count', 'read', async (c) =>
    c.json(await count(ctx, withCollection(await jsonBody(c), pathParam(c, 'c')))),
  );
  route('GET', '/v1/collections/:c/entities/:ref', 'read', async (c) =>
    c.json(
      await get(
        ctx,
        defined({
          collection: pathParam(c, 'c'),
          ref: pathParam(c, 'ref'),
          include_document: queryBoolean(c.req.query('include_document')),
          min_block: queryInteger(c.req.query('min_block')),
        }),
      ),
    ),
  );

  route('GET', '/v1/collections/:c/entities', 'read', async (c) =>
    c.json(
      await listEntities(
        ctx,
        defined({
          collection: pathParam(c, 'c'),
          where: c.req.query('where'),
          filter: queryJson(c.req.query('filter'), 'filter'),
          limit: queryInteger(c.req.query('limit')),
          cursor: c.req.query('cursor'),
          order: c.req.query('order'),
          include_document: queryBoolean(c.req.query('include_document')),
          min_block: queryInteger(c.req.query('min_block')),
        }),
      ),
    ),
  );

  // Writes: the write scope is checked first (route guard), then the service refuses without a signer.
  route('POST', '/v1/collections', 'write', async (c) => c.json(await createCollection(ctx, await writeBody(c))));
  route('POST', '/v1/collections/:c/entities', 'write', async (c) =>
    c.json(await upsert(ctx, withCollection(await writeBody(c), pathParam(c, 'c')))),
  );
  route('DELETE', '/v1/collections/:c/entities/:ref', 'write', async (c) =>
    c.json(
      await deleteEntities(
        ctx,
        defined({
          collection: pathParam(c, 'c'),
          refs: [pathParam(c, 'ref')],
          // A dry run unless dry_run=false, like every other delete (the tool, the delete by filter).
          dry_run: queryBoolean(c.req.query('dry_run')),
          wait: c.req.query('wait'),
        }),
      ),
    ),
  );

  // Delete by filter (or several refs): the arguments of arkivector_delete as query parameters, dry run
  // unless dry_run=false, like the tool.
  route('DELETE', '/v1/collections/:c/entities', 'write', async (c) => {
    const refs = c.req.queries('ref');
    return c.json(
      await deleteEntities(
        ctx,
        defined({
          collection: pathParam(c, 'c'),
          refs,
          where: c.req.query('where'),
          filter: queryJson(c.req.query('filter'), 'filter'),
          dry_run: queryBoolean(c.req.query('dry_run')),
          wait: c.req.query('wait'),
        }),
      ),
    );
  });

  route('POST', '/mcp', 'read', async (c) => {
    const grant = c.get('grant');
    // Peek at the JSON-RPC body: a call carrying a progressToken gets an SSE answer so its progress
    // notifications can be streamed; everything else gets one plain JSON answer (friendlier for curl).
    const bytes = await readBody(c.req.raw, MAX_REQUEST_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      body = bytes.byteLength ? '\u0000not json' : undefined; // the transport answers -32700 for it
    }
    const wantsProgress = (Array.isArray(body) ? body : [body]).some(
      (m) =>
        (m as { params?: { _meta?: { progressToken?: unknown } } } | undefined)?.params?._meta?.progressToken !==
        undefined,
    );
    // tools/list may vary with the authorization: write tools only for callers holding the write scope.
    const server = buildServer({ ...mcpDeps, canWrite: grant.scopes.has('write') });
    // Stateless: a fresh server and transport per request.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsProgress,
      maxRequestBodySize: MAX_REQUEST_BYTES,
    });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await transport.close().catch(() => {});
      await server.close().catch(() => {});
    };
    try {
      await server.connect(transport);
      // Security: tools see who called and with which scopes, never the bearer secret.
      const response = await transport.handleRequest(c.req.raw, {
        parsedBody: body,
        authInfo: { token: '', clientId: grant.principal, scopes: [...grant.scopes] },
      });
      if (!wantsProgress || !response.body) {
        // A JSON answer is complete once handleRequest resolves, so closing cannot cut it short. Closing
        // after the pending microtasks lets the SDK retire the call's abort controller first; closed at
        // once, it aborts it, and the abort's DOMException costs about 3 % of a call's CPU.
        setImmediate(() => void close());
        return response;
      }
      // An SSE answer is still streaming: close when it ends (or the client goes away).
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>({ flush: () => void close() });
      response.body.pipeTo(writable).catch(() => void close());
      return new Response(readable, { status: response.status, headers: response.headers });
    } catch (error) {
      await close();
      logger.error(
        { error: error instanceof Error ? (error.stack ?? error.message) : String(error), route: '/mcp' },
        'mcp request failed',
      );
      // Nothing has been sent yet: the Response is only returned after handleRequest resolves.
      return c.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }, 500);
    }
  });
  // --compat kuradb: KuraDB's REST API beside ours, under the same access rules.
  if (deps.mcp.compat === 'kuradb')
    for (const { path, scope, handler } of kuradbRoutes(ctx, logger)) route('GET', path, scope, handler);

  const mcpMethodNotAllowed = (c: Ctx) =>
    c.json(
      {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Method not allowed: this stateless server has no sessions or SSE streams; POST to /mcp',
        },
        id: null,
      },
      405,
      { allow: 'POST' },
    );
  route('GET', '/mcp', null, mcpMethodNotAllowed);
  route('DELETE', '/mcp', null, mcpMethodNotAllowed);

  return app;
}
