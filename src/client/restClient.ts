// A client of a running gateway's REST API (`/v1/…`), for the shell commands (and a later `ingest`).
// It tells apart the two ways a call fails: the gateway answered with a problem (GatewayProblemError,
// a decision the caller may act on) and no arkivector gateway answered at all (GatewayUnreachableError).
// The token travels only in the Authorization header and never appears in an error.
import { fetch } from 'undici';
import { redactUrl } from '../redactUrl.ts';
import type { Problem } from '../errors.ts';
import { readBounded } from '../readBounded.ts';

/** How long one request may take; an upsert waits for its block to be indexed, so this is generous. */
export const CLIENT_TIMEOUT_MS = 120_000;
/** Largest answer read from the gateway (a search answer with 50 full documents is far below). */
export const CLIENT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class GatewayProblemError extends Error {
  override name = 'GatewayProblemError';
  constructor(readonly problem: Problem) {
    super(`${problem.code} (${problem.status}): ${problem.detail}`);
  }
}

export class GatewayUnreachableError extends Error {
  override name = 'GatewayUnreachableError';
}

export interface RestClientOptions {
  /** Base URL of the gateway, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** Bearer token (ARKIVECTOR_TOKEN). */
  token?: string;
  timeoutMs?: number;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are the REST bodies of docs/rest.md, passed through
type Json = any;

export class RestClient {
  readonly #base: URL;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  /** The gateway's URL without credentials or path, for messages. */
  readonly safeUrl: string;

  constructor(options: RestClientOptions) {
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new TypeError(`--url must be an http(s) URL, not ${JSON.stringify(options.url)}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new TypeError(`--url must be an http(s) URL, not ${base.protocol}`);
    if (base.username || base.password)
      throw new TypeError('put the token in ARKIVECTOR_TOKEN, not in --url (the gateway takes bearer tokens)');
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.#base = base;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? CLIENT_TIMEOUT_MS;
    this.safeUrl = redactUrl(base.toString());
  }

  /** `GET /v1/status`: the node's sync state and its signer's address (null on a read-only node). */
  status(): Promise<Json> {
    return this.#call('GET', 'v1/status');
  }

  /** One page of `GET /v1/collections` (by name; `cursor` is the previous page's `next_cursor`). */
  listCollections(minBlock?: number, page: { limit?: number; cursor?: string } = {}): Promise<Json> {
    return this.#call('GET', `v1/collections${query({ min_block: minBlock, ...page })}`);
  }

  getCollection(name: string, minBlock?: number): Promise<Json> {
    return this.#call('GET', `v1/collections/${encodeURIComponent(name)}${query({ min_block: minBlock })}`);
  }

  createCollection(definition: Record<string, unknown>): Promise<Json> {
    return this.#call('POST', 'v1/collections', definition);
  }

  upsert(collection: string, body: { entities: unknown[]; wait?: string }): Promise<Json> {
    return this.#call('POST', `v1/collections/${encodeURIComponent(collection)}/entities`, body);
  }

  search(collection: string, body: Record<string, unknown>): Promise<Json> {
    return this.#call('POST', `v1/collections/${encodeURIComponent(collection)}/search`, body);
  }

  /** One page of `GET /v1/collections/{c}/entities` (`filter` is sent as JSON text). */
  listEntities(
    collection: string,
    params: {
      where?: string;
      filter?: unknown;
      limit?: number;
      cursor?: string;
      order?: string;
      include_document?: boolean;
      min_block?: number;
    },
  ): Promise<Json> {
    return this.#call(
      'GET',
      `v1/collections/${encodeURIComponent(collection)}/entities${query({
        ...params,
        filter: params.filter === undefined ? undefined : JSON.stringify(params.filter),
        include_document: params.include_document === undefined ? undefined : String(params.include_document),
      })}`,
    );
  }

  /** Delete by filter (`DELETE /v1/collections/{c}/entities`); a dry run unless `dry_run` is false. */
  deleteWhere(
    collection: string,
    params: { where?: string; filter?: unknown; dry_run: boolean; wait?: string },
  ): Promise<Json> {
    return this.#call(
      'DELETE',
      `v1/collections/${encodeURIComponent(collection)}/entities${query({
        where: params.where,
        filter: params.filter === undefined ? undefined : JSON.stringify(params.filter),
        dry_run: String(params.dry_run),
        wait: params.wait,
      })}`,
    );
  }

  count(collection: string, body: Record<string, unknown>): Promise<Json> {
    return this.#call('POST', `v1/collections/${encodeURIComponent(collection)}/count`, body);
  }

  async #call(method: string, path: string, body?: unknown): Promise<Json> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let status: number;
    let text: string;
    try {
      const response = await fetch(new URL(path, this.#base), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      status = response.status;
      text = await readBounded(
        response.body,
        CLIENT_MAX_RESPONSE_BYTES,
        (limit) => new Error(`answer larger than ${limit} bytes`),
      );
    } catch (error) {
      const name = (error as Error).name;
      const why = name === 'TimeoutError' ? `no answer within ${this.#timeoutMs / 1000} s` : causeOf(error);
      throw new GatewayUnreachableError(`cannot reach the gateway at ${this.safeUrl}: ${why}`);
    }
    let parsed: Json;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new GatewayUnreachableError(
        `${this.safeUrl} answered HTTP ${status} with something that is not JSON: is it an arkivector gateway?`,
      );
    }
    if (status >= 200 && status < 300) return parsed;
    if (typeof parsed?.code === 'string' && typeof parsed?.detail === 'string')
      throw new GatewayProblemError({ ...parsed, status: parsed.status ?? status });
    throw new GatewayUnreachableError(
      `${this.safeUrl} answered HTTP ${status} without a problem object: is it an arkivector gateway?`,
    );
  }
}

function query(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string | number][];
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)]))}` : '';
}

/** The useful part of a fetch failure: `ECONNREFUSED`, `bad port`… rather than undici's "fetch failed". */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
