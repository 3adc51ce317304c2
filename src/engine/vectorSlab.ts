// The store's one copy of its vectors: float32 values of every slot in a slab of fixed-size chunks
// (plus 1/‖v‖ and an occupied flag per slot). Exact scans, graph rebuilds and snapshots read it;
// records handed out by CollectionStore get their `vector` (and `halfvec`) rebuilt from it on read.
//
// Why a slab instead of the records' own arrays: each record used to pin a Float32Array and its
// halfvec bytes (~2.3 KB plus two ArrayBuffer headers at dim 384, on top of hnswlib's own copy); the
// slab keeps 4·dim bytes per slot, and scans walk memory in slot order. Why chunks: one contiguous
// array grown ×1.5 leaves its old copies (2× the final size in all) in the malloc heap, which RSS
// keeps; chunks never move, and only the first one grows (up to a full chunk) so tiny collections
// stay tiny.

import { floatToHalfBits, HALF_TO_FLOAT32 } from '../collections/index.ts';
import { inverseNorm, SLAB_CHUNK_SHIFT, SLAB_CHUNK_SLOTS } from './exact.ts';

const CHUNK_MASK = SLAB_CHUNK_SLOTS - 1;
/** Slots the first chunk starts with; it grows ×2 up to a full chunk. */
const INITIAL_SLOTS = 64;

export class VectorSlab {
  readonly dim: number;
  /** Chunk c holds slots [c·SLAB_CHUNK_SLOTS, (c + 1)·SLAB_CHUNK_SLOTS), dim floats each. */
  readonly chunks: Float32Array[] = [];
  /** The same memory as raw bits, for the fast halfvec encoder. */
  readonly #bitChunks: Uint32Array[] = [];
  /** 1/‖v‖ per slot (0 for a zero vector). */
  invNorms: Float32Array;
  /** 1 where a committed record lives; scans skip the rest (free slots, slots of a staged block). */
  live: Uint8Array;
  #slots = 0;

  constructor(dim: number) {
    this.dim = dim;
    this.invNorms = new Float32Array(INITIAL_SLOTS);
    this.live = new Uint8Array(INITIAL_SLOTS);
    this.#setChunk(0, new Float32Array(INITIAL_SLOTS * dim));
    this.#slots = INITIAL_SLOTS;
  }

  /** Addressable slots. */
  get capacity(): number {
    return this.#slots;
  }

  #setChunk(c: number, chunk: Float32Array): void {
    this.chunks[c] = chunk;
    this.#bitChunks[c] = new Uint32Array(chunk.buffer, chunk.byteOffset, chunk.length);
  }

  /** Makes slots 0 … min − 1 addressable. */
  grow(min: number): void {
    if (min <= this.#slots) return;
    const dim = this.dim;
    if (this.#slots < SLAB_CHUNK_SLOTS) {
      const first = Math.min(SLAB_CHUNK_SLOTS, Math.max(min, this.#slots * 2));
      const chunk = new Float32Array(first * dim);
      chunk.set(this.chunks[0]!);
      this.#setChunk(0, chunk);
      this.#slots = first;
    }
    while (this.#slots < min) {
      this.#setChunk(this.#slots >>> SLAB_CHUNK_SHIFT, new Float32Array(SLAB_CHUNK_SLOTS * dim));
      this.#slots += SLAB_CHUNK_SLOTS;
    }
    // 5 bytes a slot: doubling these leaves little behind.
    if (this.#slots > this.invNorms.length) {
      const cap = Math.max(this.#slots, this.invNorms.length * 2);
      const invNorms = new Float32Array(cap);
      invNorms.set(this.invNorms);
      this.invNorms = invNorms;
      const live = new Uint8Array(cap);
      live.set(this.live);
      this.live = live;
    }
  }

  /** Stores a slot's values (float32-rounded) and inverse norm; does not mark it live. */
  write(slot: number, v: ArrayLike<number>): void {
    const out = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++) out[o + i] = v[i]!;
    this.invNorms[slot] = inverseNorm(this.view(slot));
  }

  /** Stores a slot's values from little-endian binary16 bytes at `offset`. */
  writeHalf(slot: number, bytes: Uint8Array, offset: number): void {
    const out = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++)
      out[o + i] = HALF_TO_FLOAT32[bytes[offset + 2 * i]! | (bytes[offset + 2 * i + 1]! << 8)]!;
    this.invNorms[slot] = inverseNorm(this.view(slot));
  }

  /** The slot's values without copying: valid only until the slot is rewritten or the slab grows. */
  view(slot: number): Float32Array {
    const o = (slot & CHUNK_MASK) * this.dim;
    return this.chunks[slot >>> SLAB_CHUNK_SHIFT]!.subarray(o, o + this.dim);
  }

  /** A copy of the slot's values, the caller's to keep. */
  copy(slot: number): Float32Array {
    const o = (slot & CHUNK_MASK) * this.dim;
    return this.chunks[slot >>> SLAB_CHUNK_SHIFT]!.slice(o, o + this.dim);
  }

  /** Writes the slot's binary16 bytes into `out` at `offset`. */
  writeHalfvec(slot: number, out: Uint8Array, offset: number): void {
    const c = slot >>> SLAB_CHUNK_SHIFT;
    writeHalf(this.chunks[c]!, this.#bitChunks[c]!, (slot & CHUNK_MASK) * this.dim, this.dim, out, offset);
  }
}

/**
 * float32 values as binary16 bytes (exact for values that came from a halfvec).
 * @param v the values
 * @returns `2 × length` bytes, little-endian
 */
export function halfvecOf(v: Float32Array): Uint8Array {
  const out = new Uint8Array(v.length * 2);
  writeHalf(v, new Uint32Array(v.buffer, v.byteOffset, v.length), 0, v.length, out, 0);
  return out;
}

function writeHalf(
  values: Float32Array,
  bits: Uint32Array,
  o: number,
  dim: number,
  out: Uint8Array,
  offset: number,
): void {
  for (let i = 0; i < dim; i++) {
    const b = bits[o + i]!;
    const sign = (b >>> 16) & 0x8000;
    const exp = (b >>> 23) & 0xff;
    const mant = b & 0x7fffff;
    let h: number;
    // Records arrive decoded from binary16, so nearly every value is a normal half or zero: pure bit
    // moves. Subnormal halves and values a caller did not round go through the exact encoder.
    if (exp >= 113 && exp <= 142 && (mant & 0x1fff) === 0) h = sign | ((exp - 112) << 10) | (mant >>> 13);
    else if ((b & 0x7fffffff) === 0) h = sign;
    else h = slowHalfBits(values[o + i]!);
    out[offset + 2 * i] = h & 0xff;
    out[offset + 2 * i + 1] = h >>> 8;
  }
}

function slowHalfBits(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  if (x === Infinity) return 0x7c00;
  if (x === -Infinity) return 0xfc00;
  return floatToHalfBits(x, { overflow: 'clamp' });
}
