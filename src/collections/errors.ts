// Errors thrown by the schema v1 codecs in src/collections/. The service layer catches them and renders
// them as problem objects (README, "Errors"); decodeVectorEntity turns them into `{ ok: false, reason }`.
import { ArkivectorError } from '../errors.ts';

/** The codes (README, "Errors") the codecs can raise. */
export type CodecErrorCode = 'invalid_argument' | 'dimension_mismatch';

/** One problem found while validating a value (a zod issue, flattened). */
export type CodecIssue = { path: string; message: string };

/** Base of every codec error: an ArkivectorError limited to the codes the codecs raise. */
export class CodecError extends ArkivectorError {
  override name = 'CodecError';
  declare readonly code: CodecErrorCode;

  constructor(
    code: CodecErrorCode,
    shortMessage: string,
    options: { details?: string; meta?: Record<string, unknown> } = {},
  ) {
    super(code, shortMessage, options);
  }
}

/** `invalid_argument`: a value breaks the schema. `errors` lists every issue when several were found. */
export class InvalidArgumentError extends CodecError {
  override name = 'InvalidArgumentError';
  readonly errors: CodecIssue[];

  constructor(shortMessage: string, errors: CodecIssue[] = []) {
    super('invalid_argument', shortMessage, { meta: errors.length > 0 ? { errors } : {} });
    this.errors = errors;
  }
}

/** `dimension_mismatch`: a vector's length is not the collection's `dim`. Message: `expected 384 dimensions, not 512`. */
export class DimensionMismatchError extends CodecError {
  override name = 'DimensionMismatchError';
  readonly expected: number;
  readonly got: number;

  constructor({ expected, got }: { expected: number; got: number }) {
    super('dimension_mismatch', `expected ${expected} dimensions, not ${got}`, { meta: { expected, got } });
    this.expected = expected;
    this.got = got;
  }
}
