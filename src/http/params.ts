// What a route reads from the request besides its body: path and query parameters converted for the
// service's zod schemas, and the connection's peer.
import { ArkivectorError } from '../errors.ts';
import type { Ctx } from './types.ts';

// Query strings carry text; the service's zod schemas want numbers and booleans. Only well-formed values
// are converted: anything else reaches zod as the original string and fails there with its path. A number
// is any literal a JSON body could hold (`1e3` is 1000, as in a body), so `1.5` or `1e20` answers the
// bound it breaks ("expected int", "too big"), not "expected number, received string".
const QUERY_NUMBER = /^-?\d{1,64}(\.\d{1,64})?([eE][+-]?\d{1,4})?$/;
export const queryInteger = (value: string | undefined): unknown =>
  value !== undefined && QUERY_NUMBER.test(value) ? Number(value) : value;
export const queryBoolean = (value: string | undefined): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

/** A JSON query parameter (`filter`); text that is not JSON is invalid_argument with its name as path. */
export function queryJson(value: string | undefined, name: string): unknown {
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
export function rejectMalformedEscapes(url: string): void {
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
export const pathParam = (c: Ctx, name: string): string => c.req.param(name) ?? '';

/** Drops undefined values, so absent query parameters stay absent for zod's defaults. */
export function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}

/** The peer address of the connection (@hono/node-server's bindings); `unknown` in process (app.request). */
export function clientAddress(c: Ctx): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/**
 * Whether the client went away (closed or reset its connection) before the answer: reading its body
 * then fails, and that is the client's doing, not a fault of the node.
 */
export function clientGone(c: Ctx): boolean {
  const env = c.env as { incoming?: { destroyed?: boolean; socket?: { destroyed?: boolean } } } | undefined;
  return env?.incoming?.destroyed === true || env?.incoming?.socket?.destroyed === true;
}
