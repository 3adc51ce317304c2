// The graph every store runs on: Graph (graph.ts) over arkivector's own addon (nativeAddon.ts), whose
// hnswlib space keeps every vector once in binary16 and computes distances from binary16 with a kernel
// chosen at run time. A query is rounded to binary16 too, as pgvector casts a query to halfvec. Filters go
// down once per query as typed arrays (the label → slot map, and the allowed slots as a bitset): no call
// into JS per visited node. The index is made at the first insert: an empty collection must cost no index
// (a public chain can define any number of them).

import { stat, writeFile } from 'node:fs/promises';
import { HALF_TO_FLOAT32 } from '../../collections/index.ts';
import type { MetricOps } from '../metrics.ts';
import { type Graph, type GraphFilter, type GraphHits, type GraphParams, grownCapacity } from './graph.ts';
import { type HalfIndex, NATIVE_KERNELS, type NativeKernel, nativeAddon } from './nativeAddon.ts';
import { HNSW_INITIAL_CAPACITY, HNSW_RANDOM_SEED } from './params.ts';

export class HalfGraph implements Graph {
  readonly engine = 'native';
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  #index: HalfIndex | undefined;
  #capacity: number;
  /** The kernel asked for at `create` (tests lower it), for the index made at the first insert. */
  readonly #kernel: NativeKernel | undefined;
  deleted = 0;
  /** Every add, remove and reserve (Graph.changes). */
  changes = 0;
  /**
   * Reused per search: answers (grown to k), stats [hits, checks, landed], the query when not a Float32Array;
   * made at the first search, so a collection never searched (an empty definition) holds none of them.
   */
  #labels = new Uint32Array(0);
  #distances = new Float32Array(0);
  readonly #stats = new Int32Array(3);
  #query: Float32Array | undefined;
  /** What `vector` reads the binary16 patterns into (allocated at the first read). */
  #halves: Uint16Array | undefined;

  private constructor(
    ops: MetricOps,
    dim: number,
    params: GraphParams,
    index: HalfIndex | undefined,
    capacity: number,
    kernel?: NativeKernel,
  ) {
    this.ops = ops;
    this.dim = dim;
    this.params = params;
    this.#index = index;
    this.#capacity = index?.info().capacity ?? capacity;
    this.#kernel = kernel;
  }

  /** The index, made now if this is the first insert. */
  #made(capacity: number): HalfIndex {
    if (this.#index !== undefined) return this.#index;
    const { HalfIndex } = nativeAddon();
    const index = new HalfIndex({
      metric: this.ops.metric,
      dim: this.dim,
      maxElements: Math.max(16, capacity),
      m: this.params.m,
      efConstruction: this.params.efConstruction,
      seed: HNSW_RANDOM_SEED,
      kernel: this.#kernel,
    });
    this.#index = index;
    this.#capacity = index.info().capacity;
    return index;
  }

  /** The index of a graph that holds a label (an empty graph holds none). */
  #holding(): HalfIndex {
    if (this.#index === undefined) throw new RangeError('the graph is empty: it holds no label');
    return this.#index;
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
    // Loaded now, so a node whose addon is missing fails at its first store, not at its first insert.
    nativeAddon();
    return new HalfGraph(ops, dim, params, undefined, capacity, kernel);
  }

  /**
   * Loads a graph written by `write` (synchronously: the file is checked link by link before use).
   * @throws Error when the file does not fit (dim, metric, m) or is damaged
   */
  static async read(ops: MetricOps, dim: number, params: GraphParams, path: string): Promise<HalfGraph> {
    const { HalfIndex } = nativeAddon();
    // An empty file is what `write` leaves for a graph never inserted into: it loads without an index.
    // (A missing file is the addon's to report, as any other it cannot open.)
    const size = await stat(path).then(
      (st) => st.size,
      () => undefined,
    );
    if (size === 0) return new HalfGraph(ops, dim, params, undefined, HNSW_INITIAL_CAPACITY);
    const index = new HalfIndex({ metric: ops.metric, dim, maxElements: 1, m: params.m, path });
    return new HalfGraph(ops, dim, params, index, index.info().capacity);
  }

