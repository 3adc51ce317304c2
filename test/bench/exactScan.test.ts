// bench:peers' ground truth comes from the engine's native exact scan (test/bench/peers/exactScan.ts): it must
// rank exactly as a plain cosine brute force over the same binary16 values, over every id or a candidate set.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeVectorPayload, encodeVectorPayload } from '../../src/collections/index.ts';
import { ExactScan } from './peers/exactScan.ts';

/** Cosine distance of base vector i to q, in float64. */
function distance(base: Float32Array, dim: number, q: Float32Array, i: number): number {
  let dot = 0;
  let qq = 0;
  let bb = 0;
  for (let d = 0; d < dim; d++) {
    const b = base[i * dim + d]!;
    dot += q[d]! * b;
    qq += q[d]! * q[d]!;
    bb += b * b;
  }
  return 1 - dot / Math.sqrt(qq * bb);
}

/**
 * Holds `got` to be a k nearest of `ids`: as many as the brute force keeps, each a distinct one of `ids`,
 * with the brute force's distances in order (float32 rounding may order equal distances either way).
 */
function assertNearest(
  base: Float32Array,
  dim: number,
  q: Float32Array,
  k: number,
  ids: number[],
  got: number[],
): void {
  const want = ids
    .map((i) => distance(base, dim, q, i))
    .sort((a, b) => a - b)
    .slice(0, k);
  assert.equal(got.length, want.length);
  assert.equal(new Set(got).size, got.length);
  for (const i of got) assert.ok(ids.includes(i), `${i} is not a candidate`);
  for (const [j, i] of got.entries()) assert.ok(Math.abs(distance(base, dim, q, i) - want[j]!) < 1e-5, `rank ${j}`);
}

/** Rounded to binary16, as the bench's base vectors are. */
const half = (v: Float32Array): Float32Array =>
  decodeVectorPayload(encodeVectorPayload({ vector: v, document: '' })).vector;

describe('bench:peers exact scan (ground truth)', () => {
  it('ranks every id, or only the candidates, as a cosine brute force does', () => {
    const dim = 8;
    const vec = fc
      .array(fc.integer({ min: -1000, max: 1000 }), { minLength: dim, maxLength: dim })
      .filter((v) => v.some((x) => x !== 0))
      .map((v) => Float32Array.from(v, (x) => x / 1000));
    fc.assert(
      fc.property(
        fc.array(vec, { minLength: 12, maxLength: 60 }),
        vec,
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 4 }),
        (vectors, query, k, stride) => {
          const n = vectors.length;
          const base = new Float32Array(n * dim);
          for (const [i, v] of vectors.entries()) base.set(half(v), i * dim);
          const scan = new ExactScan(base, n, dim);
          const all = Array.from({ length: n }, (_, i) => i);
          assertNearest(base, dim, query, k, all, scan.topK(query, k));
          const candidates = all.filter((i) => i % stride === 0);
          assertNearest(base, dim, query, k, candidates, scan.topK(query, k, Uint32Array.from(candidates)));
        },
      ),
      { numRuns: 100 },
    );
  });
});
