// What a collection store needs of an HNSW graph, and the growth rule every graph follows. The store and
// the planner see a graph through this interface only; halfGraph.ts implements it over the native addon
// (binary16 inside the graph), and test/engine/hnsw/graphConformance.test.ts holds any implementation to it.

import type { MetricOps } from '../metrics.ts';

export type GraphParams = { m: number; efConstruction: number };

/** One graph search's answer: labels ascending by pgvector distance, and how many filter checks it made. */
export type GraphHits = {
  labels: number[];
  distances: number[];
  checks: number;
  /** The filtered walk's descent landed among allowed elements (false: the set lies away from the query). */
  landed?: boolean;
};

/** The graph engine that serves every store (the name snapshots and graph statistics carry). */
export type GraphEngine = 'native';

/** What the filtered walk is told about its allowed set besides the set itself. */
export type AllowedShape = {
  /** How many slots pass (an upper bound is fine); sizes the walk's entry sample. */
  count?: number;
  /**
   * The walk's width instead of ef when its descent does not land among allowed elements; 0: no answer
   * then (`landed` false), for a caller that answers such sets by the exact scan.
   */
  farEf?: number;
  /** Where it lands, its width is ef × the allowed share around the landing × this (at least 2k; 0: ef). */
  nearScale?: number;
};

/**
 * Which labels a search may return: those whose slot (`labelSlot[label]`, −1 for labels readers must
 * not see) is ≥ 0 and, with `allowed`, whose slot is set in its bitset (made once per query, when the
 * walk asks for it).
 */
export type GraphFilter = {
  labelSlot: Int32Array;
  allowed?: AllowedShape & { bits: () => Uint8Array };
};

/**
 * How much a full graph grows at least. hnswlib allocates a level, an upper-levels pointer and a visited
 * mark per element of capacity and writes the levels at each resize: a small factor leaves little of that
 * unused, and a resize costs O(capacity) of those (level 0 is made usable in place, not copied, and its
 * unused capacity is never touched: native/src/level0.h).
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

/** What a collection store needs of a graph. */
export interface Graph {
  readonly engine: GraphEngine;
  readonly dim: number;
  readonly ops: MetricOps;
  readonly params: GraphParams;
  /** Labels marked deleted whose slots the graph has not reused yet. */
  deleted: number;
  readonly elementCount: number;
  readonly capacity: number;
  /** Whether the graph's index exists yet (an empty collection allocates nothing). */
  readonly allocated: boolean;
  /** Counts every add, remove and reserve: whether the graph moved while a thread answered. */
  readonly changes: number;
  reserve(extra: number): void;
  add(vector: Float32Array, label: number): void;
  remove(label: number): void;
  /** The filtered walk (with `filter.allowed`) moves through allowed elements only, from entry points inside the set. */
  search(query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits;
  /** An exact scan in the graph's own kernels over every label not deleted, or over `candidates`. */
  exact(query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits;
  /** The vector stored under a live label, decoded into `out` (the graph holds the store's only copy). */
  vector(label: number, out: Float32Array): Float32Array;
  /**
   * The unfiltered walk (`search` without a filter) and the exact scan (`exact`) on a thread, answering
   * what the synchronous call answers for the graph as it was when called: every change waits for them.
   */
  searchAsync(query: Float32Array, k: number, ef: number): Promise<GraphHits>;
  exactAsync(query: Float32Array, k: number, candidates?: Uint32Array): Promise<GraphHits>;
  /**
   * The filtered walk on a thread, over the labels set in `allowedLabels` (a bitset over labels the caller
   * computed from the filter at the moment of the call; the thread owns a copy).
   */
  filteredAsync(
    query: Float32Array,
    k: number,
    ef: number,
    allowedLabels: Uint8Array,
    allowed: AllowedShape,
  ): Promise<GraphHits>;
  write(path: string): Promise<void>;
}
