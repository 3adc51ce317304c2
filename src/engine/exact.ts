// Exact (brute-force) k-nearest-neighbour scan in JavaScript over a vector slab (binary16 patterns;
// float32 chunks are accepted too, for benches that scan their own arrays): the benchmarks' ground truth,
// independent of the graph's own scan (Graph.exact), which answers the planner's `exact` mode. Plain
// indexed loops with a 4-way unrolled dot product (ARCHITECTURE.md §10.2); halves are decoded through the
// 65,536-entry table in the same loop; the query stays float32; no allocation per candidate.

import { HALF_TO_FLOAT32 } from '../collections/index.ts';
import type { MetricOps } from './metrics.ts';

const LUT = HALF_TO_FLOAT32;

/**
 * Bounded best-k list ordered by ascending key; ties keep arrival order. k ≤ 50 in practice, so a
 * sorted insert beats a heap.
 */
export class TopK {
  readonly keys: Float64Array;
  readonly ids: Int32Array;
  size = 0;

  constructor(readonly k: number) {
    this.keys = new Float64Array(Math.max(1, k));
    this.ids = new Int32Array(Math.max(1, k));
  }

  /** The key a candidate must beat to enter (Infinity while not full). */
  worst(): number {
    return this.size < this.k ? Infinity : this.keys[this.size - 1]!;
  }

  /** Inserts; callers check `key < worst()` first, so a full list drops its last entry. */
  push(key: number, id: number): void {
    const keys = this.keys;
    const ids = this.ids;
    let i = this.size < this.k ? this.size++ : this.size - 1;
    while (i > 0 && keys[i - 1]! > key) {
      keys[i] = keys[i - 1]!;
      ids[i] = ids[i - 1]!;
      i--;
    }
    keys[i] = key;
    ids[i] = id;
  }
}

/** a · b[o … o + dim). */
function dot(a: Float32Array, b: Float32Array, o: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  const end = dim - (dim % 4);
  for (; i < end; i += 4) {
    s0 += a[i]! * b[o + i]!;
    s1 += a[i + 1]! * b[o + i + 1]!;
    s2 += a[i + 2]! * b[o + i + 2]!;
    s3 += a[i + 3]! * b[o + i + 3]!;
  }
  for (; i < dim; i++) s0 += a[i]! * b[o + i]!;
  return s0 + s1 + s2 + s3;
}

/** a · decode(b[o … o + dim)). */
function dotHalf(a: Float32Array, b: Uint16Array, o: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  const end = dim - (dim % 4);
  for (; i < end; i += 4) {
    s0 += a[i]! * LUT[b[o + i]!]!;
    s1 += a[i + 1]! * LUT[b[o + i + 1]!]!;
    s2 += a[i + 2]! * LUT[b[o + i + 2]!]!;
    s3 += a[i + 3]! * LUT[b[o + i + 3]!]!;
  }
  for (; i < dim; i++) s0 += a[i]! * LUT[b[o + i]!]!;
  return s0 + s1 + s2 + s3;
}

