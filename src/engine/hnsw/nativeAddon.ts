// Loads arkivector's own N-API addon (native/, built at install by native/build.mjs over hnswlib's
// headers): the half-precision HNSW index behind every store (halfGraph.ts). Loaded on first use only, so
// the commands that hold no stores run in a checkout whose addon was not built (`npm ci --ignore-scripts`);
// a node then fails at start (src/node/indexer.ts) with a message saying how to build it.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The kernels the addon carries, slowest first; a CPU runs a prefix of them. */
export const NATIVE_KERNELS = ['portable', 'avx2', 'avx512'] as const;
export type NativeKernel = (typeof NATIVE_KERNELS)[number];

export type HalfIndexOptions = {
  metric: 'cosine' | 'ip' | 'l2';
  dim: number;
  maxElements: number;
  m?: number;
  efConstruction?: number;
  seed?: number;
  /** Lowers the kernel (never above what the CPU runs); default: ARKIVECTOR_SIMD, else the best. */
  kernel?: NativeKernel;
  /** Loads a file written by `save` instead of starting empty. */
  path?: string;
};

/** The output buffers a synchronous search writes: room for k labels and distances, and its stats. */
export type SearchOutputs = {
  labels: Uint32Array;
  distances: Float32Array;
  /** stats[0] = hits; stats[1] = filter checks or allowed tests; stats[2] (filteredSearch, when there) = landed. */
  stats: Int32Array;
};

/** The filtered walk's widths (filteredSearch, filteredAsync). */
export type WalkWidths = {
  /** The allowed set's size (an estimate is fine). */
  passing: number;
  /** Width when the descent does not land among allowed elements (default ef; 0: no answer). */
  farEf?: number;
  /** Where it lands, ef × the allowed share around the landing × nearScale (default 0: ef), at least min(ef, 2k). */
  nearScale?: number;
};

export type SearchOptions = SearchOutputs & {
  k: number;
  ef: number;
  /** label → slot (−1: invisible); alone, hnswlib's walk hides the labels it maps to −1. */
  labelSlot?: Int32Array;
  /** A bitset over slots (needs labelSlot). */
  allowed?: Uint8Array;
};

export type FilteredSearchOptions = SearchOutputs &
  WalkWidths & { k: number; ef: number; labelSlot: Int32Array; allowed?: Uint8Array };

export type ExactSearchOptions = SearchOutputs & {
  k: number;
  /** Labels to rank (default: every element not deleted). */
  candidates?: Uint32Array;
};

export type FilteredAsyncOptions = WalkWidths & {
  k: number;
  ef: number;
  /** A bitset over labels (copied when called). */
  allowedLabels: Uint8Array;
};

/**
 * The addon's index (native/src/addon.cc). Distances follow hnswlib: cosine 1 − cos, ip 1 − a·b, l2 squared.
 * A search takes the query and an options object; a bad option throws a TypeError.
 */
export interface HalfIndex {
  addPoint(vector: Float32Array | Uint16Array, label: number, replaceDeleted?: boolean): void;
  markDelete(label: number): void;
  resize(maxElements: number): void;
  /** Writes stats[0] = hits, stats[1] = filter checks; hits nearest first. */
  search(query: Float32Array | Uint16Array, options: SearchOptions): void;
  /**
   * The ACORN-style walk (native/src/filteredSearch.h): through allowed elements only, two hops past
   * the others, from entry points inside the allowed set (`passing`: its size, an estimate is fine), at
   * width `farEf` (default ef; 0: no answer) when the descent does not land among allowed elements, and
   * where it does, at ef × the allowed share around the landing × `nearScale` (default 0: ef), at least
   * min(ef, 2k). Writes stats[0] = hits, stats[1] = allowed tests, stats[2] (when there) = 1 if it landed.
   */
  filteredSearch(query: Float32Array | Uint16Array, options: FilteredSearchOptions): void;
  /** Exact top-k over every element not deleted, or over `candidates` (labels); ties by label. */
  exactSearch(query: Float32Array | Uint16Array, options: ExactSearchOptions): void;
  /**
   * The unfiltered walk (search without labelSlot) on a thread of libuv's pool; addPoint, markDelete
   * and resize wait until every search in flight is done. Resolves to n uint32 labels, then their n
   * float32 distances, nearest first.
   */
  searchAsync(query: Float32Array | Uint16Array, options: { k: number; ef: number }): Promise<ArrayBuffer>;
  /** exactSearch on a thread, as searchAsync (the candidates are copied when called). */
  exactAsync(query: Float32Array | Uint16Array, options: { k: number; candidates?: Uint32Array }): Promise<ArrayBuffer>;
  /**
   * filteredSearch's walk on a thread, as searchAsync, over the labels whose bit is set in `allowedLabels`
   * (a bitset over labels, copied when called). Resolves to n labels, n distances, then two uint32: the
   * allowed tests made and whether the descent landed among allowed elements (1 / 0).
   */
  filteredAsync(query: Float32Array | Uint16Array, options: FilteredAsyncOptions): Promise<ArrayBuffer>;
  save(path: string): void;
  getHalves(label: number, out: Uint16Array): void;
  info(): { count: number; capacity: number; deleted: number; kernel: NativeKernel; elementBytes: number };
}

export type NativeAddon = {
  HalfIndex: new (options: HalfIndexOptions) => HalfIndex;
  /** The best kernel this CPU runs, and the one new indexes use (ARKIVECTOR_SIMD can lower it). */
  cpu(): { detected: NativeKernel; default: NativeKernel };
  /** float → binary16 bits as the addon rounds (nearest even, saturating at ±65504). */
  encodeHalf(x: number): number;
  /**
   * The C heap as glibc's mallinfo2 counts it, in bytes (all 0 on other C libraries): `heap` obtained
   * from the system, `inUse` of it allocated, `free` of it kept for reuse, `mmapped` in mappings of
   * their own (large blocks such as level 0 of a graph). For the memory measurement.
   */
  mallocStats(): { heap: number; inUse: number; free: number; mmapped: number };
  /** Gives the C heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere). */
  trimMalloc(): void;
};

const ADDON_FILE = join('native', 'build', 'Release', 'arkivector_native.node');
let addon: NativeAddon | undefined;

/**
 * The addon's file: in the nearest folder above `from` holding it (src/… in a checkout, dist/src/… installed).
 * @param from where to look from (this module's folder; tests start elsewhere)
 * @throws Error naming the build command and the other engine when no folder holds it
 */
export function addonPath(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let up = 0; up < 6; up++) {
    const candidate = join(dir, ADDON_FILE);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(
    'the native graph engine (the default) is not built: native/build/Release/arkivector_native.node ' +
      'is missing (was the install run with --ignore-scripts?). Build it with `node native/build.mjs` in the ' +
      'package folder (or `npm rebuild arkivector`; needs a C++ compiler, as hnswlib-node does)',
  );
}

/**
 * The addon, loaded once.
 * @returns its exports
 * @throws Error when it was not built
 */
export function nativeAddon(): NativeAddon {
  addon ??= createRequire(import.meta.url)(addonPath()) as NativeAddon;
  return addon;
}
