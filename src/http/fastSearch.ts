// The REST search route (`POST /v1/collections/:c/search`) answered straight from Node's request and
// response, without building the web Request, Hono context and Response around them: work the main
// thread would otherwise do for every search (docs/benchmarks.md). It takes only plain requests, each
// header the route reads present at most once with a plain value, a Content-Length and a plain path, and
// then answers exactly as the Hono route would, through the same guard, limiter, service call and error
// renderer (app.ts passes them in); any other request goes to the Hono app unchanged.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { COLLECTION_NAME_REGEX } from '../collections/index.ts';
import { MAX_REQUEST_BYTES } from '../service/index.ts';
import { PROXY_HEADERS } from './auth.ts';
import type { HttpSample } from './metrics.ts';

/** Answers the request and returns true, or returns false without touching it (the app answers). */
export type FastPath = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

const SEARCH_PATH = /^\/v1\/collections\/([^/?#%\\]+)\/search$/;
/** The headers the route reads (access, then the body's length); each must come at most once. */
const READ_HEADERS = new Set([
  'authorization',
  'origin',
  'host',
  'x-forwarded-host',
  ...PROXY_HEADERS,
  'content-length',
  'transfer-encoding',
]);
/** A value the web Headers return unchanged: visible ASCII, inner spaces only. */
const PLAIN_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** A Host @hono/node-server builds the request's URL from without another check. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

export interface FastSearchDeps {
  /** The route template, for metrics. */
  route: string;
  /**
   * The answer's JSON: authorizes (header reads like the web Headers'), reads the body through `body`,
   * searches. @throws what the Hono route throws, for `errorResponse`
   */
  answer(
    header: (name: string) => string | undefined,
    address: string,
    collection: string,
    body: () => Promise<Uint8Array>,
  ): Promise<string>;
  errorResponse(error: unknown, method: string, route: string, gone: boolean): Response;
  observe(sample: HttpSample): void;
}

/**
 * The fast path of the search route.
 * @example const fastPath = fastSearch({ route, answer, errorResponse, observe: metrics.observeHttp })
 */
export function fastSearch(deps: FastSearchDeps): FastPath {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.httpVersionMajor !== 1) return false;
    const path = SEARCH_PATH.exec(incoming.url ?? '');
    const collection = path?.[1];
    if (collection === undefined || !COLLECTION_NAME_REGEX.test(collection)) return false;
    const headers = readHeaders(incoming.rawHeaders);
    if (headers === undefined) return false;
    const length = headers.get('content-length');
    if (length === undefined || !/^\d{1,15}$/.test(length) || Number(length) > MAX_REQUEST_BYTES) return false;
    if (headers.has('transfer-encoding')) return false;
    const host = headers.get('host');
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    void serve(deps, incoming, outgoing, headers, collection);
    return true;
  };
}

/** The headers the route reads, or undefined when one comes twice or with an unusual value. */
function readHeaders(raw: readonly string[]): Map<string, string> | undefined {
  const headers = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (!READ_HEADERS.has(name)) continue;
    const value = raw[i + 1] as string;
    if (headers.has(name) || !PLAIN_VALUE.test(value)) return undefined;
    headers.set(name, value);
  }
  return headers;
}

async function serve(
  deps: FastSearchDeps,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  headers: Map<string, string>,
  collection: string,
): Promise<void> {
  const started = performance.now();
  let status = 500;
  try {
    let body: string;
    let type = 'application/json';
    let extra: Record<string, string> | undefined;
    try {
      body = await deps.answer(
        (name) => headers.get(name),
        incoming.socket?.remoteAddress ?? 'unknown',
        collection,
        () => readIncoming(incoming),
      );
      status = 200;
    } catch (error) {
      const gone = incoming.destroyed || incoming.socket?.destroyed === true;
      const response = deps.errorResponse(error, 'POST', deps.route, gone);
      status = response.status;
      body = await response.text();
      type = response.headers.get('content-type') ?? type;
      extra = {};
      for (const [name, value] of response.headers) if (name !== 'content-type') extra[name] = value;
    }
    outgoing.writeHead(status, { 'Content-Type': type, ...extra, 'Content-Length': Buffer.byteLength(body) });
    outgoing.end(body);
  } catch {
    // The socket went away while answering: nothing is left to tell anyone.
    outgoing.destroy();
  } finally {
    deps.observe({ method: 'POST', route: deps.route, status, seconds: (performance.now() - started) / 1000 });
  }
}

/** The request's body (its Content-Length was checked); rejects when the client goes away first. */
function readIncoming(incoming: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    incoming.once('error', reject);
    incoming.once('close', () => {
      if (!incoming.complete) reject(new Error('the client closed the connection before the body ended'));
    });
  });
}
