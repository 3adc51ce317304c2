// MCP over streamable HTTP on /mcp: stateless; GET and DELETE (sessions, SSE streams) are answered 405.
// A plain tools/call (tools/plainCall.ts: one request, no progress token, the usual headers) is answered
// by the node's tool caller for the caller's scopes, built once; every other POST gets a fresh SDK server
// and transport of its own, so nothing of one request (its ids, progress token, client info) is seen by
// another.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { plainAnswer, plainToolCall } from '../../../tools/plainCall.ts';
import { type BuildServerDeps, buildServer, type ToolCaller, toolCaller } from '../../../tools/server.ts';
import { MAX_REQUEST_BYTES } from '../../service/index.ts';
import { readBody } from '../body.ts';
import type { Ctx, RouteDefinition, RouteDeps } from '../types.ts';

const decoder = new TextDecoder();

/** The tool callers of a node: [without, with] the write scope. A caller holds nothing per call. */
const callers = new WeakMap<BuildServerDeps, readonly [ToolCaller, ToolCaller]>();
function callerFor(mcp: BuildServerDeps, canWrite: boolean): ToolCaller {
  let pair = callers.get(mcp);
  if (!pair) {
    pair = [toolCaller({ ...mcp, canWrite: false }), toolCaller({ ...mcp, canWrite: true })];
    callers.set(mcp, pair);
  }
  return pair[canWrite ? 1 : 0];
}

async function postMcp(c: Ctx, { logger, mcp }: RouteDeps): Promise<Response> {
  const grant = c.get('grant');
  const bytes = await readBody(c.req.raw, MAX_REQUEST_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bytes));
  } catch {
    body = bytes.byteLength ? '\u0000not json' : undefined; // the transport answers -32700 for it
  }
  const canWrite = grant.scopes.has('write');
  const plain = plainToolCall(body, {
    accept: c.req.header('accept'),
    contentType: c.req.header('content-type'),
    protocolVersion: c.req.header('mcp-protocol-version'),
  });
  const caller = plain && callerFor(mcp, canWrite);
  if (plain && caller?.serves(plain.name)) {
    const answer = plainAnswer(plain, await caller.call(plain.name, plain.args));
    return c.body(answer, 200, { 'content-type': 'application/json' });
  }
  // Peek at the JSON-RPC body: a call carrying a progressToken gets an SSE answer so its progress
  // notifications can be streamed; everything else gets one plain JSON answer (friendlier for curl).
  const wantsProgress = (Array.isArray(body) ? body : [body]).some(
    (m) =>
      (m as { params?: { _meta?: { progressToken?: unknown } } } | undefined)?.params?._meta?.progressToken !==
      undefined,
  );
  // tools/list may vary with the authorization: write tools only for callers holding the write scope.
  const server = buildServer({ ...mcp, canWrite });
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
      // once, it aborts it, and the abort's DOMException is a cost paid on every call.
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
}

const methodNotAllowed = (c: Ctx) =>
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

export const MCP_POST_ROUTE: RouteDefinition = { method: 'POST', path: '/mcp', scope: 'read', handler: postMcp };
export const MCP_OTHER_ROUTES: readonly RouteDefinition[] = [
  { method: 'GET', path: '/mcp', scope: null, handler: methodNotAllowed },
  { method: 'DELETE', path: '/mcp', scope: null, handler: methodNotAllowed },
];
