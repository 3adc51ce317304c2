// IEEE-754 binary16 ("halfvec") codec and the vector entity payload of schema v1 (ARCHITECTURE.md §8.2).
// Used by encodeVectorEntity/decodeVectorEntity, the upsert path (encode) and the indexer (decode, hot).
//
// Payload layout:
//   0      u8   format = 1
//   1      u8   element = 1 (binary16)
//   2..3   u16  dim, little-endian
//   4..    dim × binary16, little-endian
//   then   the document, UTF-8, to the end (may be empty)

import { DimensionMismatchError, InvalidArgumentError } from '../errors.ts';
import {
  DIM_MAX,
  DIM_MIN,
  HALF_MAX,
  VECTOR_ELEMENT_BINARY16,
  VECTOR_PAYLOAD_FORMAT,
  VECTOR_PAYLOAD_HEADER_BYTES,
} from '../limits.ts';
import { isWellFormed, utf8Decode, utf8Encode } from './utf8.ts';

/** What to do with a finite value whose magnitude rounds above 65504. */
export type HalfOverflow = 'error' | 'clamp';

export type EncodeHalfOptions = {
  /**
   * `error` (default) refuses the value: silently turning 70000 into 65504 or Infinity would
   * change distances without telling anyone. `clamp` saturates to ±65504 for callers that accept that.
   */
  overflow?: HalfOverflow;
};

// Values at or above this magnitude round (to nearest, ties to even) past 65504, i.e. to Infinity.
const HALF_OVERFLOW_THRESHOLD = 65520;
const TWO_POW_24 = 16777216;
const HALF_MIN_NORMAL = 2 ** -14;

/** binary16 bits → float32 value, for all 65536 patterns (NaN and ±Infinity included; callers check). */
export const HALF_TO_FLOAT32: Float32Array = buildHalfTable();

function buildHalfTable(): Float32Array {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    let v: number;
    if (exp === 0) v = (frac / 1024) * HALF_MIN_NORMAL;
    else if (exp === 0x1f) v = frac === 0 ? Infinity : NaN;
    else v = (1 + frac / 1024) * 2 ** (exp - 15);
    table[h] = sign * v;
  }
  return table;
}

/**
 * Whether binary16 bits encode a finite value (exponent field not all ones).
 * @param bits a 16-bit pattern
 * @returns false for NaN and ±Infinity
 * @example isFiniteHalf(0x7c00) // false (Infinity)
 */
export function isFiniteHalf(bits: number): boolean {
  return (bits & 0x7c00) !== 0x7c00;
}

function roundHalfEven(q: number): number {
  const f = Math.floor(q);
  const d = q - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f + (f & 1);
}

/**
 * Converts a number to binary16 bits, rounding to nearest with ties to even, straight from the
 * float64 value (no float32 step, so no double rounding). -0 keeps its sign; subnormals are produced.
 * @param x a finite number
 * @param options `overflow`: `error` (default) or `clamp`
 * @returns the 16-bit pattern
 * @throws InvalidArgumentError for NaN, ±Infinity, or (with `overflow: 'error'`) |x| that rounds above 65504
 * @example floatToHalfBits(1) // 0x3c00
 */
export function floatToHalfBits(x: number, options: EncodeHalfOptions = {}): number {
  if (!Number.isFinite(x)) throw new InvalidArgumentError(`vector elements must be finite, not ${x}`);
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= HALF_OVERFLOW_THRESHOLD) {
    if (options.overflow === 'clamp') return sign | 0x7bff;
    throw new InvalidArgumentError(`vector element ${x} is outside the binary16 range (±${HALF_MAX})`);
  }
  if (a < HALF_MIN_NORMAL) {
    // Subnormal: value = r × 2^-24. r = 1024 carries into the smallest normal (0x0400) by itself.
    return sign | roundHalfEven(a * TWO_POW_24);
  }
  let e = Math.floor(Math.log2(a));
  // Math.log2 may be off by one next to powers of two; fix so 2^e <= a < 2^(e+1).
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  let r = roundHalfEven((a / 2 ** e - 1) * 1024);
  if (r === 1024) {
    r = 0;
    e++;
  }
  return sign | ((e + 15) << 10) | r;
}