  /** hnswlib's saveIndex; a graph never inserted into writes an empty file (no index is made for it). */
  async write(path: string): Promise<void> {
    if (this.#index === undefined) await writeFile(path, new Uint8Array(0));
    else this.#index.save(path);
  }

  /** Whether the native index exists (it does from the first insert on). */
  get allocated(): boolean {
    return this.#index !== undefined;
  }

  /** Which distance kernel this graph runs (or will, once its index is made). */
  get kernel(): NativeKernel {
    if (this.#index !== undefined) return this.#index.info().kernel;
    // What the addon will pick: the kernel asked for, never above what the CPU runs.
    const cpu = nativeAddon().cpu();
    if (this.#kernel === undefined) return cpu.default;
    return NATIVE_KERNELS.indexOf(this.#kernel) <= NATIVE_KERNELS.indexOf(cpu.detected) ? this.#kernel : cpu.detected;
  }

  get elementCount(): number {
    return this.#index?.info().count ?? 0;
  }

  get capacity(): number {
    return this.#capacity;
  }

  reserve(extra: number): void {
    if (this.#index === undefined) {
      this.#made(Math.max(this.#capacity, extra));
      return;
    }
    const grown = grownCapacity(this.elementCount, extra, this.deleted, this.#capacity);
    if (grown !== undefined) {
      this.changes++;
      this.#index.resize(grown);
      this.#capacity = this.#index.info().capacity;
    }
  }

  add(vector: Float32Array, label: number): void {
    this.changes++;
    const index = this.#made(this.#capacity);
    if (this.deleted > 0) {
      index.addPoint(vector, label, true);
      this.deleted--;
    } else {
      index.addPoint(vector, label);
    }
  }

  remove(label: number): void {
    this.changes++;
    this.#holding().markDelete(label);
    this.deleted++;
  }

  #grow(k: number): void {
    if (this.#labels.length < Math.max(1, k)) {
      this.#labels = new Uint32Array(Math.max(64, k));
      this.#distances = new Float32Array(Math.max(64, k));
    }
  }

  #hits(): GraphHits {
    return this.#hitsOf(this.#labels, this.#distances, this.#stats[0]!, this.#stats[1]!);
  }

  #hitsOf(fromLabels: Uint32Array, fromDistances: Float32Array, n: number, checks: number): GraphHits {
    const labels: number[] = new Array(n);
    const distances: number[] = new Array(n);
    const fromHnsw = this.ops.fromHnsw;
    for (let i = 0; i < n; i++) {
      labels[i] = fromLabels[i]!;
      distances[i] = fromHnsw(fromDistances[i]!);
    }
    return { labels, distances, checks };
  }

  /** An answer of searchAsync / exactAsync: n labels, then n distances. */
  #asyncHits(answer: ArrayBuffer): GraphHits {
    const n = answer.byteLength >>> 3;
    return this.#hitsOf(new Uint32Array(answer, 0, n), new Float32Array(answer, 4 * n, n), n, 0);
  }

  /**
   * `search` without a filter, on a thread (the addon's searchAsync): the same answer, for the graph as
   * it was when called. `checks` is 0.
   */
  async searchAsync(query: Float32Array, k: number, ef: number): Promise<GraphHits> {
    if (this.#index === undefined) return { labels: [], distances: [], checks: 0 };
    const kk = Math.max(1, Math.min(k, this.#capacity));
    return this.#asyncHits(await this.#index.searchAsync(query, { k: kk, ef: Math.max(1, ef) }));
  }

  /** `exact` over every label not deleted, or over `candidates` (copied when called), on a thread. `checks` is 0. */
  async exactAsync(query: Float32Array, k: number, candidates?: Uint32Array): Promise<GraphHits> {
    if (this.#index === undefined) return { labels: [], distances: [], checks: 0 };
    return this.#asyncHits(await this.#index.exactAsync(query, { k: Math.max(1, k), candidates }));
  }

  /**
   * `search` with an allowed set, on a thread: the same walk over the labels set in `allowedLabels` (what
   * labelSlot and the slot bitset allow, as labels), for the graph as it was when called.
   */
  async filteredAsync(
    query: Float32Array,
    k: number,
    ef: number,
    allowedLabels: Uint8Array,
    allowed: { count?: number; farEf?: number; nearScale?: number },
  ): Promise<GraphHits> {
    if (this.#index === undefined) return { labels: [], distances: [], checks: 0 };
    const kk = Math.max(1, Math.min(k, this.#capacity));
    const passing = this.#passing(allowed.count);
    const answer = await this.#index.filteredAsync(query, {
      k: kk,
      ef: Math.max(1, ef),
      allowedLabels,
      passing,
      farEf: allowed.farEf,
      nearScale: allowed.nearScale,
    });
    // n labels, n distances, then [checks, landed].
    const n = (answer.byteLength - 8) >>> 3;
    const tail = new Uint32Array(answer, 8 * n, 2);
    const hits = this.#hitsOf(new Uint32Array(answer, 0, n), new Float32Array(answer, 4 * n, n), n, tail[0]!);
    hits.landed = tail[1] === 1;
    return hits;
  }

  /** The allowed set's size the filtered walk is told (an estimate is fine), within the addon's bound. */
  #passing(count: number | undefined): number {
    return Math.max(0, Math.min(count ?? this.elementCount, 2 ** 30));
  }

  #queryOf(query: ArrayLike<number>): Float32Array {
    if (query instanceof Float32Array) return query;
    const q = (this.#query ??= new Float32Array(this.dim));
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
    if (this.#index === undefined) return { labels: [], distances: [], checks: 0 };
    const kk = Math.max(1, Math.min(k, this.#capacity));
    this.#grow(kk);
    const q = this.#queryOf(query);
    const width = Math.max(1, ef);
    if (filter === undefined) {
      // The unfiltered call, the one a cheap query makes.
      this.#index.search(q, { k: kk, ef: width, labels: this.#labels, distances: this.#distances, stats: this.#stats });
      return this.#hits();
    }
    const { labelSlot, allowed } = filter;
    const labels = this.#labels;
    const distances = this.#distances;
    const stats = this.#stats;
    if (allowed !== undefined) {
      // The ACORN-style walk: through allowed elements only, from entry points inside the set.
      const passing = this.#passing(allowed.count);
      const { farEf, nearScale } = allowed;
      const bits = allowed.bits();
      this.#index.filteredSearch(q, {
        k: kk,
        ef: width,
        labels,
        distances,
        stats,
        labelSlot,
        allowed: bits,
        passing,
        farEf,
        nearScale,
      });
      const hits = this.#hits();
      hits.landed = this.#stats[2] === 1;
      return hits;
    }
    this.#index.search(q, { k: kk, ef: width, labels, distances, stats, labelSlot });
    return this.#hits();
  }

  /**
   * Exact k nearest among every label not deleted, or among `candidates`, in the graph's own kernels.
   * @returns labels and pgvector distances, nearest first (ties by label)
   */
  exact(query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits {
    if (this.#index === undefined) return { labels: [], distances: [], checks: 0 };
    const kk = Math.max(1, k);
    this.#grow(kk);
    const q = this.#queryOf(query);
    this.#index.exactSearch(q, {
      k: kk,
      labels: this.#labels,
      distances: this.#distances,
      stats: this.#stats,
      candidates,
    });
    return this.#hits();
  }

  /** The vector stored under a label as float32 (its binary16 values, exactly), written into `out`. */
  vector(label: number, out: Float32Array): Float32Array {
    this.#halves ??= new Uint16Array(this.dim);
    const h = this.#halves;
    this.#holding().getHalves(label, h);
    for (let i = 0; i < h.length; i++) out[i] = HALF_TO_FLOAT32[h[i]!]!;
    return out;
  }

  /** The binary16 patterns stored under a label. */
  halves(label: number): Uint16Array {
    const out = new Uint16Array(this.dim);
    this.#holding().getHalves(label, out);
    return out;
  }
}
