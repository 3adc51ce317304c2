// HNSW settings the engine derives from a collection definition (pgvector names: m, ef_construction,
// ef_search) plus the engine's own knobs, declared once (declared once: ARCHITECTURE.md §6). Read by graph.ts, the planner
// and the collection store.

import type { CollectionDefinition } from '../../collections/index.ts';

/**
 * hnswlib's search width is `ef_search × EF_SEARCH_SCALE`. At equal ef, hnswlib returns lower recall than
 * pgvector (ARCHITECTURE.md §10.6), and at pgvector's default ef_search = 40 it falls below the ≥ 0.95
 * recall target at defaults; this scale puts the default width above that target, still well above
 * pgvector's QPS (docs/benchmarks.md).
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
export const HNSW_INITIAL_CAPACITY = 16;

/**
 * Up to this many live records a collection is searched at its definition's width (`ef_search ×
 * EF_SEARCH_SCALE`): up to there, on the benchmark data (ARCHITECTURE.md §10.1), the default width meets
 * the recall target (docs/engine.md, "Search width at scale").
 */
export const WIDTH_GROWTH_FROM = 100_000;
/**
 * Above it the width grows as `(live / WIDTH_GROWTH_FROM) ^ WIDTH_GROWTH_EXPONENT`: a graph of fixed m
 * needs a wider search for the same recall as it grows, and the width the recall target needs grows as a
 * power of the size, not its logarithm; this exponent keeps the default width above it at each size
 * (docs/engine.md, "Search width at scale").
 */
export const WIDTH_GROWTH_EXPONENT = 0.6;

/**
 * The factor the definition's width is multiplied by at this live count: 1 up to WIDTH_GROWTH_FROM, then
 * `(live / WIDTH_GROWTH_FROM) ^ WIDTH_GROWTH_EXPONENT`. A function of the live count alone, so every node
 * at the same block (the same live records) searches at the same width and answers alike; a width
 * calibrated per collection from sampled answers would depend on when each node measured.
 * @param live the collection's live records
 * @example widthGrowth(1_000_000) // 3.98 (10^0.6)
 */
export function widthGrowth(live: number): number {
  if (!(live > WIDTH_GROWTH_FROM)) return 1;
  return (live / WIDTH_GROWTH_FROM) ** WIDTH_GROWTH_EXPONENT;
}

/**
 * hnswlib's ef for a search.
 * @param definition the collection definition (its `index.ef_search` is the default width)
 * @param k results wanted
 * @param live the collection's live records (the default width grows with it, widthGrowth)
 * @param efSearch per-request `ef_search`: the caller's width, taken as it is (not grown)
 * @returns max(k, round(ef_search × EF_SEARCH_SCALE)) for a per-request ef_search; otherwise
 *   max(k, min(HNSW_MAX_WIDEN_EF, round(index.ef_search × EF_SEARCH_SCALE × widthGrowth(live))))
 * @example effectiveEf(def, 10, 50_000) // 100 with the default ef_search = 40
 */
export function effectiveEf(definition: CollectionDefinition, k: number, live: number, efSearch?: number): number {
  if (efSearch !== undefined && Number.isFinite(efSearch) && efSearch > 0)
    return Math.max(k, Math.round(efSearch * EF_SEARCH_SCALE));
  const grown = Math.round(definition.index.ef_search * EF_SEARCH_SCALE * widthGrowth(live));
  return Math.max(k, Math.min(HNSW_MAX_WIDEN_EF, grown));
}

/**
 * Below this many candidates an exact scan is faster than the graph and exact (ARCHITECTURE.md §10.2: the
 * crossover lies at about a million multiply-adds, and this fit in the dimension goes through the
 * crossovers measured there).
 * @param dim the collection's dimension
 * @returns the candidate count up to which the planner scans exactly
 * @example exactThreshold(384) // 4000
 */
export function exactThreshold(dim: number): number {
  return Math.round(3000 + 384000 / Math.max(1, dim));
}
