// The native graph engine (issue 23, `ARKIVECTOR_ENGINE=native`): the same Graph as graph.ts over
// arkivector's own addon (nativeAddon.ts), whose hnswlib space keeps every vector once in binary16 and
// computes distances from binary16 with a kernel chosen at run time. A query is rounded to binary16
// too, as pgvector casts a query to halfvec. Filters go down once per query as typed arrays (the
// label → slot map, and the allowed slots as a bitset): no call into JS per visited node.

import { HALF_TO_FLOAT32 } from '../../collections/index.ts';
import type { MetricOps } from '../metrics.ts';
import { type Graph, type GraphFilter, type GraphHits, type GraphParams, grownCapacity } from './graph.ts';
import { type HalfIndex, type NativeKernel, nativeAddon } from './nativeAddon.ts';
import { HNSW_INITIAL_CAPACITY, HNSW_RANDOM_SEED } from './params.ts';

export class HalfGraph implements Graph {
  readonly engine = 'native';
  readonly filteredWalk = 'acorn';
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  readonly #index: HalfIndex;
  #capacity: number;
  deleted = 0;
  /** Reused per search: answers (grown to k), stats [hits, checks, landed], the query when not a Float32Array. */
  #labels = new Uint32Array(64);
  #distances = new Float32Array(64);
  readonly #stats = new Int32Array(3);
  readonly #query: Float32Array;
  /** What `vector` reads the binary16 patterns into (allocated at the first read). */
  #halves: Uint16Array | undefined;

  private constructor(ops: MetricOps, dim: number, params: GraphParams, index: HalfIndex) {
    this.ops = ops;
    this.dim = dim;
    this.params = params;
    this.#index = index;
    this.#capacity = index.info().capacity;
    this.#query = new Float32Array(dim);
  }

  /**
   * An empty graph.
   * @param kernel lowers the distance kernel (tests); default: the best this CPU runs
   * @example HalfGraph.create(METRIC_OPS.cosine, 384, { m: 16, efConstruction: 64 })
   */
  static create(
    ops: MetricOps,
    dim: number,
    params: GraphParams,
    capacity = HNSW_INITIAL_CAPACITY,
    kernel?: NativeKernel,
  ): HalfGraph {
    const { HalfIndex } = nativeAddon();
    const index = new HalfIndex({
      metric: ops.metric,
      dim,
      maxElements: Math.max(16, capacity),
      m: params.m,
      efConstruction: params.efConstruction,
      seed: HNSW_RANDOM_SEED,
      kernel,
    });
    return new HalfGraph(ops, dim, params, index);
  }

  /**
   * Loads a graph written by `write` (synchronously: the file is checked link by link before use).
   * @throws Error when the file does not fit (dim, metric, m) or is damaged
   */
  static async read(ops: MetricOps, dim: number, params: GraphParams, path: string): Promise<HalfGraph> {
    const { HalfIndex } = nativeAddon();
    const index = new HalfIndex({ metric: ops.metric, dim, maxElements: 1, m: params.m, path });
    return new HalfGraph(ops, dim, params, index);
  }

  async write(path: string): Promise<void> {
    this.#index.save(path);
  }

  /** Always allocated: the native index is made with the graph (lazy allocation is hnswlib-node's, graph.ts). */
  get allocated(): boolean {
    return true;
  }

  /** Which distance kernel this graph runs. */
  get kernel(): NativeKernel {
    return this.#index.info().kernel;
  }

  get elementCount(): number {
    return this.#index.info().count;
  }

  get capacity(): number {
    return this.#capacity;
  }

  reserve(extra: number): void {
    const grown = grownCapacity(this.elementCount, extra, this.deleted, this.#capacity);
    if (grown !== undefined) {
      this.#index.resize(grown);
      this.#capacity = this.#index.info().capacity;
    }
  }

  add(vector: Float32Array, label: number): void {
    if (this.deleted > 0) {
      this.#index.addPoint(vector, label, true);
      this.deleted--;
    } else {
      this.#index.addPoint(vector, label);
    }
  }

  remove(label: number): void {
    this.#index.markDelete(label);
    this.deleted++;
  }

  #grow(k: number): void {
    if (this.#labels.length < k) {
      this.#labels = new Uint32Array(k);
      this.#distances = new Float32Array(k);
    }
  }

  #hits(): GraphHits {
    const n = this.#stats[0]!;
    const labels: number[] = new Array(n);
    const distances: number[] = new Array(n);
    const fromHnsw = this.ops.fromHnsw;
    for (let i = 0; i < n; i++) {
      labels[i] = this.#labels[i]!;
      distances[i] = fromHnsw(this.#distances[i]!);
    }
    return { labels, distances, checks: this.#stats[1]! };
  }

  #queryOf(query: ArrayLike<number>): Float32Array {
    if (query instanceof Float32Array) return query;
    const q = this.#query;
    for (let i = 0; i < q.length; i++) q[i] = query[i]!;
    return q;
  }

  /**
   * k nearest labels.
   * @param filter the labels allowed: the label → slot map, and the allowed slots as a bitset (then
   *   the ACORN-style walk of native/src/filteredSearch.h; the map alone hides labels, hnswlib's walk)
   * @returns labels and pgvector distances, nearest first, and the filter checks the walk made
   */
  search(query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits {
    const kk = Math.max(1, Math.min(k, this.#capacity));
    this.#grow(kk);
    const q = this.#queryOf(query);
    const width = Math.max(1, ef);
    const allowed = filter?.allowed;
    const out = [this.#labels, this.#distances, this.#stats] as const;
    if (filter !== undefined && allowed !== undefined) {
      // The ACORN-style walk: through allowed elements only, from entry points inside the set.
      const passing = Math.max(0, Math.min(allowed.count ?? this.elementCount, 2 ** 30));
      const { farEf, nearScale } = allowed;
      this.#index.filteredSearch(q, kk, width, ...out, filter.labelSlot, allowed.bits(), passing, farEf, nearScale);
      const hits = this.#hits();
      hits.landed = this.#stats[2] === 1;
      return hits;
    }
    this.#index.search(q, kk, width, ...out, filter?.labelSlot);
    return this.#hits();
  }

  /**
   * Exact k nearest among every label not deleted, or among `candidates`, in the graph's own kernels.
   * @returns labels and pgvector distances, nearest first (ties by label)
   */
  exact(query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits {
    const kk = Math.max(1, k);
    this.#grow(kk);
    this.#index.exactSearch(this.#queryOf(query), kk, this.#labels, this.#distances, this.#stats, candidates);
    return this.#hits();
  }

  /** The vector stored under a label as float32 (its binary16 values, exactly), written into `out`. */
  vector(label: number, out: Float32Array): Float32Array {
    this.#halves ??= new Uint16Array(this.dim);
    const h = this.#halves;
    this.#index.getHalves(label, h);
    for (let i = 0; i < h.length; i++) out[i] = HALF_TO_FLOAT32[h[i]!]!;
    return out;
  }

  /** The binary16 patterns stored under a label. */
  halves(label: number): Uint16Array {
    const out = new Uint16Array(this.dim);
    this.#index.getHalves(label, out);
    return out;
  }
}
