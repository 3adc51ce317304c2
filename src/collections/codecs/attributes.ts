// Typed user attributes of schema v1 (ARCHITECTURE.md §8.2): value <-> Arkiv string/numeric attribute.
// Used by encodeVectorEntity/decodeVectorEntity and by the filter compiler, which encodes literals
// with encodeAttribute so that numeric comparisons on chain match comparisons of the typed values.
//
// | type | kind    | stored value                                                          |
// | str  | string  | the string (at most 1024 UTF-8 bytes)                                 |
// | i32  | numeric | v + 2^31                                                              |
// | uint | numeric | v, 0 … 2^53−1                                                         |
// | f32  | numeric | binary32 bits b: b ^ 0xFFFFFFFF if the sign bit is set, else b | 2^31 |
// | bool | numeric | 0 or 1                                                                |

import { InvalidArgumentError } from '../errors.ts';
import { I32_MAX, I32_MIN, I32_OFFSET, STR_ATTRIBUTE_MAX_BYTES, UINT_ATTRIBUTE_MAX } from '../limits.ts';
import { isWellFormed, utf8ByteLength } from './utf8.ts';

/** The attribute types a collection may declare. */
export const ATTRIBUTE_TYPES = ['str', 'i32', 'uint', 'f32', 'bool'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** A decoded attribute value: `str` → string, `bool` → boolean, the numeric types → number. */
export type AttributeValue = string | number | boolean;

/** An attribute as Arkiv stores it. */
export type StoredAttribute = { kind: 'string'; value: string } | { kind: 'numeric'; value: number };

/** Which Arkiv attribute kind each type is stored as. */
export const ATTRIBUTE_KIND: Readonly<Record<AttributeType, 'string' | 'numeric'>> = {
  str: 'string',
  i32: 'numeric',
  uint: 'numeric',
  f32: 'numeric',
  bool: 'numeric',
};

const F32_MAX = 3.4028234663852886e38;
// One scratch word reinterpreted through a DataView: its getters return numbers, never undefined.
const f32Scratch = new DataView(new ArrayBuffer(4));

/**
 * Whether a string is one of the declared attribute types.
 * @param t any value
 * @returns true for `str`, `i32`, `uint`, `f32`, `bool`
 * @example isAttributeType('i32') // true
 */
export function isAttributeType(t: unknown): t is AttributeType {
  return typeof t === 'string' && (ATTRIBUTE_TYPES as readonly string[]).includes(t);
}

function describe(v: unknown): string {
  if (typeof v === 'string') return v.length > 40 ? `a string of ${v.length} characters` : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return v === null ? 'null' : typeof v;
}

/**
 * Maps a float to the order-preserving uint32 of its binary32 bits.
 * Finite values that round beyond binary32's range are refused rather than turned into ±Infinity;
 * ±Infinity itself is accepted (the design refuses only NaN). -0 is stored as +0 (0x80000000) so that
 * `f32(0)` equality matches both zeros.
 */
function encodeF32(v: number): number {
  if (Number.isNaN(v)) throw new InvalidArgumentError('f32 value must not be NaN');
  if (Number.isFinite(v) && Math.abs(Math.fround(v)) > F32_MAX) {
    throw new InvalidArgumentError(`f32 value ${v} is outside the binary32 range`);
  }
  f32Scratch.setFloat32(0, v);
  // Canonicalize after rounding: tiny negatives such as -1e-50 also round to -0.
  const rounded = f32Scratch.getUint32(0);
  const b = rounded === 0x80000000 ? 0 : rounded;
  return b & 0x80000000 ? (b ^ 0xffffffff) >>> 0 : (b | 0x80000000) >>> 0;
}

/** Inverse of encodeF32. A stored 0x7FFFFFFF (another writer's -0) decodes to -0. */
function decodeF32(stored: number): number {
  const b = stored & 0x80000000 ? (stored & 0x7fffffff) >>> 0 : (stored ^ 0xffffffff) >>> 0;
  f32Scratch.setUint32(0, b);
  const v = f32Scratch.getFloat32(0);
  if (Number.isNaN(v)) throw new InvalidArgumentError(`stored f32 ${stored} is NaN`);
  return v;
}

/**
 * Encodes a typed value as the Arkiv attribute that stores it.
 * `f32` values are rounded to binary32 (to nearest); other types must be exact.
 * @param type the declared type
 * @param value the value: string for `str`, integer for `i32`/`uint`, number for `f32`, boolean for `bool`
 * @returns `{ kind: 'string', value }` or `{ kind: 'numeric', value }`
 * @throws InvalidArgumentError when the value breaks the type
 * @example encodeAttribute('i32', -1) // { kind: 'numeric', value: 2147483647 }
 */
export function encodeAttribute(type: AttributeType, value: unknown): StoredAttribute {
  switch (type) {
    case 'str': {
      if (typeof value !== 'string')
        throw new InvalidArgumentError(`str attribute must be a string, not ${describe(value)}`);
      if (!isWellFormed(value)) throw new InvalidArgumentError('str attribute is not valid unicode (lone surrogate)');
      const n = utf8ByteLength(value);
      if (n > STR_ATTRIBUTE_MAX_BYTES) {
        throw new InvalidArgumentError(`str attribute is ${n} utf-8 bytes, more than ${STR_ATTRIBUTE_MAX_BYTES}`);
      }
      return { kind: 'string', value };
    }
    case 'i32': {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < I32_MIN || value > I32_MAX) {
        throw new InvalidArgumentError(
          `i32 attribute must be an integer from ${I32_MIN} to ${I32_MAX}, not ${describe(value)}`,
        );
      }
      // `+ 0` turns -0 into 0.
      return { kind: 'numeric', value: value + I32_OFFSET + 0 };
    }
    case 'uint': {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > UINT_ATTRIBUTE_MAX) {
        throw new InvalidArgumentError(
          `uint attribute must be an integer from 0 to ${UINT_ATTRIBUTE_MAX}, not ${describe(value)}`,
        );
      }
      return { kind: 'numeric', value: value + 0 };
    }
    case 'f32': {
      if (typeof value !== 'number')
        throw new InvalidArgumentError(`f32 attribute must be a number, not ${describe(value)}`);
      return { kind: 'numeric', value: encodeF32(value) };
    }
    case 'bool': {
      if (typeof value !== 'boolean')
        throw new InvalidArgumentError(`bool attribute must be true or false, not ${describe(value)}`);
      return { kind: 'numeric', value: value ? 1 : 0 };
    }
    default:
      throw new InvalidArgumentError(`unknown attribute type ${describe(type)}`);
  }
}

