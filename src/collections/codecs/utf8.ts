// UTF-8 helpers shared by the schema v1 codecs (halfvec documents, attributes, ids, definitions).
// Strict in both directions: lone surrogates are refused on encode and malformed bytes on decode,
// so every accepted value round-trips byte for byte.

const encoder = new TextEncoder();
const fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a JS string is well-formed UTF-16 (no lone surrogates), i.e. encodes to UTF-8 without loss.
 * @param s the string to check
 * @returns true when `s` has no lone surrogate
 * @example isWellFormed('a\uD800') // false
 */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Encodes a string as UTF-8. The caller checks `isWellFormed` first when loss matters.
 * @param s the string
 * @returns its UTF-8 bytes
 * @example utf8Encode('é') // Uint8Array [0xc3, 0xa9]
 */
export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s);
}

/**
 * Decodes UTF-8 strictly: malformed input throws a `TypeError`. A leading BOM is kept as U+FEFF.
 * @param bytes UTF-8 bytes
 * @returns the decoded string
 * @example utf8Decode(new Uint8Array([0x61])) // 'a'
 */
export function utf8Decode(bytes: Uint8Array): string {
  return fatalDecoder.decode(bytes);
}

/**
 * Number of UTF-8 bytes of a well-formed string, without allocating.
 * @param s the string
 * @returns its UTF-8 length in bytes
 * @example utf8ByteLength('€') // 3
 */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}
