// Thin wrapper over one hnswlib-node HierarchicalNSW: build, insert (reusing deleted slots), delete,
// search with an optional label filter, snapshot. Used only by CollectionStore, which owns labels and
// decides what is visible. The metric arrives as a MetricOps entry; nothing here branches on it except
// through `ops.space` / `ops.fromHnsw`. `Graph` is what the store needs of any graph engine: this one
// (the default) and the native half-precision one (halfGraph.ts); engine.ts picks between them.

import hnswlib from 'hnswlib-node';
import type { MetricOps } from '../metrics.ts';
import { HNSW_INITIAL_CAPACITY, HNSW_RANDOM_SEED } from './params.ts';

const { HierarchicalNSW } = hnswlib;
type Native = InstanceType<typeof HierarchicalNSW>;

export type GraphParams = { m: number; efConstruction: number };

/** One graph search's answer: labels ascending by pgvector distance, and how many filter checks it made. */
export type GraphHits = { labels: number[]; distances: number[]; checks: number };

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
  allowed?: { predicate: (slot: number) => boolean; bits: () => Uint8Array };
};

/**
 * The capacity a graph needs for `extra` more inserts (reusing deleted slots first), grown by at least ×1.5.
 * @returns the new capacity, or undefined when the graph has room
 */
export function grownCapacity(count: number, extra: number, deleted: number, capacity: number): number | undefined {
  const need = count + Math.max(0, extra - deleted);
  return need > capacity ? Math.max(need, Math.ceil(capacity * 1.5)) : undefined;
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
  reserve(extra: number): void;
  add(vector: Float32Array, label: number): void;
  remove(label: number): void;
  search(query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits;
  /**
   * An exact scan in the engine's own kernels over every label not deleted, or over `candidates`
   * (engines that hold their vectors in a form the scan can read; absent: the store scans its slab).
   */
  exact?(query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits;
  write(path: string): Promise<void>;
}

export class HnswGraph implements Graph {
  readonly engine = 'hnswlib-node';
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  readonly #native: Native;
  /** hnswlib takes number[] only; one reused buffer avoids an allocation per call (it copies it). */
  readonly #scratch: number[];
  #currentEf = -1;
  /** hnswlib's maxElements, kept here: asking the addon costs a native call per search. */
  #capacity: number;
  /** Labels marked deleted whose slots hnswlib has not reused yet. */
  deleted = 0;

  private constructor(ops: MetricOps, dim: number, params: GraphParams, native: Native) {
    this.ops = ops;
    this.dim = dim;
    this.params = params;
    this.#native = native;
    this.#capacity = native.getMaxElements();
    this.#scratch = new Array<number>(dim).fill(0);
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
    const native = new HierarchicalNSW(ops.space, dim);
    // allowReplaceDeleted: inserts reuse the memory of deleted elements, so churn does not grow the graph.
    native.initIndex(Math.max(16, capacity), params.m, params.efConstruction, HNSW_RANDOM_SEED, true);
    return new HnswGraph(ops, dim, params, native);
  }

  /**
   * Loads a graph written by `write`.
   * @param path the file
   * @returns the graph (deleted count to be restored by the caller)
   * @example await HnswGraph.read(METRIC_OPS.l2, 8, params, '/snap/hnsw.bin')
   */
  static async read(ops: MetricOps, dim: number, params: GraphParams, path: string): Promise<HnswGraph> {
    const native = new HierarchicalNSW(ops.space, dim);
    await native.readIndex(path, true);
    return new HnswGraph(ops, dim, params, native);
  }

  /** hnswlib's `writeIndex`: graph, vectors and deleted marks. */
  async write(path: string): Promise<void> {
    await this.#native.writeIndex(path);
  }

  /** Elements hnswlib holds, deleted ones included. */
  get elementCount(): number {
    return this.#native.getCurrentCount();
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Makes room for `extra` inserts (after reusing deleted slots), growing by at least ×1.5. */
  reserve(extra: number): void {
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
    const buf = this.#scratch;
    for (let i = 0; i < buf.length; i++) buf[i] = vector[i]!;
    if (this.deleted > 0) {
      this.#native.addPoint(buf, label, true);
      this.deleted--;
    } else {
      this.#native.addPoint(buf, label);
    }
  }

  /** Marks a label deleted (O(1)); its slot is reused by a later `add`. */
  remove(label: number): void {
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
    if (ef !== this.#currentEf) {
      this.#native.setEf(ef);
      this.#currentEf = ef;
    }
    const buf = this.#scratch;
    for (let i = 0; i < buf.length; i++) buf[i] = query[i]!;
    const kk = Math.min(k, this.#capacity);
    let checks = 0;
    let res: { neighbors: number[]; distances: number[] };
    if (filter === undefined) res = this.#native.searchKnn(buf, kk);
    else {
      const labelSlot = filter.labelSlot;
      const predicate = filter.allowed?.predicate;
      res = this.#native.searchKnn(buf, kk, (label: number) => {
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
