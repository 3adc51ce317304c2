// Thin wrapper over one hnswlib-node HierarchicalNSW: build, insert (reusing deleted slots), delete,
// search with an optional label filter, snapshot. Used only by CollectionStore, which owns labels and
// decides what is visible. The metric arrives as a MetricOps entry; nothing here branches on it except
// through `ops.space` / `ops.fromHnsw`. `Graph` is what the store needs of any graph engine: this one
// (the default) and the native half-precision one (halfGraph.ts); engine.ts picks between them.
//
// The native index is created at the first insert, not with the graph: hnswlib allocates 65,536 label
// mutexes (2.6 MB) per index whatever its capacity, and anyone can define collections that never hold a
// vector. An index that never held one is written as hnswlib's own header of an empty index (and read
// back as a graph without an index).

import { open, writeFile } from 'node:fs/promises';
import hnswlib from 'hnswlib-node';
import type { MetricOps } from '../metrics.ts';
import { HNSW_INITIAL_CAPACITY, HNSW_RANDOM_SEED } from './params.ts';

const { HierarchicalNSW } = hnswlib;
type Native = InstanceType<typeof HierarchicalNSW>;

export type GraphParams = { m: number; efConstruction: number };

/** One graph search's answer: labels ascending by pgvector distance, and how many filter checks it made. */
export type GraphHits = {
  labels: number[];
  distances: number[];
  checks: number;
  /** The ACORN walk's descent landed among allowed elements (false: the set lies away from the query). */
  landed?: boolean;
};

/** The graph engines: hnswlib-node (float32 inside the graph) or arkivector's own addon (binary16). */
export const GRAPH_ENGINES = ['hnswlib-node', 'native'] as const;
export type GraphEngine = (typeof GRAPH_ENGINES)[number];

/**
 * Which labels a search may return: those whose slot (`labelSlot[label]`, −1 for labels readers must
 * not see) is ≥ 0 and, with `allowed`, passes it. Each engine takes the form it is fast with: the
 * predicate per visited node (hnswlib-node calls back into JS), or the whole set as a bitset over slots,
 * built once per query (the native engine).
 */
export type GraphFilter = {
  labelSlot: Int32Array;
  /**
   * `count`: how many slots pass (an upper bound is fine); sizes the native walk's entry sample. `farEf`:
   * the ACORN walk's width instead of ef when its descent does not land among allowed elements; 0: no
   * answer then (`landed` false), for a caller that answers such sets by the exact scan. `nearScale`:
   * where it lands, its width is ef × the allowed share around the landing × this (at least 2k; 0: ef).
   */
  allowed?: {
    predicate: (slot: number) => boolean;
    bits: () => Uint8Array;
    count?: number;
    farEf?: number;
    nearScale?: number;
  };
};

/**
 * How much a full graph grows at least. hnswlib allocates its per-element mutex (40 bytes), level and
 * visited mark (46 bytes) for the whole capacity and writes them all at each resize: ×1.5 left up to
 * 23 bytes a vector unused, ×1.125 up to 6. A resize costs O(capacity) (level 0 moves by remapping, not
 * copying): over a graph's growth those 46 bytes are written about 9 times at ×1.125 (3 at ×1.5), a
 * few hundred bytes of memset per insert against an insert's ~0.5 ms.
 */
export const GRAPH_GROWTH = 1.125;

/**
 * The capacity a graph needs for `extra` more inserts (reusing deleted slots first), grown by at least
 * ×GRAPH_GROWTH.
 * @returns the new capacity, or undefined when the graph has room
 */
export function grownCapacity(count: number, extra: number, deleted: number, capacity: number): number | undefined {
  const need = count + Math.max(0, extra - deleted);
  return need > capacity ? Math.max(need, Math.ceil(capacity * GRAPH_GROWTH)) : undefined;
}

