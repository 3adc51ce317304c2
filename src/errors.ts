// The one error base of arkivector (viem's BaseError pattern): every failure a caller can act on is an
// ArkivectorError with a stable `code` from the README's "Errors", an HTTP status, a short factual message and
// structured `meta`. src/http renders it as application/problem+json, tools/ as an isError result.

/** Every code of the README's "Errors", one closed union. */
export type ErrorCode =
  | 'invalid_argument'
  | 'dimension_mismatch'
  | 'invalid_filter'
  | 'embedder_not_configured'
  | 'embedder_mismatch'
  | 'unauthorized'
  | 'forbidden'
  | 'collection_not_found'
  | 'entity_not_found'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'signer_not_configured'
  | 'tx_failed'
  | 'embedder_unavailable'
  | 'chain_unavailable'
  | 'not_yet_indexed'
  | 'internal';

export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  dimension_mismatch: 400,
  invalid_filter: 400,
  embedder_not_configured: 400,
  embedder_mismatch: 400,
  unauthorized: 401,
  forbidden: 403,
  collection_not_found: 404,
  entity_not_found: 404,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  signer_not_configured: 501,
  tx_failed: 502,
  embedder_unavailable: 502,
  chain_unavailable: 503,
  not_yet_indexed: 503,
  internal: 500,
};

/** Titles for the problem object (RFC 9457 `title`: the same for every occurrence of a code). */
export const ERROR_TITLE: Record<ErrorCode, string> = {
  invalid_argument: 'Invalid argument',
  dimension_mismatch: 'Vector dimension mismatch',
  invalid_filter: 'Invalid filter',
  embedder_not_configured: 'No embedder configured',
  embedder_mismatch: 'Embedder mismatch',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  collection_not_found: 'Collection not found',
  entity_not_found: 'Entity not found',
  not_found: 'Not found',
  conflict: 'Conflict',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Rate limited',
  signer_not_configured: 'No signer configured',
  tx_failed: 'Transaction failed',
  embedder_unavailable: 'Embedder unavailable',
  chain_unavailable: 'Chain unavailable',
  not_yet_indexed: 'Not yet indexed',
  internal: 'Internal error',
};

export class ArkivectorError extends Error {
  override name = 'ArkivectorError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly meta: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    shortMessage: string,
    options: { status?: number; details?: string; meta?: Record<string, unknown> } = {},
  ) {
    super(shortMessage);
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.meta = options.meta ?? {};
  }
}

/** RFC 9457 problem object with arkivector's stable `code` and the error's fields. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  [field: string]: unknown;
}

export function toProblem(error: ArkivectorError): Problem {
  return withIssues({
    type: `https://arkivector.dev/errors/${error.code}`,
    title: ERROR_TITLE[error.code],
    status: error.status,
    detail: error.shortMessage,
    code: error.code,
    ...error.meta,
  });
}

/**
 * Every invalid_argument carries `errors: [{path, message}]` (README, "Errors"), also when it was raised
 * with a message alone (a definition check, a DB-chain bound): then one issue of the whole request, path "".
 */
function withIssues(problem: Problem): Problem {
  if (problem.code !== 'invalid_argument' || Array.isArray(problem.errors)) return problem;
  return { ...problem, errors: [{ path: '', message: problem.detail }] };
}

/**
 * The problem object of any error a caller can act on: an ArkivectorError, or an error of another layer
 * that carries a known `code` and `status` (a copy of this module loaded twice, a wrapped error).
 * @returns undefined for everything else, which the surfaces log and answer as `internal`
 */
export function problemFor(error: unknown): Problem | undefined {
  if (error instanceof ArkivectorError) return toProblem(error);
  const e = error as { code?: unknown; status?: unknown; shortMessage?: unknown; message?: unknown; meta?: unknown };
  if (typeof e !== 'object' || e === null) return undefined;
  if (typeof e.code !== 'string' || !Object.hasOwn(ERROR_STATUS, e.code) || typeof e.status !== 'number')
    return undefined;
  const code = e.code as ErrorCode;
  return withIssues({
    type: `https://arkivector.dev/errors/${code}`,
    title: ERROR_TITLE[code],
    status: e.status,
    detail: String(e.shortMessage ?? e.message ?? ERROR_TITLE[code]),
    code,
    ...(typeof e.meta === 'object' && e.meta !== null ? (e.meta as Record<string, unknown>) : {}),
  });
}

/** What every surface answers for an error it does not know (the details stay in the server log). */
export const internalProblem = (): Problem =>
  toProblem(new ArkivectorError('internal', 'internal error; the server log has the details'));
