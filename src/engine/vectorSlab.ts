// The store's one copy of its vectors: the binary16 bits of every slot in a slab of fixed-size chunks
// (plus 1/‖v‖ and an occupied flag per slot). Exact scans, graph rebuilds and snapshots read it;
// records handed out by CollectionStore get their `vector` (and `halfvec`) rebuilt from it on read.
//
// Why binary16: the collection type is halfvec, so every vector arrives as halves and float32 would only
// widen them (2·dim bytes a slot instead of 4·dim; hnswlib keeps its own float32 copy for the graph).
// Why a slab instead of the records' own arrays: each record used to pin its arrays (plus two
// ArrayBuffer headers); the slab keeps 2·dim bytes per slot, and scans walk memory in slot order. Why
// chunks: one contiguous array grown ×1.5 leaves its old copies (2× the final size in all) in the malloc
// heap, which RSS keeps; chunks never move, and only the first one grows (up to a full chunk) so tiny
// collections stay tiny.

import { floatToHalfBits, HALF_TO_FLOAT32 } from '../collections/index.ts';
import { grownLength } from './arrayGrowth.ts';
import { inverseNorm, SLAB_CHUNK_SHIFT, SLAB_CHUNK_SLOTS } from './exact.ts';

const CHUNK_MASK = SLAB_CHUNK_SLOTS - 1;
/**
 * Slots the first chunk takes when the first vector arrives; it grows ×2 up to a full chunk. A slab that
 * holds nothing allocates nothing: an empty collection must cost next to nothing (at a large dim these
 * slots alone are hundreds of KiB).
 */
const INITIAL_SLOTS = 64;

/** Snapshots hold little-endian halves; a Uint16Array view of them is only right on such a host. */
export const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

export class VectorSlab {
  readonly dim: number;
  /** Chunk c holds slots [c·SLAB_CHUNK_SLOTS, (c + 1)·SLAB_CHUNK_SLOTS), dim binary16 patterns each. */
  readonly chunks: Uint16Array[] = [];
  /** 1/‖v‖ per slot (0 for a zero vector). */
  invNorms: Float32Array;
  /** 1 where a committed record lives; scans skip the rest (free slots, slots of a staged block). */
  live: Uint8Array;
  /** What `view` decodes into (allocated at the first view). */
  #scratch: Float32Array | undefined;
  #slots = 0;

  /**
   * Whether the slab keeps the vectors. A store whose graph keeps them in this same binary16 form (the
   * native engine) reads them from the graph instead: the slab then keeps only the occupied flags.
   */
  readonly holdsVectors: boolean;

  constructor(dim: number, holdsVectors = true) {
    this.dim = dim;
    this.holdsVectors = holdsVectors;
    this.invNorms = new Float32Array(0);
    this.live = new Uint8Array(0);
    this.chunks[0] = new Uint16Array(0);
  }

  /** Addressable slots. */
  get capacity(): number {
    return this.#slots;
  }

