// Puts the HTTP app on a socket with @hono/node-server. `arkivector serve` and the HTTP tests call it;
// the app itself (routes, access, errors) is in app.ts.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS } from '../httpDefault.ts';

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
  app: Pick<Hono<any>, 'fetch'>;
}): Promise<HttpServer> {
  const hostname =
    options.host.startsWith('[') && options.host.endsWith(']') ? options.host.slice(1, -1) : options.host;
  const server = serve({ fetch: options.app.fetch, hostname, port: options.port }) as Server;
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_TIMEOUT_MS;
  // Node wants the headers deadline above the keep-alive one, or it may close a reused socket early.
  server.headersTimeout = HTTP_KEEP_ALIVE_TIMEOUT_MS + 1000;
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
