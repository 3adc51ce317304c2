// The addon's binary16 encoding of a float32 vector (8 values at a time with F16C where the CPU has it, a
// scalar tail) against the codec's own rounding (floatToHalfBits, ties to even, saturating at ±65504) and
// the addon's scalar encodeHalf: the same pattern for every value, ties, subnormals, the saturation edge
// and the tail past the last 8 included.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../../src/collections/index.ts';
import { nativeAddon } from '../../../src/engine/hnsw/nativeAddon.ts';

/** 8 lanes × 8, and 3 more for the scalar tail. */
const DIM = 67;

/** The patterns the addon stores for `values` (as a point's vector). */
function stored(values: Float32Array): number[] {
  const { HalfIndex } = nativeAddon();
  const index = new HalfIndex({ metric: 'l2', dim: DIM, maxElements: 1, m: 4, efConstruction: 8, seed: 1 });
  index.addPoint(values, 0);
  const out = new Uint16Array(DIM);
  index.getHalves(0, out);
  return Array.from(out);
}

function expected(values: Float32Array): number[] {
  return Array.from(values, (x) => floatToHalfBits(x, { overflow: 'clamp' }));
}

/** The float32 value halfway between two adjacent binary16 values (a tie, which rounds to the even one). */
function midpoint(h: number): number {
  return Math.fround((HALF_TO_FLOAT32[h]! + HALF_TO_FLOAT32[h + 1]!) / 2);
}

const edges = [
  0,
  -0,
  1,
  -1,
  65504,
  -65504,
  65519.99,
  65520,
  -65520,
  1e30,
  -3.4e38,
  2 ** -24,
  2 ** -25,
  2 ** -25 * 1.0001,
  2 ** -14,
  2 ** -14 * (1 - 2 ** -11),
  1e-30,
  -1e-45,
  midpoint(0),
  midpoint(1),
  midpoint(0x3ff),
  midpoint(0x3c00),
  midpoint(0x3c01),
  midpoint(0x7bfe),
  midpoint(0x8001),
  0.1,
  1 / 3,
  2049,
  2051,
];

describe('native binary16 encoding', () => {
  test('edge values: ties to even, subnormals, saturation, in the lanes and in the tail', () => {
    // Each edge at every position modulo the lane width and in the tail: rotate them through the vector.
    for (let shift = 0; shift < 9; shift++) {
      const values = new Float32Array(DIM);
      for (let i = 0; i < DIM; i++) values[i] = edges[(i + shift) % edges.length]!;
      const got = stored(values);
      assert.deepEqual(got, expected(values));
      const { encodeHalf } = nativeAddon();
      assert.deepEqual(
        got,
        Array.from(values, (x) => encodeHalf(x)),
      );
    }
  });

  test('any finite float32 values: the codec’s pattern (property)', () => {
    const float32 = fc.oneof(
      fc.float({ noNaN: true, noDefaultInfinity: true }),
      fc.float({ min: -70000, max: 70000, noNaN: true }),
      fc.float({ min: Math.fround(-1e-4), max: Math.fround(1e-4), noNaN: true }),
      fc.integer({ min: 0, max: 0x7bfe }).map((h) => midpoint(h) * (h & 1 ? -1 : 1)),
    );
    fc.assert(
      fc.property(fc.array(float32, { minLength: DIM, maxLength: DIM }), (xs) => {
        const values = Float32Array.from(xs);
        assert.deepEqual(stored(values), expected(values));
      }),
      { numRuns: 300 },
    );
  });
});
