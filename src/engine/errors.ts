// Errors the engine raises on bad filters (`invalid_filter`, README "Errors"). Thrown by the filter
// compiler in src/engine/filter/ and surfaced through CollectionStore.search/count/keywordSearch/
// hybridSearch. Modelled on src/collections/errors.ts: an ArkivectorError subclass (`code`, `status`,
// `shortMessage`, `details`, `meta`) so the service renders it like every other error.

import { ArkivectorError } from '../errors.ts';

/** The error codes (README "Errors") the engine raises itself (dimension errors reuse DimensionMismatchError). */
export type EngineErrorCode = 'invalid_filter';

/** Base of the engine's own errors: an ArkivectorError limited to the engine's codes. */
export class EngineError extends ArkivectorError {
  override name = 'EngineError';
  declare readonly code: EngineErrorCode;

  constructor(
    code: EngineErrorCode,
    shortMessage: string,
    options: { status?: number; details?: string; meta?: Record<string, unknown> } = {},
  ) {
    super(code, shortMessage, options);
  }
}

/**
 * `invalid_filter` (HTTP 400): a `where` string does not parse, a `where`/`filter` names an unknown
 * attribute or operator, or a literal does not fit the attribute's declared type.
 * `position` is the 0-based UTF-16 offset into the `where` text; JSON `filter` errors carry `path`
 * (e.g. `and[1].eq.stars`) instead.
 * @example new InvalidFilterError('unknown attribute colour', { position: 0 })
 */
export class InvalidFilterError extends EngineError {
  override name = 'InvalidFilterError';
  readonly position: number | undefined;
  readonly path: string | undefined;

  constructor(shortMessage: string, options: { position?: number; path?: string; details?: string } = {}) {
    const meta: Record<string, unknown> = {};
    if (options.position !== undefined) meta.position = options.position;
    if (options.path !== undefined) meta.path = options.path;
    super('invalid_filter', shortMessage, { details: options.details, meta });
    this.position = options.position;
    this.path = options.path;
  }
}
