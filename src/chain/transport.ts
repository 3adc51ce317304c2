// JSON-RPC over HTTP, the node's one stack for chain reads (the ChainSource) and writes (the signer, as
// viem's custom transport): single calls and batches, bounded retries with backoff, rate limits respected
// (HTTP 429 with Retry-After, JSON-RPC -32005 / -32016), URL credentials sent as Basic auth and an RPC key
// as X-API-KEY, neither ever printed. Callers above (the indexer loop) decide what a persistent failure means; this layer only
// retries briefly.
import { Agent, fetch } from 'undici';
import { redactUrl } from '../redactUrl.ts';

export { redactUrl } from '../redactUrl.ts';

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** The node answered with a JSON-RPC error (not a transport failure). */
export class RpcResponseError extends Error {
  override name = 'RpcResponseError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * The bytes of one JSON-RPC answer (a single call or a whole batch) read at most. The largest answer a
 * node needs is one block with its transactions and receipts: a 30M-gas block of calldata is ~1.9 MB,
 * ~3.8 MB as hex, about twice that with receipts and logs. Batches (50 blocks) and query pages (200
 * entities) can legitimately exceed it: the reads split them (`src/chain/pageWalk.ts`).
 */
export const RPC_ANSWER_MAX_BYTES = 32 * 1024 * 1024;

/** Milliseconds an RPC may take to send its answer's headers, and may pause between two pieces of its body. */
export const RPC_HEADERS_TIMEOUT_MS = 10_000;
export const RPC_BODY_IDLE_TIMEOUT_MS = 10_000;

/** An answer over the size limit: refused while it was read (not retried: the same request gets the same answer). */
export class RpcAnswerTooLargeError extends Error {
  override name = 'RpcAnswerTooLargeError';
  constructor(
    readonly limitBytes: number,
    message: string,
  ) {
    super(message);
  }
}

/** The RPC could not be reached or kept failing; `url` is redacted. */
export class RpcUnavailableError extends Error {
  override name = 'RpcUnavailableError';
}

export interface TransportOptions {
  url: string;
  /** Per-request timeout, headers and body included. */
  timeoutMs?: number;
  /** Bytes of one answer read at most (RPC_ANSWER_MAX_BYTES). */
  maxAnswerBytes?: number;
  /** Attempts per call before RpcUnavailableError (rate limits and network errors retry; JSON-RPC errors do not). */
  attempts?: number;
  /** First backoff delay; doubles per attempt up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** Sent as `X-API-KEY` (public DB-chain endpoints); never logged or part of an error. */
  apiKey?: string;
  /** Called whenever the node answers "rate limited" (HTTP 429, -32016): the follower is throttled, not down. */
  onRateLimit?: (info: { waitMs: number | undefined }) => void;
}

export interface RpcTransport {
  readonly url: string;
  request<T>(method: string, params?: unknown[]): Promise<T>;
  /** Sends calls as one JSON-RPC batch; each entry is the result or an RpcResponseError. */
  batch(calls: readonly RpcCall[]): Promise<(unknown | RpcResponseError)[]>;
  close(): Promise<void>;
}

const RATE_LIMIT_CODES = new Set([-32005, -32016, 429]);
/** The longest Retry-After honoured (a node asking for hours is waited on in these steps). */
const RETRY_AFTER_MAX_MS = 15 * 60_000;

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Retryable extends Error {
  constructor(
    message: string,
    readonly waitMs?: number,
  ) {
    super(message);
  }
}

/**
 * fetch refuses URLs with credentials: split them off into a Basic `authorization` header (some RPC
 * providers put them in the URL).
 * @example urlCredentials('https://u:p@rpc.example/v1') // { endpoint: 'https://rpc.example/v1', authorization: 'Basic dTpw' }
 */
export function urlCredentials(url: string): { endpoint: string; authorization?: string } {
  const target = new URL(url);
  if (!target.username && !target.password) return { endpoint: target.toString() };
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
  target.username = '';
  target.password = '';
  return { endpoint: target.toString(), authorization };
}

export function createHttpTransport(options: TransportOptions): RpcTransport {
  const {
    url,
    timeoutMs = 30_000,
    attempts = 4,
    backoffMs = 200,
    maxBackoffMs = 5_000,
    maxAnswerBytes = RPC_ANSWER_MAX_BYTES,
  } = options;
  // A node that accepts the connection and then says nothing (or stops mid-body) is given up on well
  // before the whole request's timeout, which is sized for a large answer on a slow link.
  const dispatcher = new Agent({
    keepAliveTimeout: 10_000,
    connections: 8,
    headersTimeout: Math.min(timeoutMs, RPC_HEADERS_TIMEOUT_MS),
    bodyTimeout: Math.min(timeoutMs, RPC_BODY_IDLE_TIMEOUT_MS),
  });
  const safeUrl = redactUrl(url);
  const { endpoint, authorization } = urlCredentials(url);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let nextId = 1;
  /** Until when the node asked us to stay quiet (Retry-After): every request of this transport waits. */
  let quietUntil = 0;

  async function post(body: unknown): Promise<unknown> {
    const quiet = quietUntil - Date.now();
    if (quiet > 0) await delay(quiet);
    // A timer of our own, cleared when the answer is read: an AbortSignal.timeout() lives on for the whole
    // timeout after its request ended, holding the request's fetch state (a write daemon polling receipts
    // kept thousands of them).
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      timeoutMs,
    );
    timer.unref();
    try {
      return await answerOf(body, timeout.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  async function answerOf(body: unknown, signal: AbortSignal): Promise<unknown> {
    let response;
    try {
      response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), dispatcher, signal });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new Retryable(`cannot reach ${safeUrl} (${cause})`);
    }
    if (response.status === 429) {
      await response.body?.cancel();
      const waitMs = retryAfterMs(response.headers.get('retry-after'));
      if (waitMs !== undefined) quietUntil = Math.max(quietUntil, Date.now() + Math.min(waitMs, RETRY_AFTER_MAX_MS));
      options.onRateLimit?.({ waitMs });
      throw new Retryable(`${safeUrl} is rate limiting (HTTP 429)`, waitMs);
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      throw new Retryable(`${safeUrl} answered HTTP ${response.status}`);
    }
    const text = await readBounded(response);
    try {
      return JSON.parse(text);
    } catch {
      throw new Retryable(`${safeUrl} answered HTTP ${response.status} with a body that is not JSON`);
    }
  }

