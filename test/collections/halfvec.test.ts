// Tests src/collections/codecs/halfvec.ts: binary16 conversion and the vector entity payload.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeHalfvec,
  decodeVectorPayload,
  DimensionMismatchError,
  encodeHalfvec,
  encodeVectorPayload,
  floatToHalfBits,
  HALF_TO_FLOAT32,
  halfBitsToFloat,
  InvalidArgumentError,
  isFiniteHalf,
} from '../../src/collections/index.ts';
import { defined } from '../helpers/defined.ts';

const invalid = (re: RegExp) => (err: unknown) =>
  err instanceof InvalidArgumentError && err.code === 'invalid_argument' && re.test(err.message);

function payload(dim: number, elements: number[], doc: number[] = []): Uint8Array {
  const out = new Uint8Array(4 + elements.length * 2 + doc.length);
  out[0] = 1;
  out[1] = 1;
  out[2] = dim & 0xff;
  out[3] = dim >> 8;
  elements.forEach((h, i) => {
    out[4 + 2 * i] = h & 0xff;
    out[5 + 2 * i] = h >> 8;
  });
  out.set(doc, 4 + elements.length * 2);
  return out;
}

describe('floatToHalfBits / halfBitsToFloat', () => {
  test('default: known values', () => {
    assert.equal(floatToHalfBits(1), 0x3c00);
    assert.equal(floatToHalfBits(-2), 0xc000);
    assert.equal(floatToHalfBits(0), 0x0000);
    assert.equal(floatToHalfBits(-0), 0x8000);
    assert.equal(floatToHalfBits(65504), 0x7bff);
    assert.equal(floatToHalfBits(-65504), 0xfbff);
    assert.equal(floatToHalfBits(0.1), 0x2e66);
    assert.equal(floatToHalfBits(1 / 3), 0x3555);
    assert.equal(floatToHalfBits(2 ** -14), 0x0400); // smallest normal
    assert.equal(floatToHalfBits(2 ** -24), 0x0001); // smallest subnormal
    assert.equal(floatToHalfBits(1023 * 2 ** -24), 0x03ff); // largest subnormal
    assert.equal(halfBitsToFloat(0x3c00), 1);
    assert.equal(halfBitsToFloat(0x0001), 2 ** -24);
    assert.equal(halfBitsToFloat(0x7bff), 65504);
    assert.ok(Object.is(halfBitsToFloat(0x8000), -0));
  });

  test('behavior: rounds to nearest, ties to even', () => {
    assert.equal(floatToHalfBits(1 + 2 ** -11), 0x3c00); // tie, 0x3c00 is even
    assert.equal(floatToHalfBits(1 + 3 * 2 ** -11), 0x3c02); // tie, 0x3c02 is even
    assert.equal(floatToHalfBits(1 + 2 ** -11 + 2 ** -30), 0x3c01); // just above the tie
    assert.equal(floatToHalfBits(2 ** -25), 0x0000); // subnormal tie to 0
    assert.equal(floatToHalfBits(3 * 2 ** -25), 0x0002); // subnormal tie to even 2
    assert.equal(floatToHalfBits(2 ** -26), 0x0000); // underflow to +0
    assert.equal(floatToHalfBits(-(2 ** -26)), 0x8000); // underflow keeps the sign
    assert.equal(floatToHalfBits(2 - 2 ** -12), 0x4000); // carries into the exponent
    assert.equal(floatToHalfBits(65519.99), 0x7bff); // below the overflow midpoint
    assert.equal(floatToHalfBits((1024 - 0.5) * 2 ** -24), 0x0400); // subnormal carries into smallest normal
  });

  test('error: non-finite and overflow', () => {
    assert.throws(() => floatToHalfBits(NaN), invalid(/finite/));
    assert.throws(() => floatToHalfBits(Infinity), invalid(/finite/));
    assert.throws(() => floatToHalfBits(-Infinity), invalid(/finite/));
    assert.throws(() => floatToHalfBits(65520), invalid(/binary16 range/));
    assert.throws(() => floatToHalfBits(-70000), invalid(/binary16 range/));
    assert.throws(() => floatToHalfBits(1e300), invalid(/binary16 range/));
  });

  test('args: overflow clamp saturates to ±65504', () => {
    assert.equal(floatToHalfBits(70000, { overflow: 'clamp' }), 0x7bff);
    assert.equal(floatToHalfBits(-1e30, { overflow: 'clamp' }), 0xfbff);
    assert.throws(() => floatToHalfBits(NaN, { overflow: 'clamp' }), invalid(/finite/));
  });

  test('behavior: every finite bit pattern decodes and re-encodes to the same bits', () => {
    let finite = 0;
    for (let h = 0; h < 65536; h++) {
      if (!isFiniteHalf(h)) continue;
      finite++;
      assert.equal(
        floatToHalfBits(defined(HALF_TO_FLOAT32[h], 'HALF_TO_FLOAT32[h]')),
        h,
        `pattern 0x${h.toString(16)}`,
      );
    }
    assert.equal(finite, 65536 - 2048);
  });

  test('behavior: non-finite patterns are NaN or ±Infinity in the table', () => {
    assert.equal(HALF_TO_FLOAT32[0x7c00], Infinity);
    assert.equal(HALF_TO_FLOAT32[0xfc00], -Infinity);
    assert.ok(Number.isNaN(HALF_TO_FLOAT32[0x7e00]));
    for (let h = 0; h < 65536; h++) assert.equal(isFiniteHalf(h), Number.isFinite(HALF_TO_FLOAT32[h]));
  });

  test('behavior: result is the nearest half, ties to even (ground truth by neighbours)', () => {
    fc.assert(
      fc.property(fc.double({ min: -65504, max: 65504, noNaN: true }), (x) => {
        const h = floatToHalfBits(x);
        const v = halfBitsToFloat(h);
        const err = Math.abs(x - v);
        // The neighbours in magnitude (same sign) must not be closer.
        const mag = h & 0x7fff;
        for (const n of [mag - 1, mag + 1]) {
          if (n < 0 || n > 0x7bff) continue;
          const nv = halfBitsToFloat((h & 0x8000) | n);
          const nerr = Math.abs(x - nv);
          assert.ok(err < nerr || (err === nerr && (h & 1) === 0), `x=${x} h=${h} neighbour=${n}`);
        }
      }),
      { numRuns: 5000 },
    );
  });

  test('behavior: random floats round-trip within half precision', () => {
    fc.assert(
      fc.property(fc.double({ min: -65504, max: 65504, noNaN: true }), (x) => {
        const v = halfBitsToFloat(floatToHalfBits(x));
        if (Math.abs(x) >= 2 ** -14) assert.ok(Math.abs(v - x) <= Math.abs(x) * 2 ** -11, `x=${x} v=${v}`);
        else assert.ok(Math.abs(v - x) <= 2 ** -25, `x=${x} v=${v}`);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('encodeHalfvec / decodeHalfvec', () => {
  test('default: little-endian elements', () => {
    assert.deepEqual([...encodeHalfvec([1, -2])], [0x00, 0x3c, 0x00, 0xc0]);
    assert.deepEqual([...decodeHalfvec(new Uint8Array([0x00, 0x3c, 0x00, 0xc0]))], [1, -2]);
  });

  test('behavior: Float32Array input equals number[] input', () => {
    fc.assert(
      fc.property(
        fc.float32Array({ minLength: 1, maxLength: 64, noDefaultInfinity: true, noNaN: true, min: -65504, max: 65504 }),
        (v) => {
          assert.deepEqual(encodeHalfvec(v), encodeHalfvec([...v]));
        },
      ),
    );
  });

  test('error: odd length, empty, non-finite', () => {
    assert.throws(() => decodeHalfvec(new Uint8Array(3)), invalid(/even/));
    assert.throws(() => decodeHalfvec(new Uint8Array(0)), invalid(/dim must be/));
    assert.throws(() => decodeHalfvec(new Uint8Array([0x00, 0x7c])), invalid(/element 0 is not finite/));
    assert.throws(() => encodeHalfvec([]), invalid(/dim must be/));
    assert.throws(() => encodeHalfvec([1, NaN]), invalid(/element 1/));
  });
});

describe('encodeVectorPayload / decodeVectorPayload', () => {
  test('default: layout of DESIGN §4.2', () => {
    const bytes = encodeVectorPayload({ vector: [1, 0, -2], document: 'é' });
    assert.deepEqual([...bytes], [1, 1, 3, 0, 0x00, 0x3c, 0x00, 0x00, 0x00, 0xc0, 0xc3, 0xa9]);
    const p = decodeVectorPayload(bytes, 3);
    assert.equal(p.dim, 3);
    assert.deepEqual([...p.vector], [1, 0, -2]);
    assert.deepEqual([...p.halfvec], [0x00, 0x3c, 0x00, 0x00, 0x00, 0xc0]);
    assert.equal(p.document, 'é');
    assert.ok(p.vector instanceof Float32Array);
  });

  test('default: empty document and dim at the limits', () => {
    const one = decodeVectorPayload(encodeVectorPayload({ vector: [0.5], document: '' }));
    assert.equal(one.dim, 1);
    assert.equal(one.document, '');
    const big = new Float32Array(4000).fill(0.25);
    const p = decodeVectorPayload(encodeVectorPayload({ vector: big, document: 'x' }), 4000);
    assert.equal(p.dim, 4000);
    assert.equal(p.vector[3999], 0.25);
    assert.equal(p.halfvec.length, 8000);
  });

  test('behavior: exact round trip of half-representable vectors and any document', () => {
    const finiteHalf = fc.integer({ min: 0, max: 0xffff }).filter(isFiniteHalf);
    fc.assert(
      fc.property(
        fc.array(finiteHalf, { minLength: 1, maxLength: 300 }),
        fc.string({ unit: 'binary', maxLength: 200 }),
        (bits, document) => {
          const vector = bits.map(halfBitsToFloat);
          const bytes = encodeVectorPayload({ vector, document });
          const p = decodeVectorPayload(bytes, bits.length);
          assert.equal(p.dim, bits.length);
          assert.equal(p.document, document);
          for (let i = 0; i < bits.length; i++) {
            assert.ok(Object.is(p.vector[i], vector[i]));
            assert.equal(
              defined(p.halfvec[2 * i], 'p.halfvec[2 * i]') |
                (defined(p.halfvec[2 * i + 1], 'p.halfvec[2 * i + 1]') << 8),
              bits[i],
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('behavior: random float vectors round-trip within half precision', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1000, max: 1000, noNaN: true }), { minLength: 1, maxLength: 64 }),
        (vector) => {
          const p = decodeVectorPayload(encodeVectorPayload({ vector, document: '' }));
          vector.forEach((x, i) => {
            assert.ok(Math.abs(defined(p.vector[i], 'p.vector[i]') - x) <= Math.max(Math.abs(x) * 2 ** -11, 2 ** -25));
          });
        },
      ),
    );
  });

  test('behavior: subnormal elements are accepted and round-trip', () => {
    const p = decodeVectorPayload(payload(3, [0x0001, 0x83ff, 0x0200]));
    assert.deepEqual([...p.vector], [2 ** -24, -1023 * 2 ** -24, 512 * 2 ** -24]);
    assert.deepEqual(encodeVectorPayload({ vector: p.vector, document: '' }), payload(3, [0x0001, 0x83ff, 0x0200]));
  });

  test('behavior: a leading BOM in the document is kept', () => {
    const p = decodeVectorPayload(encodeVectorPayload({ vector: [1], document: '\uFEFFhi' }));
    assert.equal(p.document, '\uFEFFhi');
  });

  test('behavior: halfvec is a copy, independent of the input buffer', () => {
    const bytes = payload(1, [0x3c00]);
    const p = decodeVectorPayload(bytes);
    bytes[4] = 0xff;
    assert.deepEqual([...p.halfvec], [0x00, 0x3c]);
  });

  test('error: short and truncated buffers', () => {
    for (let n = 0; n < 4; n++)
      assert.throws(() => decodeVectorPayload(new Uint8Array([1, 1, 1, 0]).subarray(0, n)), invalid(/header/));
    assert.throws(() => decodeVectorPayload(payload(2, [0x3c00])), invalid(/too short for 2 dimensions/));
    const full = encodeVectorPayload({ vector: [1, 2, 3, 4], document: 'doc' });
    for (let n = 4; n < 12; n++) assert.throws(() => decodeVectorPayload(full.subarray(0, n)), invalid(/too short/));
  });

  test('error: wrong format or element byte', () => {
    const bad = payload(1, [0x3c00]);
    bad[0] = 2;
    assert.throws(() => decodeVectorPayload(bad), invalid(/unknown payload format 2/));
    const bad2 = payload(1, [0x3c00]);
    bad2[1] = 0;
    assert.throws(() => decodeVectorPayload(bad2), invalid(/unknown element type 0/));
  });

  test('error: dim 0 and 4001', () => {
    assert.throws(() => decodeVectorPayload(payload(0, [])), invalid(/dim must be an integer from 1 to 4000, not 0/));
    assert.throws(() => decodeVectorPayload(payload(4001, new Array(4001).fill(0))), invalid(/not 4001/));
    assert.throws(() => encodeVectorPayload({ vector: [], document: '' }), invalid(/not 0/));
    assert.throws(() => encodeVectorPayload({ vector: new Array(4001).fill(0), document: '' }), invalid(/not 4001/));
  });

  test('error: dimension_mismatch', () => {
    const bytes = encodeVectorPayload({ vector: [1, 2], document: '' });
    assert.throws(
      () => decodeVectorPayload(bytes, 3),
      (err: unknown) =>
        err instanceof DimensionMismatchError &&
        err.code === 'dimension_mismatch' &&
        err.expected === 3 &&
        err.got === 2 &&
        err.message === 'expected 3 dimensions, not 2',
    );
  });

  test('error: non-finite elements', () => {
    for (const h of [0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01]) {
      assert.throws(() => decodeVectorPayload(payload(2, [0x3c00, h])), invalid(/element 1 is not finite/));
    }
    for (const x of [NaN, Infinity, -Infinity]) {
      assert.throws(() => encodeVectorPayload({ vector: [0, x], document: '' }), invalid(/element 1/));
    }
    assert.throws(() => encodeVectorPayload({ vector: [65536], document: '' }), invalid(/binary16 range/));
  });

  test('error: invalid utf-8 document', () => {
    for (const doc of [
      [0xff],
      [0x80],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0x61, 0xf8, 0x88, 0x80, 0x80, 0x80],
    ]) {
      assert.throws(() => decodeVectorPayload(payload(1, [0x3c00], doc)), invalid(/utf-8/));
    }
    assert.throws(() => encodeVectorPayload({ vector: [1], document: 'a\uD800' }), invalid(/lone surrogate/));
  });

  test('behavior: random bytes either decode consistently or throw a codec error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          const p = decodeVectorPayload(bytes);
          assert.equal(p.halfvec.length, 2 * p.dim);
          for (const v of p.vector) assert.ok(Number.isFinite(v));
        } catch (err) {
          assert.ok(err instanceof InvalidArgumentError, String(err));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