/**
 * Converts binary16 bits to their value (exact in float32 and float64).
 * @param bits a 16-bit pattern
 * @returns the value, NaN or ±Infinity included
 * @example halfBitsToFloat(0x3c00) // 1
 */
export function halfBitsToFloat(bits: number): number {
  return halfToFloat32(bits & 0xffff);
}

// The table has all 65,536 entries, so only a caller bug reaches the throw; the check keeps reads typed.
function halfToFloat32(bits: number): number {
  const value = HALF_TO_FLOAT32[bits];
  if (value === undefined) throw new RangeError(`binary16 bits out of range: ${bits}`);
  return value;
}

function checkDim(dim: number): void {
  if (!Number.isInteger(dim) || dim < DIM_MIN || dim > DIM_MAX) {
    throw new InvalidArgumentError(`dim must be an integer from ${DIM_MIN} to ${DIM_MAX}, not ${dim}`);
  }
}

/**
 * Encodes a vector as little-endian binary16 elements (no header).
 * @param vector the float values (1–4000 of them)
 * @param options `overflow`: `error` (default) or `clamp`
 * @returns `2 × length` bytes
 * @throws InvalidArgumentError for a bad length, non-finite or out-of-range elements
 * @example encodeHalfvec([1, -2]) // Uint8Array [0x00, 0x3c, 0x00, 0xc0]
 */
export function encodeHalfvec(vector: ArrayLike<number>, options: EncodeHalfOptions = {}): Uint8Array {
  checkDim(vector.length);
  const out = new Uint8Array(vector.length * 2);
  writeHalfvec(out, 0, vector, options);
  return out;
}

function writeHalfvec(out: Uint8Array, offset: number, vector: ArrayLike<number>, options: EncodeHalfOptions): void {
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i];
    if (typeof x !== 'number') throw new InvalidArgumentError(`vector element ${i} is not a number`);
    let bits: number;
    try {
      bits = floatToHalfBits(x, options);
    } catch (err) {
      if (err instanceof InvalidArgumentError) {
        throw new InvalidArgumentError(`vector element ${i}: ${err.shortMessage}`);
      }
      throw err;
    }
    out[offset + 2 * i] = bits & 0xff;
    out[offset + 2 * i + 1] = bits >> 8;
  }
}

/**
 * Decodes little-endian binary16 elements with the lookup table, refusing NaN and ±Infinity.
 * @param bytes `2 × dim` bytes
 * @returns the float32 values
 * @throws InvalidArgumentError for an odd length, an empty or oversized vector, or a non-finite element
 * @example decodeHalfvec(new Uint8Array([0x00, 0x3c])) // Float32Array [1]
 */
export function decodeHalfvec(bytes: Uint8Array): Float32Array {
  if (bytes.length % 2 !== 0) throw new InvalidArgumentError(`halfvec length must be even, not ${bytes.length} bytes`);
  checkDim(bytes.length / 2);
  return readHalfvec(bytes, 0, bytes.length / 2);
}

function readHalfvec(bytes: Uint8Array, offset: number, dim: number): Float32Array {
  const out = new Float32Array(dim);
  // One view per vector, none per element; getUint16 throws RangeError rather than read past the end.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < dim; i++) {
    const bits = view.getUint16(offset + 2 * i, true);
    if ((bits & 0x7c00) === 0x7c00) {
      throw new InvalidArgumentError(
        `vector element ${i} is not finite (binary16 0x${bits.toString(16).padStart(4, '0')})`,
      );
    }
    out[i] = halfToFloat32(bits);
  }
  return out;
}

/** What a vector entity payload holds. */
export type VectorPayload = {
  dim: number;
  /** The decoded binary16 values. */
  vector: Float32Array;
  /** The raw element bytes (`2 × dim`, little-endian binary16), a copy independent of the input. */
  halfvec: Uint8Array;
  document: string;
};