/** ‖a − decode(b[o … o + dim))‖². */
function l2sqHalf(a: Float32Array, b: Uint16Array, o: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  const end = dim - (dim % 4);
  for (; i < end; i += 4) {
    const d0 = a[i]! - LUT[b[o + i]!]!;
    const d1 = a[i + 1]! - LUT[b[o + i + 1]!]!;
    const d2 = a[i + 2]! - LUT[b[o + i + 2]!]!;
    const d3 = a[i + 3]! - LUT[b[o + i + 3]!]!;
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; i++) {
    const d = a[i]! - LUT[b[o + i]!]!;
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/** ‖a − b[o … o + dim)‖². */
function l2sq(a: Float32Array, b: Float32Array, o: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  const end = dim - (dim % 4);
  for (; i < end; i += 4) {
    const d0 = a[i]! - b[o + i]!;
    const d1 = a[i + 1]! - b[o + i + 1]!;
    const d2 = a[i + 2]! - b[o + i + 2]!;
    const d3 = a[i + 3]! - b[o + i + 3]!;
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; i++) {
    const d = a[i]! - b[o + i]!;
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/**
 * 1 / ‖v‖ (0 for a zero vector, which then sits at cosine distance 1, as in hnswlib).
 * @param v a vector
 * @returns the inverse norm
 * @example inverseNorm(new Float32Array([3, 4])) // 0.2
 */
export function inverseNorm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return s > 0 ? 1 / Math.sqrt(s) : 0;
}

/** Slots per slab chunk (2^10): slot s lives in chunk s >> 10 at element offset (s & 1023) · dim. */
export const SLAB_CHUNK_SHIFT = 10;
export const SLAB_CHUNK_SLOTS = 1 << SLAB_CHUNK_SHIFT;
const CHUNK_MASK = SLAB_CHUNK_SLOTS - 1;

/**
 * The vectors an exact scan reads: a slab in chunks of SLAB_CHUNK_SLOTS slots (the last may be
 * shorter), so a growing store never copies, and never leaves behind, more than one chunk.
 */
export type ExactSource = {
  /** binary16 patterns (the store's slab), or float32 values. */
  chunks: readonly Uint16Array[] | readonly Float32Array[];
  /** Non-zero for occupied slots; absent when every slot below slotCount is occupied. */
  live?: Uint8Array | undefined;
  /** 1/‖v‖ per slot; read only when the metric normalises. */
  invNorms: Float32Array;
  /** Slots 0 … slotCount − 1 exist. */
  slotCount: number;
};

/**
 * Exact top-k by pgvector distance.
 * @param ops the metric
 * @param query the query vector (length = dim)
 * @param source the vector slab (chunked)
 * @param candidates slots to score, or `undefined` for every occupied slot
 * @param k how many to keep
 * @returns `{ slots, distances }` ascending by distance
 * @example exactTopK(METRIC_OPS.l2, q, source, undefined, 10)
 */
export function exactTopK(
  ops: MetricOps,
  query: Float32Array,
  source: ExactSource,
  candidates: ArrayLike<number> | undefined,
  k: number,
): { slots: number[]; distances: number[] } {
  const top = new TopK(k);
  const chunks = source.chunks;
  if (chunks.length > 0 && chunks[0] instanceof Uint16Array)
    scanHalf(ops, query, chunks as readonly Uint16Array[], source, candidates, top);
  else scanFloat(ops, query, chunks as readonly Float32Array[], source, candidates, top);
  const qInv = ops.normalize ? inverseNorm(query) : 1;
  const slots: number[] = new Array(top.size);
  const distances: number[] = new Array(top.size);
  for (let i = 0; i < top.size; i++) {
    const key = top.keys[i]!;
    slots[i] = top.ids[i]!;
    distances[i] = ops.kernel === 'l2' ? Math.sqrt(key) : ops.normalize ? ops.clamp(1 + key * qInv) : key;
  }
  return { slots, distances };
}

// Two copies of one scan, so each loop sees one array type (V8 keeps the loads monomorphic).
function scanHalf(
  ops: MetricOps,
  query: Float32Array,
  chunks: readonly Uint16Array[],
  source: ExactSource,
  candidates: ArrayLike<number> | undefined,
  top: TopK,
): void {
  const dim = query.length;
  const live = source.live;
  const invNorms = source.invNorms;
  const n = candidates === undefined ? source.slotCount : candidates.length;
  // Keys are "smaller is closer" in every kernel so one TopK serves all three metrics.
  if (ops.kernel === 'l2') {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = l2sqHalf(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim);
      if (key < top.worst()) top.push(key, slot);
    }
  } else if (ops.normalize) {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = -dotHalf(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim) * invNorms[slot]!;
      if (key < top.worst()) top.push(key, slot);
    }
  } else {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = -dotHalf(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim);
      if (key < top.worst()) top.push(key, slot);
    }
  }
}

function scanFloat(
  ops: MetricOps,
  query: Float32Array,
  chunks: readonly Float32Array[],
  source: ExactSource,
  candidates: ArrayLike<number> | undefined,
  top: TopK,
): void {
  const dim = query.length;
  const live = source.live;
  const invNorms = source.invNorms;
  const n = candidates === undefined ? source.slotCount : candidates.length;
  if (ops.kernel === 'l2') {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = l2sq(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim);
      if (key < top.worst()) top.push(key, slot);
    }
  } else if (ops.normalize) {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = -dot(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim) * invNorms[slot]!;
      if (key < top.worst()) top.push(key, slot);
    }
  } else {
    for (let j = 0; j < n; j++) {
      const slot = candidates === undefined ? j : candidates[j]!;
      if (live !== undefined && live[slot] === 0) continue;
      const key = -dot(query, chunks[slot >>> SLAB_CHUNK_SHIFT]!, (slot & CHUNK_MASK) * dim, dim);
      if (key < top.worst()) top.push(key, slot);
    }
  }
}
