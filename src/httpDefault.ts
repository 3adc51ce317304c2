// The gateway's HTTP defaults, in a module of its own so the shell client and the devnet can read them
// without loading the node's configuration or the HTTP stack.
export const HTTP_DEFAULT = '127.0.0.1:8787';

/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) sits right where clients reuse
 * pooled connections: a request sent as the server closed the socket failed with "fetch failed". Clients
 * that honour the `Keep-Alive: timeout=65` header (undici, fetch) retire the socket a second before.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * How long a client may take to send a request's headers, from the moment it connects (or starts the
 * request): a socket that connects and sends nothing, or trickles headers, is closed after it.
 */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000;

/** How long a client may take to send a whole request, body included: a body that never ends is cut. */
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;

/** How often Node checks open connections against the two timeouts above. */
export const HTTP_CONNECTIONS_CHECK_MS = 1_000;

/**
 * Connections open at once. At the cap, a new connection closes the connection that has been idle longest
 * (no request in flight: never sent one, or waiting between keep-alive requests), so idle sockets cannot
 * lock new clients out; only when every connection is busy is the new one refused.
 */
export const HTTP_MAX_CONNECTIONS = 1_000;
