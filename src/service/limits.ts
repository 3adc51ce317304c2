// Request limits of the read and write operations, declared once: the zod schemas, the REST layer and
// the tool descriptions all read them from here.
export const SEARCH_K_MIN = 1;
export const SEARCH_K_MAX = 50;
export const SEARCH_K_DEFAULT = 10;
export const WHERE_MAX_CHARS = 4096;
export const TEXT_MAX_CHARS = 8192;
export const REF_MAX_CHARS = 300;
export const MIN_BLOCK_TIMEOUT_MS_DEFAULT = 10_000;
/** REST request bodies above this are refused with payload_too_large. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
export const UPSERT_MAX_ENTITIES = 100;
export const DOCUMENT_MAX_CHARS = 65_536;
export const RECEIPT_TIMEOUT_MS_DEFAULT = 60_000;
/** Entities per page of arkivector_list_entities / GET …/entities. */
export const LIST_LIMIT_MIN = 1;
export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 20;
/**
 * Collections per page of arkivector_list_collections / GET /v1/collections (by name; `cursor` is the last
 * name of the previous page). A page of the largest definitions stays a few megabytes.
 */
export const COLLECTIONS_LIMIT_MIN = 1;
export const COLLECTIONS_LIMIT_MAX = 500;
export const COLLECTIONS_LIMIT_DEFAULT = 100;
/** Longest cursor accepted (a real one is about 150 characters). */
export const CURSOR_MAX_CHARS = 512;
/**
 * Listings kept per node so that later pages answer from the first page's block after the node has
 * moved on; the oldest goes first, and none outlives the TTL. A cursor whose listing is gone (and whose
 * block is not the node's current one) is answered "cursor expired".
 */
export const LIST_PINNED_MAX = 16;
export const LIST_PINNED_TTL_MS = 10 * 60_000;
/** Most entities one delete by filter removes (the rest are reported as `remaining`: call again). */
export const DELETE_BY_FILTER_MAX = 5_000;
/** KuraDB's search_rag / GET /api/search: chunks per branch (1–100; any other value falls back to 10). */
export const RAG_LIMIT_DEFAULT = 10;
export const RAG_LIMIT_MAX = 100;
/** KuraDB's cut-off: semantic hits of a cosine collection scoring below this (cosine similarity) are dropped. */
export const RAG_SEMANTIC_MIN_SCORE = 0.3;
/** Most nearest neighbours a semantic branch looks through to find `limit` chunks that have content. */
export const RAG_CANDIDATES_MAX = 1000;
/**
 * `/v1/status` answers the signer's balance from a cache: refreshed in the background when older than
 * this (one refresh at a time), and a status call waits at most STATUS_BALANCE_WAIT_MS for it.
 */
export const STATUS_BALANCE_MAX_AGE_MS = 10_000;
export const STATUS_BALANCE_WAIT_MS = 1_000;

/**
 * `/v1/status` lists the recall estimate of at most this many collections, the largest first (the
 * estimate is measured only for those listed).
 */
export const STATUS_RECALL_MAX = 100;
