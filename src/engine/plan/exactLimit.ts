// Where the filtered plan (filtered.ts) scans the allowed set exactly instead of walking the graph: up to
// as many allowed records as scanning costs no more than the walk. Both costs are counted in scanned
// records (one distance over a vector read in memory order). The choice depends only on the allowed count
// and the width, so replicas choose alike.

/**
 * What one unit of the walk's width costs, in scanned records: the walk's work grows with its width, and
 * at the default width the scan of this many records per unit costs about what the walk costs.
 */
export const ACORN_EXACT_PER_EF = 40;

/**
 * What the narrowest walk costs, in scanned records: whatever its width, the walk descends the upper
 * levels, tests its landing over a two-hop neighbourhood and reads the allowed set as a bitset before it
 * scores one allowed element. A set up to this size is scanned exactly at any width: the scan costs no
 * more and answers at recall 1, where a narrow walk over a small sparse set loses a tenth of the answer.
 */
export const ACORN_EXACT_MIN = 2000;

/**
 * The largest allowed set the exact scan answers at width `ef`: the set the scan reads for no more than
 * the walk at that width costs.
 * @param ef the search width (hnswlib's ef)
 * @returns allowed records: max(ACORN_EXACT_MIN, ACORN_EXACT_PER_EF × ef)
 * @example acornExactLimit(10) // 2,000; acornExactLimit(100) // 4,000
 */
export function acornExactLimit(ef: number): number {
  return Math.max(ACORN_EXACT_MIN, ACORN_EXACT_PER_EF * ef);
}
