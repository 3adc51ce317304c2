// The gateway's HTTP defaults, in a module of its own so the shell client and the devnet can read them
// without loading the node's configuration or the HTTP stack.
export const HTTP_DEFAULT = '127.0.0.1:8787';

/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) sits right where clients reuse
 * pooled connections: a request sent as the server closed the socket failed with "fetch failed". Clients
 * that honour the `Keep-Alive: timeout=65` header (undici, fetch) retire the socket a second before.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 65_000;
