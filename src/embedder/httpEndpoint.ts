// One call to an OpenAI-compatible `POST /embeddings` endpoint, made robust: credentials taken out of the
// URL (fetch refuses them) and sent as Basic auth, a bearer key, a timeout per attempt, bounded retries
// with backoff on 429 (honouring Retry-After), 5xx and connection failures, a bounded answer size, and a
// strict check of the answer's shape. Every failure is EmbedderUnavailableError with its cause and ways out
// (httpFailure.ts); no secret reaches it.
import { setTimeout as sleep } from 'node:timers/promises';
import { fetch } from 'undici';
import { redactUrl } from '../redactUrl.ts';
import { DIM_MAX } from '../collections/limits.ts';
import { EmbedderUnavailableError } from './errors.ts';
import { type EndpointFailureCause, EndpointFailure, endpointWaysOut } from './httpFailure.ts';
import { readBounded } from '../readBounded.ts';

/** Seconds one attempt may take before it is abandoned (and retried). */
export const EMBEDDER_TIMEOUT_MS = 30_000;
/** Attempts per request, the first included. */
export const EMBEDDER_MAX_ATTEMPTS = 4;
/** First backoff; doubles per attempt, with jitter. */
export const EMBEDDER_BACKOFF_MS = 500;
/** Longest wait a `Retry-After` may impose; a longer one fails the request at once. */
export const EMBEDDER_MAX_RETRY_AFTER_MS = 30_000;
/** Largest answer read from the endpoint (64 inputs × 4000 dims fit several times over). */
export const EMBEDDER_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface EmbedderEndpointOptions {
  /** Base URL (`…/v1`) or the full `…/embeddings` URL; may carry `user:password@`. */
  url: string;
  /** Sent as `Authorization: Bearer`; wins over credentials in the URL. */
  apiKey?: string;
  timeoutMs?: number;
  maxAttempts?: number;
  backoffMs?: number;
  onRetry?(info: { attempt: number; delayMs: number; reason: string }): void;
}

export interface EmbedderEndpoint {
  /** The endpoint without credentials or path details, for messages. */
  readonly safeUrl: string;
  /** Embeds `input` (one request); vectors in input order. */
  post(model: string, input: string[]): Promise<number[][]>;
  /** A failure of this endpoint for `model`: the reason after the redacted URL, the cause, the ways out. */
  failure(model: string, cause: EndpointFailureCause, reason: string, upstreamStatus?: number): EndpointFailure;
}

/** A failure worth another attempt: `retryAfterMs` set when the server said how long to wait. */
class Retryable extends Error {
  constructor(
    message: string,
    readonly failure: EndpointFailureCause,
    readonly retryAfterMs?: number,
    readonly upstreamStatus?: number,
  ) {
    super(message);
  }
}

