// Errors thrown by the schema v1 codecs in src/collections/. The service layer catches them and renders
// them as problem objects (DESIGN.md §8); decodeVectorEntity turns them into `{ ok: false, reason }`.

/** The DESIGN.md §8 codes the codecs can raise. */
export type CodecErrorCode = 'invalid_argument' | 'dimension_mismatch'

/** One problem found while validating a value (a zod issue, flattened). */
export type CodecIssue = { path: string; message: string }

/**
 * Base of every codec error. Same fields as the service's `ArkivectorError`
 * (`code`, `status`, `shortMessage`, `details`, `meta`) so it can be rendered without translation.
 */
export class CodecError extends Error {
  override name = 'CodecError'
  readonly code: CodecErrorCode
  readonly status: number
  readonly shortMessage: string
  readonly details: string | undefined
  readonly meta: Record<string, unknown>

  constructor(
    code: CodecErrorCode,
    shortMessage: string,
    options: { details?: string; meta?: Record<string, unknown> } = {},
  ) {
    super(shortMessage)
    this.code = code
    this.status = 400
    this.shortMessage = shortMessage
    this.details = options.details
    this.meta = options.meta ?? {}
  }
}

/** `invalid_argument`: a value breaks the schema. `errors` lists every issue when several were found. */
export class InvalidArgumentError extends CodecError {
  override name = 'InvalidArgumentError'
  readonly errors: CodecIssue[]

  constructor(shortMessage: string, errors: CodecIssue[] = []) {
    super('invalid_argument', shortMessage, { meta: errors.length > 0 ? { errors } : {} })
    this.errors = errors
  }
}

/** `dimension_mismatch`: a vector's length is not the collection's `dim`. Message: `expected 384 dimensions, not 512`. */
export class DimensionMismatchError extends CodecError {
  override name = 'DimensionMismatchError'
  readonly expected: number
  readonly got: number

  constructor({ expected, got }: { expected: number; got: number }) {
    super('dimension_mismatch', `expected ${expected} dimensions, not ${got}`, { meta: { expected, got } })
    this.expected = expected
    this.got = got
  }
}
