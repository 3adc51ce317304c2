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

/**
 * Connections open at once from one address (an IPv4 address, or an IPv6 /64). At the cap, a new one
 * closes that address's connection idle longest, else its slowest body still arriving, else it is refused.
 */
export const HTTP_CONNECTIONS_PER_ADDRESS_MAX = 256;

/**
 * Slowest a request body may arrive, on average from the request's start, once the grace has passed: a
 * body trickling in slower is cut (the connection is closed). When the node is full, the slowest body
 * still arriving is closed to make room before a new client is refused.
 */
export const HTTP_BODY_MIN_BYTES_PER_S = 1024;
export const HTTP_BODY_GRACE_MS = 5_000;

/** Request line and headers, in bytes (Node's default `maxHeaderSize`, stated here so it is documented). */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024;

/**
 * A request the HTTP parser refuses (431 for headers over Node's 16 KiB, 400 for a malformed one) is
 * answered, then its connection reads and discards what the client still sends for at most this long and
 * this many bytes before closing: closing at once makes the kernel reset the connection under the answer.
 */
export const HTTP_LINGER_MS = 2_000;
export const HTTP_LINGER_MAX_BYTES = 1024 * 1024;