  /** The body as text, counted while it streams in: over `maxAnswerBytes`, the connection is dropped. */
  async function readBounded(response: Awaited<ReturnType<typeof fetch>>): Promise<string> {
    const tooLarge = () =>
      new RpcAnswerTooLargeError(maxAnswerBytes, `${safeUrl} answered more than ${maxAnswerBytes} bytes; refused`);
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxAnswerBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    if (!response.body) return '';
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    try {
      for await (const chunk of response.body) {
        bytes += chunk.byteLength;
        if (bytes > maxAnswerBytes) throw tooLarge();
        chunks.push(chunk);
      }
    } catch (error) {
      // Leaving the loop cancels the stream (the socket is closed); a timeout or reset mid-body is an outage.
      if (error instanceof RpcAnswerTooLargeError) throw error;
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new Retryable(`${safeUrl} broke off its answer (${cause})`);
    }
    return Buffer.concat(chunks, bytes).toString('utf8');
  }

  function unwrap(answer: { result?: unknown; error?: { code: number; message: string; data?: unknown } }): unknown {
    if (answer.error) {
      if (RATE_LIMIT_CODES.has(answer.error.code) && /rate|limit|too many/i.test(answer.error.message)) {
        options.onRateLimit?.({ waitMs: undefined });
        throw new Retryable(`${safeUrl} is rate limiting (${answer.error.code})`);
      }
      return new RpcResponseError(answer.error.code, answer.error.message, answer.error.data);
    }
    return answer.result;
  }

  async function withRetries<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (!(error instanceof Retryable)) throw error;
        if (attempt >= attempts) throw new RpcUnavailableError(error.message);
        const delayMs = Math.min(maxBackoffMs, error.waitMs ?? backoffMs * 2 ** (attempt - 1));
        options.onRetry?.({ attempt, delayMs, reason: error.message });
        await delay(delayMs);
      }
    }
  }

  return {
    url,
    async request<T>(method: string, params: unknown[] = []): Promise<T> {
      return withRetries(async () => {
        const answer = (await post({ jsonrpc: '2.0', id: nextId++, method, params })) as Parameters<typeof unwrap>[0];
        const result = unwrap(answer);
        if (result instanceof RpcResponseError) throw result;
        return result as T;
      });
    },
    async batch(calls) {
      if (calls.length === 0) return [];
      return withRetries(async () => {
        const first = nextId;
        nextId += calls.length;
        const answers = await post(
          calls.map((call, i) => ({ jsonrpc: '2.0', id: first + i, method: call.method, params: call.params })),
        );
        if (!Array.isArray(answers)) {
          const single = answers as Parameters<typeof unwrap>[0];
          const result = unwrap(single);
          throw result instanceof RpcResponseError
            ? result
            : new RpcResponseError(-32603, 'batch answered with a single response');
        }
        type Answer = Parameters<typeof unwrap>[0] & { id: number };
        const byId = new Map<number, Answer>((answers as Answer[]).map((a) => [a.id, a]));
        return calls.map((_, i) => {
          const answer = byId.get(first + i);
          return answer ? unwrap(answer) : new RpcResponseError(-32603, 'missing response in batch');
        });
      });
    },
    async close() {
      await dispatcher.close();
    },
  };
}
