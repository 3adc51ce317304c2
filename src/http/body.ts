// Request bodies: read with a byte limit, parsed as one JSON object, and, for writes, required to say they
// are JSON.
import { ArkivectorError } from '../errors.ts';
import { MAX_REQUEST_BYTES } from '../service/index.ts';
import type { Ctx } from './types.ts';

const tooLarge = (limit: number) =>
  new ArkivectorError('payload_too_large', `request body over ${limit} bytes`, { meta: { limit_bytes: limit } });

/**
 * Reads a request body, refusing more than `limit` bytes as soon as it is exceeded (Content-Length
 * first, then while streaming, since chunked bodies announce no length).
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  // A declared length bounds the body (Node's HTTP parser reads exactly that many bytes), so it can be
  // read whole: @hono/node-server then reads the socket directly instead of building a web Request and
  // a stream per request.
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
export async function jsonBody(c: Ctx): Promise<Record<string, unknown>> {
  return jsonObject(await readBody(c.req.raw, MAX_REQUEST_BYTES));
}

/** The JSON object of a body's bytes (none = `{}`); anything else is invalid_argument. */
export function jsonObject(bytes: Uint8Array): Record<string, unknown> {
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
export async function writeBody(c: Ctx): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type');
  const media = type?.split(';')[0]?.trim().toLowerCase();
  if (media !== 'application/json')
    throw new ArkivectorError('unsupported_media_type', 'a write body must be sent as content-type: application/json', {
      meta: { expected: 'application/json' },
    });
  return jsonBody(c);
}

/** Arguments of a collection route: the body plus the collection from the path (which must agree). */
export function withCollection(body: Record<string, unknown>, collection: string): Record<string, unknown> {
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
