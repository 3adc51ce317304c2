// HNSW settings the engine derives from a collection definition (pgvector names: m, ef_construction,
// ef_search) plus the engine's own knobs, declared once (declared once: ARCHITECTURE.md §6). Read by graph.ts, the planner
// and the collection store.

import type { CollectionDefinition } from '../../collections/index.ts';

/**
 * hnswlib's search width is `ef_search × EF_SEARCH_SCALE`. At equal ef, hnswlib-node returns lower
 * recall than pgvector (ARCHITECTURE.md §10.6, 100k × 384: 0.867 vs 0.910 at 40, 0.941 vs 0.957 at 64), and at
 * pgvector's default ef_search = 40 it gives ~0.86 — below the ≥ 0.95 recall target at defaults.
 * 2.5 puts the default at hnswlib ef = 100 (~0.97 measured there), still ~3× pgvector's QPS.
 */
export const EF_SEARCH_SCALE = 2.5;

/** Upper bound for the widened search width when a filtered search under-fills k. */
export const HNSW_MAX_WIDEN_EF = 4000;

/** Fixed seed, so a build from the same inserts gives the same graph (reproducible recall). */
export const HNSW_RANDOM_SEED = 100;

/** Rebuild the graph once marked-deleted, not yet reused labels exceed this share of live ones… */
export const REBUILD_DELETED_RATIO = 0.25;
/** …and this many (small collections are not worth rebuilding). */
export const REBUILD_DELETED_MIN = 1024;

/** The first capacity of a new graph; it grows by GRAPH_GROWTH (graph.ts, resizeIndex) when full. */
export const HNSW_INITIAL_CAPACITY = 1024;

/**
 * hnswlib's ef for a search.
 * @param definition the collection definition (its `index.ef_search` is the default)
 * @param k results wanted
 * @param efSearch per-request override of `ef_search`
 * @returns max(k, round(ef_search × EF_SEARCH_SCALE))
 * @example effectiveEf(def, 10) // 100 with the default ef_search = 40
 */
export function effectiveEf(definition: CollectionDefinition, k: number, efSearch?: number): number {
  const ef =
    efSearch !== undefined && Number.isFinite(efSearch) && efSearch > 0 ? efSearch : definition.index.ef_search;
  return Math.max(k, Math.round(ef * EF_SEARCH_SCALE));
}

/**
 * Below this many candidates an exact scan is faster than the graph and exact (ARCHITECTURE.md §10.2: the
 * crossover is m ≈ 4k at d = 384 and ≈ 6k at d = 128, i.e. about 1M multiply-adds; the fit
 * 3000 + 384000 / dim goes through both points).
 * @param dim the collection's dimension
 * @returns the candidate count up to which the planner scans exactly
 * @example exactThreshold(384) // 4000
 */
export function exactThreshold(dim: number): number {
  return Math.round(3000 + 384000 / Math.max(1, dim));
}