/** What a collection store needs of a graph, whichever engine holds it. */
export interface Graph {
  readonly engine: GraphEngine;
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  /** Labels marked deleted whose slots the engine has not reused yet. */
  deleted: number;
  readonly elementCount: number;
  readonly capacity: number;
  /** Whether the engine's index exists yet (an empty collection may allocate nothing). */
  readonly allocated: boolean;
  reserve(extra: number): void;
  add(vector: Float32Array, label: number): void;
  remove(label: number): void;
  search(query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits;
  /**
   * Whether a filtered `search` walks through allowed elements only, from entry points inside the
   * allowed set (the native engine's ACORN-style walk), rather than through every element keeping the
   * allowed ones (hnswlib's). The planner sizes the walk differently for each (planner.ts).
   */
  readonly filteredWalk?: 'acorn';
  /**
   * An exact scan in the engine's own kernels over every label not deleted, or over `candidates`
   * (engines that hold their vectors in a form the scan can read; absent: the store scans its slab).
   */
  exact?(query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits;
  /**
   * The vector stored under a live label, decoded into `out` (engines that keep their vectors in the
   * store's own binary16 form: the store then keeps no slab of its own beside the graph).
   */
  vector?(label: number, out: Float32Array): Float32Array;
  /**
   * The unfiltered walk (`search` without a filter) and the exact scan over every label (`exact`
   * without candidates) on a thread of the engine's own (the native engine), answering what the
   * synchronous call answers for the graph as it was when called: every change waits for them.
   */
  searchAsync?(query: Float32Array, k: number, ef: number): Promise<GraphHits>;
  exactAsync?(query: Float32Array, k: number, candidates?: Uint32Array): Promise<GraphHits>;
  /**
   * The filtered walk (`search` with `filter.allowed`) on a thread, over the labels set in `allowedLabels`
   * (a bitset over labels the caller computed from the filter at the moment of the call; the thread owns
   * a copy). `count`, `farEf` and `nearScale` as in GraphFilter.
   */
  filteredAsync?(
    query: Float32Array,
    k: number,
    ef: number,
    allowedLabels: Uint8Array,
    allowed: { count?: number; farEf?: number; nearScale?: number },
  ): Promise<GraphHits>;
  /** Counts every add, remove and reserve (engines with `searchAsync`): whether the graph moved meanwhile. */
  readonly changes?: number;
  write(path: string): Promise<void>;
}

export class HnswGraph implements Graph {
  readonly engine = 'hnswlib-node';
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  /** Undefined until the first insert (see the top of this file). */
  #native: Native | undefined;
  /** hnswlib takes number[] only; one reused buffer avoids an allocation per call (it copies it). */
  #scratch: number[] | undefined;
  #currentEf = -1;
  /** hnswlib's maxElements, kept here: asking the addon costs a native call per search. */
  #capacity: number;
  /** Labels marked deleted whose slots hnswlib has not reused yet. */
  deleted = 0;

  private constructor(ops: MetricOps, dim: number, params: GraphParams, native: Native | undefined, capacity: number) {
    this.ops = ops;
    this.dim = dim;
    this.params = params;
    this.#native = native;
    this.#capacity = native?.getMaxElements() ?? capacity;
  }

  /** Whether the native index exists (it does from the first insert on). */
  get allocated(): boolean {
    return this.#native !== undefined;
  }

  #index(capacity: number): Native {
    if (this.#native) return this.#native;
    const native = new HierarchicalNSW(this.ops.space, this.dim);
    // allowReplaceDeleted: inserts reuse the memory of deleted elements, so churn does not grow the graph.
    native.initIndex(capacity, this.params.m, this.params.efConstruction, HNSW_RANDOM_SEED, true);
    this.#native = native;
    this.#capacity = native.getMaxElements();
    return native;
  }

  #buffer(): number[] {
    this.#scratch ??= new Array<number>(this.dim).fill(0);
    return this.#scratch;
  }

  /**
   * An empty graph.
   * @param ops the metric
   * @param dim vector dimension
   * @param params `m`, `efConstruction`
   * @param capacity elements to allocate for up front
   * @returns the graph
   * @example HnswGraph.create(METRIC_OPS.cosine, 384, { m: 16, efConstruction: 64 })
   */
  static create(ops: MetricOps, dim: number, params: GraphParams, capacity = HNSW_INITIAL_CAPACITY): HnswGraph {
    return new HnswGraph(ops, dim, params, undefined, Math.max(16, capacity));
  }

  /**
   * Loads a graph written by `write`.
   * @param path the file
   * @returns the graph (deleted count to be restored by the caller)
   * @example await HnswGraph.read(METRIC_OPS.l2, 8, params, '/snap/hnsw.bin')
   */
  static async read(ops: MetricOps, dim: number, params: GraphParams, path: string): Promise<HnswGraph> {
    const empty = await emptyIndexCapacity(path);
    if (empty !== undefined) return new HnswGraph(ops, dim, params, undefined, empty);
    const native = new HierarchicalNSW(ops.space, dim);
    await native.readIndex(path, true);
    return new HnswGraph(ops, dim, params, native, 0);
  }

  /** hnswlib's `writeIndex`: graph, vectors and deleted marks (an index never allocated: its empty header). */
  async write(path: string): Promise<void> {
    if (this.#native) await this.#native.writeIndex(path);
    else await writeFile(path, emptyIndexHeader(this.dim, this.params, this.#capacity));
  }

  /** Elements hnswlib holds, deleted ones included. */
  get elementCount(): number {
    return this.#native?.getCurrentCount() ?? 0;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Makes room for `extra` inserts (after reusing deleted slots), growing by at least ×GRAPH_GROWTH. */
  reserve(extra: number): void {
    if (extra <= 0) return;
    if (!this.#native) {
      this.#index(Math.max(this.#capacity, extra));
      return;
    }
    const grown = grownCapacity(this.#native.getCurrentCount(), extra, this.deleted, this.#capacity);
    if (grown !== undefined) {
      this.#native.resizeIndex(grown);
      this.#capacity = this.#native.getMaxElements();
    }
  }

  /**
   * Inserts a vector under a label never used in this graph. Call `reserve` first.
   * @param vector float32 values (length = dim)
   * @param label a fresh uint32 label
   */
  add(vector: Float32Array, label: number): void {
    const native = this.#index(this.#capacity);
    const buf = this.#buffer();
    for (let i = 0; i < buf.length; i++) buf[i] = vector[i]!;
    if (this.deleted > 0) {
      native.addPoint(buf, label, true);
      this.deleted--;
    } else {
      native.addPoint(buf, label);
    }
  }

  /** Marks a label deleted (O(1)); its slot is reused by a later `add`. */
  remove(label: number): void {
    // Only inserted labels are removed, so the index exists; hnswlib throws for an unknown label.
    if (!this.#native) throw new RangeError(`label ${label} is not in the graph`);
    this.#native.markDelete(label);
    this.deleted++;
  }

  /**
   * k nearest labels.
   * @param query float32 query (length = dim)
   * @param k results wanted (clamped to the capacity, as hnswlib requires)
   * @param ef search width
   * @param filter the labels allowed, checked during traversal (one JS call per visited node)
   * @returns labels and pgvector distances, nearest first, and the filter checks made
   */
  search(query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits {
    // An empty graph answers nothing (hnswlib checks that itself, without a second native call).
    const native = this.#native;
    if (!native) return { labels: [], distances: [], checks: 0 };
    if (ef !== this.#currentEf) {
      native.setEf(ef);
      this.#currentEf = ef;
    }
    const buf = this.#buffer();
    for (let i = 0; i < buf.length; i++) buf[i] = query[i]!;
    const kk = Math.min(k, this.#capacity);
    let checks = 0;
    let res: { neighbors: number[]; distances: number[] };
    if (filter === undefined) res = native.searchKnn(buf, kk);
    else {
      const labelSlot = filter.labelSlot;
      const predicate = filter.allowed?.predicate;
      res = native.searchKnn(buf, kk, (label: number) => {
        checks++;
        const s = label < labelSlot.length ? labelSlot[label]! : -1;
        return s >= 0 && (predicate === undefined || predicate(s));
      });
    }
    const distances = res.distances;
    const fromHnsw = this.ops.fromHnsw;
    for (let i = 0; i < distances.length; i++) distances[i] = fromHnsw(distances[i]!);
    return { labels: res.neighbors, distances, checks };
  }
}

/**
 * The header hnswlib's `saveIndex` writes (hnswalg.h), all native-endian: offsetLevel0, max_elements,
 * cur_element_count, size_data_per_element, label_offset, offsetData (size_t each), maxlevel (int),
 * enterpoint_node (uint32), maxM, maxM0, M (size_t), mult (double), ef_construction (size_t). An index with
 * no element is the header alone.
 */
const HEADER_BYTES = 96;

function emptyIndexHeader(dim: number, params: GraphParams, capacity: number): Buffer {
  // Both hnswlib spaces this engine uses (l2, ip) store float32 vectors.
  const linksLevel0 = params.m * 2 * 4 + 4;
  const dataSize = dim * 4;
  const b = Buffer.alloc(HEADER_BYTES);
  const u64 = (offset: number, v: number) => b.writeBigUInt64LE(BigInt(v), offset);
  u64(0, 0);
  u64(8, capacity);
  u64(16, 0);
  u64(24, linksLevel0 + dataSize + 8);
  u64(32, linksLevel0 + dataSize);
  u64(40, linksLevel0);
  b.writeInt32LE(-1, 48);
  b.writeUInt32LE(0xffffffff, 52);
  u64(56, params.m);
  u64(64, params.m * 2);
  u64(72, params.m);
  b.writeDoubleLE(1 / Math.log(params.m), 80);
  u64(88, Math.max(params.efConstruction, params.m));
  return b;
}

/** The max_elements of an index file holding no element (header only), else undefined. */
async function emptyIndexCapacity(path: string): Promise<number | undefined> {
  const file = await open(path, 'r');
  try {
    if ((await file.stat()).size !== HEADER_BYTES) return undefined;
    const b = Buffer.alloc(HEADER_BYTES);
    await file.read(b, 0, HEADER_BYTES, 0);
    if (b.readBigUInt64LE(16) !== 0n) return undefined;
    const capacity = Number(b.readBigUInt64LE(8));
    return capacity >= 1 && capacity <= 2 ** 32 ? capacity : undefined;
  } finally {
    await file.close();
  }
}