/**
 * Builds a vector entity payload (header, binary16 elements, UTF-8 document).
 * @param args.vector the values, rounded to binary16 (ties to even)
 * @param args.document text stored after the elements; may be empty
 * @param options `overflow`: `error` (default) or `clamp`
 * @returns the payload bytes
 * @throws InvalidArgumentError for a dim outside 1–4000, non-finite or out-of-range elements, or a document with lone surrogates
 * @example encodeVectorPayload({ vector: [1, 0, 0, 0], document: 'cat' })
 */
export function encodeVectorPayload(
  { vector, document }: { vector: number[] | Float32Array; document: string },
  options: EncodeHalfOptions = {},
): Uint8Array {
  checkDim(vector.length);
  if (typeof document !== 'string') throw new InvalidArgumentError('document must be a string');
  if (!isWellFormed(document)) throw new InvalidArgumentError('document is not valid unicode (lone surrogate)');
  const doc = utf8Encode(document);
  const dim = vector.length;
  const out = new Uint8Array(VECTOR_PAYLOAD_HEADER_BYTES + 2 * dim + doc.length);
  out[0] = VECTOR_PAYLOAD_FORMAT;
  out[1] = VECTOR_ELEMENT_BINARY16;
  out[2] = dim & 0xff;
  out[3] = dim >> 8;
  writeHalfvec(out, VECTOR_PAYLOAD_HEADER_BYTES, vector, options);
  out.set(doc, VECTOR_PAYLOAD_HEADER_BYTES + 2 * dim);
  return out;
}

/**
 * Parses a vector entity payload. Never returns non-finite values or malformed text.
 * @param bytes the payload
 * @param expectedDim the collection's `dim`, when known
 * @returns `{ dim, vector, halfvec, document }`
 * @throws InvalidArgumentError for a short buffer, unknown format or element byte, dim 0 or above 4000, a non-finite element, invalid UTF-8
 * @throws DimensionMismatchError when the payload's dim is not `expectedDim`
 * @example decodeVectorPayload(encodeVectorPayload({ vector: [1, 2], document: 'x' }), 2).document // 'x'
 */
export function decodeVectorPayload(bytes: Uint8Array, expectedDim?: number): VectorPayload {
  if (!(bytes instanceof Uint8Array)) throw new InvalidArgumentError('payload must be bytes');
  if (bytes.length < VECTOR_PAYLOAD_HEADER_BYTES) {
    throw new InvalidArgumentError(
      `payload is ${bytes.length} bytes, shorter than the ${VECTOR_PAYLOAD_HEADER_BYTES}-byte header`,
    );
  }
  if (bytes[0] !== VECTOR_PAYLOAD_FORMAT)
    throw new InvalidArgumentError(`unknown payload format ${bytes[0]}, expected ${VECTOR_PAYLOAD_FORMAT}`);
  if (bytes[1] !== VECTOR_ELEMENT_BINARY16) {
    throw new InvalidArgumentError(`unknown element type ${bytes[1]}, expected ${VECTOR_ELEMENT_BINARY16} (binary16)`);
  }
  const dim = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint16(2, true);
  checkDim(dim);
  if (expectedDim !== undefined && dim !== expectedDim)
    throw new DimensionMismatchError({ expected: expectedDim, got: dim });
  const end = VECTOR_PAYLOAD_HEADER_BYTES + 2 * dim;
  if (bytes.length < end) {
    throw new InvalidArgumentError(`payload is ${bytes.length} bytes, too short for ${dim} dimensions (${end} bytes)`);
  }
  const vector = readHalfvec(bytes, VECTOR_PAYLOAD_HEADER_BYTES, dim);
  let document: string;
  try {
    document = utf8Decode(bytes.subarray(end));
  } catch {
    throw new InvalidArgumentError('document is not valid utf-8');
  }
  return { dim, vector, halfvec: bytes.slice(VECTOR_PAYLOAD_HEADER_BYTES, end), document };
}
