// Puts the HTTP app on a socket with @hono/node-server. `arkivector serve` and the HTTP tests call it;
// the app itself (routes, access, errors) is in app.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import {
  HTTP_BODY_GRACE_MS,
  HTTP_BODY_MIN_BYTES_PER_S,
  HTTP_CONNECTIONS_CHECK_MS,
  HTTP_CONNECTIONS_PER_ADDRESS_MAX,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_KEEP_ALIVE_TIMEOUT_MS,
  HTTP_LINGER_MAX_BYTES,
  HTTP_LINGER_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_MAX_HEADER_BYTES,
  HTTP_REQUEST_TIMEOUT_MS,
} from '../httpDefault.ts';
import { answerClientErrors } from './clientErrors.ts';
import { guardConnections } from './connectionGuard.ts';
import type { FastPath } from './fastSearch.ts';

export interface HttpServer {
  /** Base URL, e.g. `http://127.0.0.1:8787` or `http://[::1]:8787`. */
  readonly url: string;
  /** The bound port (the ephemeral one when started with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Listens on `host:port` and resolves once the socket is bound (rejects if it cannot bind).
 * @param options.host bind address; IPv6 with or without brackets
 * @param options.port 0 picks a free port
 * @param options.app the app of createHttpApp
 * @example const server = await serveHttp({ host: '127.0.0.1', port: 0, app }); await fetch(`${server.url}/healthz`)
 */
export async function serveHttp(options: {
  host: string;
  port: number;
  // biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
  app: Pick<Hono<any>, 'fetch'> & { fastPath?: FastPath };
  /** Tests shrink the limits; the node uses the documented defaults (src/httpDefault.ts). */
  maxConnections?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  checkIntervalMs?: number;
  maxConnectionsPerAddress?: number;
  bodyMinBytesPerS?: number;
  bodyGraceMs?: number;
}): Promise<HttpServer> {
  const hostname =
    options.host.startsWith('[') && options.host.endsWith(']') ? options.host.slice(1, -1) : options.host;
  // The app's fast path (the search route, fastSearch.ts) sees each request first.
  const fast = options.app.fastPath;
  const server = serve({
    fetch: options.app.fetch,
    ...(fast && {
      createServer: ((serverOptions: object, listener: (req: IncomingMessage, res: ServerResponse) => void) =>
        createServer(serverOptions, (req, res) => {
          if (!fast(req, res)) listener(req, res);
        })) as typeof createServer,
    }),
    hostname,
    port: options.port,
    serverOptions: {
      headersTimeout: options.headersTimeoutMs ?? HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: options.requestTimeoutMs ?? HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: options.checkIntervalMs ?? HTTP_CONNECTIONS_CHECK_MS,
      keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderSize: HTTP_MAX_HEADER_BYTES,
    },
  }) as Server;
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_TIMEOUT_MS;
  guardConnections(server, {
    max: options.maxConnections ?? HTTP_MAX_CONNECTIONS,
    perAddress: options.maxConnectionsPerAddress ?? HTTP_CONNECTIONS_PER_ADDRESS_MAX,
    bodyMinBytesPerS: options.bodyMinBytesPerS ?? HTTP_BODY_MIN_BYTES_PER_S,
    bodyGraceMs: options.bodyGraceMs ?? HTTP_BODY_GRACE_MS,
    checkMs: options.checkIntervalMs ?? HTTP_CONNECTIONS_CHECK_MS,
  });
  answerClientErrors(server, { lingerMs: HTTP_LINGER_MS, lingerBytes: HTTP_LINGER_MAX_BYTES });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets of clients would hold close() open until they time out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
