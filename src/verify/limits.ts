// The verifier's bounds, declared once (docs/verify.md).

/**
 * Vector entities a collection may hold at the answer's block for the verifier to read them all and check
 * completeness (a count, the top k of a search, a listing's total): 5 pages of the node's 200.
 */
export const VERIFY_COMPLETE_MAX = 1_000;
/** The bound with `--complete` (`complete: true`): 500 pages. */
export const VERIFY_COMPLETE_MAX_RAISED = 100_000;
/** Pages of one query the verifier follows at most (the raised bound's, plus room for the definitions). */
export const VERIFY_PAGES_MAX = 520;
/** Calls sent in one JSON-RPC batch at most. */
export const VERIFY_BATCH_MAX = 100;
/** One HTTP request to the RPC. */
export const VERIFY_RPC_TIMEOUT_MS = 30_000;
/** Query text the node accepts (reference/arkiv-gen-d.md §4.2: 8 KiB, 64 predicates), with room to spare. */
export const QUERY_TEXT_MAX_BYTES = 7_000;
export const QUERY_PREDICATES_MAX = 60;
/**
 * A reported distance may differ from the one recomputed from the chain's vector by this much, relative to
 * max(1, |distance|): the node computes in float32 (binary16 vectors), the verifier in float64.
 */
export const DISTANCE_TOLERANCE = 1e-4;
