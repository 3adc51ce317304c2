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
/** TTL of written entities when neither the request nor the collection's default_ttl says. */
export const DEFAULT_WRITE_TTL = { days: 30 } as const;
export const RECEIPT_TIMEOUT_MS_DEFAULT = 60_000;