  /** Makes slots 0 … min − 1 addressable. */
  grow(min: number): void {
    if (min <= this.#slots) return;
    if (!this.holdsVectors) {
      this.#slots = grownLength(this.#slots, min);
      const live = new Uint8Array(this.#slots);
      live.set(this.live);
      this.live = live;
      return;
    }
    const dim = this.dim;
    if (this.#slots < SLAB_CHUNK_SLOTS) {
      const first = Math.min(SLAB_CHUNK_SLOTS, Math.max(min, this.#slots * 2, INITIAL_SLOTS));
      const chunk = new Uint16Array(first * dim);
      chunk.set(this.chunks[0]!);
      this.chunks[0] = chunk;
      this.#slots = first;
    }
    while (this.#slots < min) {
      this.chunks[this.#slots >>> SLAB_CHUNK_SHIFT] = new Uint16Array(SLAB_CHUNK_SLOTS * dim);
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

  /** Stores a slot's values rounded to binary16 (exact for values decoded from a halfvec); does not mark it live. */
  write(slot: number, v: ArrayLike<number>): void {
    const out = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++) out[o + i] = halfBitsOf(v[i]!);
    this.invNorms[slot] = inverseNorm(this.view(slot));
  }

  /** Stores a slot's values from little-endian binary16 bytes at `offset`. */
  writeHalf(slot: number, bytes: Uint8Array, offset: number): void {
    const out = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++) out[o + i] = bytes[offset + 2 * i]! | (bytes[offset + 2 * i + 1]! << 8);
    this.invNorms[slot] = inverseNorm(this.view(slot));
  }

  /**
   * The slot's values as float32, decoded into a buffer the slab reuses: valid only until the next
   * `view` (callers hand it straight to hnswlib or a distance).
   */
  view(slot: number): Float32Array {
    this.#scratch ??= new Float32Array(this.dim);
    return this.#decode(slot, this.#scratch);
  }

  /** A copy of the slot's values as float32, the caller's to keep. */
  copy(slot: number): Float32Array {
    return this.#decode(slot, new Float32Array(this.dim));
  }

  #decode(slot: number, out: Float32Array): Float32Array {
    const bits = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++) out[i] = HALF_TO_FLOAT32[bits[o + i]!]!;
    return out;
  }

  /**
   * Slots 0 … count − 1 as little-endian binary16 bytes, chunk by chunk (free slots included): what a
   * snapshot writes, and `loadBytes` takes back in one copy per chunk.
   */
  bytes(count: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let first = 0; first < count; first += SLAB_CHUNK_SLOTS) {
      const chunk = this.chunks[first >>> SLAB_CHUNK_SHIFT]!;
      const n = Math.min(SLAB_CHUNK_SLOTS, count - first) * this.dim;
      if (LITTLE_ENDIAN) out.push(new Uint8Array(chunk.buffer, chunk.byteOffset, n * 2));
      else {
        const b = new Uint8Array(n * 2);
        for (let i = 0; i < n; i++) {
          b[2 * i] = chunk[i]! & 0xff;
          b[2 * i + 1] = chunk[i]! >>> 8;
        }
        out.push(b);
      }
    }
    return out;
  }

  /**
   * Fills slots 0 … count − 1 from what `bytes` wrote (grows the slab first), then sets their inverse
   * norms (see `restoreNorms`).
   */
  loadBytes(bytes: Uint8Array, count: number, occupied: Uint8Array, invNorms?: Float32Array): void {
    if (bytes.length !== count * this.dim * 2)
      throw new RangeError(`${bytes.length} bytes of vectors, expected ${count * this.dim * 2}`);
    this.grow(count);
    for (let first = 0; first < count; first += SLAB_CHUNK_SLOTS) {
      const chunk = this.chunks[first >>> SLAB_CHUNK_SHIFT]!;
      const n = Math.min(SLAB_CHUNK_SLOTS, count - first) * this.dim;
      const o = first * this.dim * 2;
      if (LITTLE_ENDIAN && o % 2 === 0 && (bytes.byteOffset + o) % 2 === 0)
        chunk.set(new Uint16Array(bytes.buffer, bytes.byteOffset + o, n));
      else for (let i = 0; i < n; i++) chunk[i] = bytes[o + 2 * i]! | (bytes[o + 2 * i + 1]! << 8);
    }
    this.restoreNorms(count, occupied, invNorms);
  }

  /**
   * On a little-endian host: grows the slab to `count` slots and returns, chunk by chunk, the slab's own
   * memory for slots 0 … count − 1 as bytes, to be filled with what `bytes` wrote (a snapshot file read
   * straight into it, without a copy on the main thread); then call `restoreNorms`. Undefined on a
   * big-endian host (use `loadBytes`).
   */
  targets(count: number): Uint8Array[] | undefined {
    if (!LITTLE_ENDIAN) return undefined;
    this.grow(count);
    return this.bytes(count);
  }

  /**
   * Sets the inverse norms of slots 0 … count − 1: those `invNorms` gives (what `invNorms` held when the
   * vectors were written), else computed for the `occupied` slots.
   */
  restoreNorms(count: number, occupied: Uint8Array, invNorms?: Float32Array): void {
    if (invNorms !== undefined) {
      if (invNorms.length !== count) throw new RangeError(`${invNorms.length} inverse norms, expected ${count}`);
      this.invNorms.set(invNorms);
      return;
    }
    for (let s = 0; s < count; s++) if (occupied[s] === 1) this.invNorms[s] = inverseNorm(this.view(s));
  }

  /** Writes the slot's binary16 bytes (little-endian) into `out` at `offset`. */
  writeHalfvec(slot: number, out: Uint8Array, offset: number): void {
    const bits = this.chunks[slot >>> SLAB_CHUNK_SHIFT]!;
    const o = (slot & CHUNK_MASK) * this.dim;
    for (let i = 0; i < this.dim; i++) {
      const h = bits[o + i]!;
      out[offset + 2 * i] = h & 0xff;
      out[offset + 2 * i + 1] = h >>> 8;
    }
  }
}

/**
 * float32 values as binary16 bytes (exact for values that came from a halfvec).
 * @param v the values
 * @returns `2 × length` bytes, little-endian
 */
export function halfvecOf(v: Float32Array): Uint8Array {
  const out = new Uint8Array(v.length * 2);
  for (let i = 0; i < v.length; i++) {
    const h = halfBitsOf(v[i]!);
    out[2 * i] = h & 0xff;
    out[2 * i + 1] = h >>> 8;
  }
  return out;
}

/** The binary16 pattern nearest a value (rounded to float32 first, as the records' vectors are). */
function halfBitsOf(x: number): number {
  f32[0] = x;
  const b = f32Bits[0]!;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  // Records arrive decoded from binary16, so nearly every value is a normal half or zero: pure bit
  // moves. Subnormal halves and values a caller did not round go through the exact encoder.
  if (exp >= 113 && exp <= 142 && (mant & 0x1fff) === 0) return sign | ((exp - 112) << 10) | (mant >>> 13);
  if ((b & 0x7fffffff) === 0) return sign;
  return slowHalfBits(f32[0]!);
}

function slowHalfBits(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  if (x === Infinity) return 0x7c00;
  if (x === -Infinity) return 0xfc00;
  return floatToHalfBits(x, { overflow: 'clamp' });
}