/**
 * Decodes a stored Arkiv attribute by its declared type. Numeric values may come as bigint (uint64 from
 * the chain); anything outside the type's stored range is refused, never wrapped.
 * @param type the declared type
 * @param stored the attribute as read from the chain
 * @returns the typed value
 * @throws InvalidArgumentError for the wrong kind or a value the type cannot store
 * @example decodeAttribute('i32', { kind: 'numeric', value: 2147483647 }) // -1
 */
export function decodeAttribute(
  type: AttributeType,
  stored: { kind: 'string'; value: string } | { kind: 'numeric'; value: number | bigint },
): AttributeValue {
  const kind = ATTRIBUTE_KIND[type];
  if (kind === undefined) throw new InvalidArgumentError(`unknown attribute type ${describe(type)}`);
  if (stored.kind !== kind)
    throw new InvalidArgumentError(`${type} attribute must be stored as ${kind}, not ${describe(stored.kind)}`);
  if (kind === 'string') {
    const value = stored.value;
    if (typeof value !== 'string') throw new InvalidArgumentError('str attribute value is not a string');
    const n = utf8ByteLength(value);
    if (n > STR_ATTRIBUTE_MAX_BYTES) {
      throw new InvalidArgumentError(`str attribute is ${n} utf-8 bytes, more than ${STR_ATTRIBUTE_MAX_BYTES}`);
    }
    return value;
  }
  const n = toSafeUint(stored.value);
  switch (type) {
    case 'i32':
      if (n > 0xffffffff) throw new InvalidArgumentError(`stored i32 ${n} is above ${0xffffffff}`);
      return n - I32_OFFSET;
    case 'uint':
      return n;
    case 'f32':
      if (n > 0xffffffff) throw new InvalidArgumentError(`stored f32 ${n} is above ${0xffffffff}`);
      return decodeF32(n);
    case 'bool':
      if (n !== 0 && n !== 1) throw new InvalidArgumentError(`stored bool must be 0 or 1, not ${n}`);
      return n === 1;
    default:
      throw new InvalidArgumentError(`unknown attribute type ${describe(type)}`);
  }
}

function toSafeUint(v: unknown): number {
  if (typeof v === 'bigint') {
    if (v < 0n || v > BigInt(UINT_ATTRIBUTE_MAX))
      throw new InvalidArgumentError(`stored number ${v} is outside 0 to ${UINT_ATTRIBUTE_MAX}`);
    return Number(v);
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > UINT_ATTRIBUTE_MAX) {
    throw new InvalidArgumentError(`stored number ${describe(v)} is not an integer from 0 to ${UINT_ATTRIBUTE_MAX}`);
  }
  return v + 0;
}
