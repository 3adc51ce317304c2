// Hybrid search's fusion: the vector side's and the keyword side's candidates ranked by reciprocal rank
// (keyword.ts rrf), equal scores by entity key, each hit with its vector distance.

import { DimensionMismatchError } from '../collections/index.ts';
import { rrf } from './keyword.ts';
import type { PlannedResult } from './plan/types.ts';
import type { HybridAnswer, HybridSearchParams, RecordSummary, SearchParams } from './searchTypes.ts';

/** Hybrid search ranks this many candidates per list: clamp(3k, 30, 150). */
const HYBRID_POOL_MIN = 30;
const HYBRID_POOL_MAX = 150;

/** The candidates each side of a hybrid search of k ranks. */
export function hybridPool(k: number): number {
  return Math.min(HYBRID_POOL_MAX, Math.max(HYBRID_POOL_MIN, k * 3));
}

/**
 * The k of a hybrid search, its vector checked against the collection's dimension first.
 * @throws DimensionMismatchError
 */
export function hybridK(params: HybridSearchParams, dim: number): number {
  if (params.vector.length !== dim) throw new DimensionMismatchError({ expected: dim, got: params.vector.length });
  return Math.floor(params.k);
}

/** The vector side's search of a hybrid search of k: the candidate pool, with the same filter. */
export function vectorSide(params: HybridSearchParams, k: number): SearchParams {
  return { vector: params.vector, k: hybridPool(k), where: params.where, filter: params.filter };
}

/**
 * The top k of both lists fused.
 * @param vec the vector side's answer
 * @param keyword the keyword side's slots, best first
 * @param at the store's reads: a slot's record, and its vector distance to the query
 */
export function fuse(
  vec: PlannedResult,
  keyword: readonly number[],
  k: number,
  at: { record(slot: number): RecordSummary; distance(slot: number): number },
): HybridAnswer {
  const distance = new Map<number, number>();
  for (let i = 0; i < vec.slots.length; i++) distance.set(vec.slots[i]!, vec.distances[i]!);
  const fused = rrf([vec.slots, keyword])
    .map((f) => ({ ...f, key: at.record(f.slot).key }))
    .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, k);
  const results = fused.map(({ slot, score }) => ({
    record: at.record(slot),
    score,
    distance: distance.get(slot) ?? at.distance(slot),
  }));
  return { results, search_mode: vec.mode };
}
