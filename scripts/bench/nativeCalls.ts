// Every call the benches make on the native addon itself, below the engine's HalfGraph: the filtered
// suite's graph methods side by side (the walk with its allowed set, the exact scan of candidates, an
// unfiltered search into preallocated outputs), on this build's addon or another build's (`--baseline`),
// and the C heap's trim before a memory child measures. Kept in one file so that a change of the addon's
// call signatures is made once here.
import { createRequire } from 'node:module';
import { type HalfIndex, type NativeAddon, nativeAddon } from '../../src/engine/hnsw/nativeAddon.ts';

/** Gives the C heap's free pages back to the system; false when the native addon is not built. */
export function trimCHeap(): boolean {
  try {
    nativeAddon().trimMalloc();
    return true;
  } catch {
    return false;
  }
}

/** The graph parameters of a raw index. */
export type RawIndexParams = {
  metric: 'cosine';
  dim: number;
  maxElements: number;
  m: number;
  efConstruction: number;
  seed: number;
};

/** An allowed set as the filtered walk takes it: a bit per label, the label → slot map, its size. */
export type AllowedSet = { bits: Uint8Array; labelSlot: Int32Array; passing: number };

/** One native index, searched into shared outputs: each search answers the labels it found. */
export class RawIndex {
  readonly #index: HalfIndex;
  readonly #labels = new Uint32Array(4096);
  readonly #distances = new Float32Array(4096);
  readonly #stats = new Int32Array(3);

  /** Built from this build's addon, or from the addon file `addonPath` (another build), loading `path` when given. */
  constructor(params: RawIndexParams & { path?: string }, addonPath?: string) {
    const addon = addonPath === undefined ? nativeAddon() : (createRequire(import.meta.url)(addonPath) as NativeAddon);
    this.#index = new addon.HalfIndex(params);
  }

  add(vector: Float32Array, label: number): void {
    this.#index.addPoint(vector, label);
  }

  save(path: string): void {
    this.#index.save(path);
  }

  #outputs(): { labels: Uint32Array; distances: Float32Array; stats: Int32Array } {
    return { labels: this.#labels, distances: this.#distances, stats: this.#stats };
  }

  #hits(): number[] {
    return Array.from(this.#labels.subarray(0, this.#stats[0]!));
  }

  search(q: Float32Array, k: number, ef: number): number[] {
    this.#index.search(q, { k, ef, ...this.#outputs() });
    return this.#hits();
  }

  exact(q: Float32Array, k: number, candidates: Uint32Array): number[] {
    this.#index.exactSearch(q, { k, ...this.#outputs(), candidates });
    return this.#hits();
  }

  /** The filtered walk; `farEf` and `narrow` as the planner passes them (0 and none: the plain walk). */
  filtered(q: Float32Array, k: number, ef: number, allowed: AllowedSet, farEf?: number, narrow?: number): number[] {
    const { bits, labelSlot, passing } = allowed;
    const options = { k, ef, ...this.#outputs(), labelSlot, allowed: bits, passing };
    this.#index.filteredSearch(q, farEf === undefined ? options : { ...options, farEf, nearScale: narrow });
    return this.#hits();
  }
}