export function embedderEndpoint(options: EmbedderEndpointOptions): EmbedderEndpoint {
  const target = new URL(options.url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new EmbedderUnavailableError(`the embedder URL must be http(s), not ${target.protocol}`);
  const secrets: string[] = [];
  let authorization: string | undefined;
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const password = decodeURIComponent(target.password);
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    if (password) secrets.push(password, target.password);
    target.username = '';
    target.password = '';
  }
  if (options.apiKey) {
    authorization = `Bearer ${options.apiKey}`;
    secrets.push(options.apiKey);
  }
  if (!/\/embeddings\/?$/.test(target.pathname)) target.pathname = `${target.pathname.replace(/\/$/, '')}/embeddings`;
  const endpoint = target.toString();
  const safeUrl = redactUrl(endpoint);
  const timeoutMs = options.timeoutMs ?? EMBEDDER_TIMEOUT_MS;
  const maxAttempts = Math.max(1, options.maxAttempts ?? EMBEDDER_MAX_ATTEMPTS);
  const backoffMs = options.backoffMs ?? EMBEDDER_BACKOFF_MS;
  // Upstream messages are untrusted and may echo what was sent: keep them short and scrub our secrets.
  const scrub = (text: string) => {
    let out = text.slice(0, 300);
    for (const secret of secrets) if (secret) out = out.split(secret).join('***');
    return out;
  };
  const failure = (model: string, cause: EndpointFailureCause, reason: string, upstreamStatus?: number) =>
    new EndpointFailure(
      `the embedder at ${safeUrl} ${reason}`,
      cause,
      endpointWaysOut(safeUrl, model, cause, upstreamStatus),
      upstreamStatus,
    );

  async function attempt(model: string, input: string[]): Promise<number[][]> {
    let response: Awaited<ReturnType<typeof fetch>>;
    let text: string;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ model, input, encoding_format: 'float' }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await readBounded(response.body, EMBEDDER_MAX_RESPONSE_BYTES, (limit) =>
        failure(model, 'bad_answer', `answered more than ${limit} bytes`, response.status),
      );
    } catch (error) {
      if (error instanceof EmbedderUnavailableError) throw error;
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new Retryable(`gave no answer within ${timeoutMs} ms`, 'timeout');
      const { words, cause } = connectionFailure(error);
      throw new Retryable(`cannot be reached (${words})`, cause);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const upstream = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
      const reason = `answered HTTP ${response.status}${typeof upstream === 'string' ? `: ${scrub(upstream)}` : ''}`;
      if (response.status === 429 || response.status >= 500)
        throw new Retryable(reason, 'http_status', retryAfterMs(response.headers.get('retry-after')), response.status);
      throw failure(model, 'http_status', reason, response.status);
    }
    return parseEmbeddings(body, input.length, (cause, why) => failure(model, cause, `answered ${why}`, 200));
  }

  return {
    safeUrl,
    failure,
    async post(model, input) {
      for (let n = 1; ; n++) {
        try {
          return await attempt(model, input);
        } catch (error) {
          if (!(error instanceof Retryable)) throw error;
          const fail = (why: string) => failure(model, error.failure, `${error.message}${why}`, error.upstreamStatus);
          if (n >= maxAttempts) throw fail(` (after ${n} attempts)`);
          if (error.retryAfterMs !== undefined && error.retryAfterMs > EMBEDDER_MAX_RETRY_AFTER_MS)
            throw fail(` (Retry-After ${Math.ceil(error.retryAfterMs / 1000)} s is longer than we wait)`);
          const delayMs = error.retryAfterMs ?? backoffMs * 2 ** (n - 1) * (0.5 + Math.random() / 2);
          options.onRetry?.({ attempt: n, delayMs, reason: error.message });
          await sleep(delayMs);
        }
      }
    },
  };
}

/** Words for the system error codes a refused or broken connection carries. */
const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/**
 * Why fetch could not reach the endpoint, in words and as a cause (`refused` when nothing listens). fetch
 * throws `TypeError: fetch failed` with the reason in `cause`: a system error with a code, an AggregateError
 * of one per address tried (localhost: ::1 and 127.0.0.1), or a plain message ("bad port"). Never the URL:
 * callers name it, redacted.
 */
function connectionFailure(error: unknown): { words: string; cause: EndpointFailureCause } {
  const cause = (error as { cause?: { code?: unknown; message?: unknown; errors?: unknown } }).cause;
  const nested = Array.isArray(cause?.errors) ? (cause.errors as { code?: unknown }[]) : [];
  const code = [cause?.code, ...nested.map((e) => e?.code)].find((c): c is string => typeof c === 'string');
  if (code)
    return { words: CONNECTION_ERRORS[code] ?? code, cause: code === 'ECONNREFUSED' ? 'refused' : 'unreachable' };
  if (typeof cause?.message === 'string' && cause.message)
    return { words: cause.message.slice(0, 100), cause: 'unreachable' };
  return { words: (error as Error).message || (error as Error).name, cause: 'unreachable' };
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** `{data: [{index, embedding}]}` → vectors by `index`; anything else is a bad answer. */
function parseEmbeddings(
  body: unknown,
  count: number,
  fail: (cause: EndpointFailureCause, why: string) => EmbedderUnavailableError,
): number[][] {
  const garbage = (why: string) => fail('bad_answer', `garbage: ${why}`);
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) throw garbage('no data list');
  if (data.length !== count) throw garbage(`${data.length} embeddings for ${count} inputs`);
  const out: number[][] = new Array(count);
  for (const [position, item] of data.entries()) {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    // Servers that omit `index` answer in input order.
    const at = index === undefined ? position : index;
    if (!Number.isInteger(at) || (at as number) < 0 || (at as number) >= count || out[at as number])
      throw garbage(`bad or repeated index ${JSON.stringify(index)}`);
    if (!Array.isArray(embedding) || embedding.length === 0 || embedding.length > DIM_MAX)
      throw garbage(`embedding ${at} is not a list of 1 to ${DIM_MAX} numbers`);
    if (!embedding.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw garbage(`embedding ${at} holds a value that is not a finite number`);
    out[at as number] = embedding as number[];
  }
  const dim = out[0]?.length;
  if (out.some((v) => v.length !== dim)) throw fail('wrong_dimension', 'embeddings of different lengths in one answer');
  return out;
}
