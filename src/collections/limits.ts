// Limits, defaults and wire constants of on-chain schema v1 (ARCHITECTURE.md §8), declared once.
// Read by the collection codecs, the zod schemas, the command-line parser and the engine.

/** Smallest vector dimension a collection may declare. */
export const DIM_MIN = 1;
/** Largest vector dimension a collection may declare (pgvector's halfvec limit). */
export const DIM_MAX = 4000;

/** HNSW `m` (links per node): pgvector's default and bounds. */
export const HNSW_DEFAULT_M = 16;
export const HNSW_MIN_M = 2;
export const HNSW_MAX_M = 100;

/** HNSW `ef_construction`: pgvector's default and bounds; pgvector also requires `ef_construction >= 2 * m`. */
export const HNSW_DEFAULT_EF_CONSTRUCTION = 64;
export const HNSW_MIN_EF_CONSTRUCTION = 4;
export const HNSW_MAX_EF_CONSTRUCTION = 1000;

/** HNSW `ef_search`: pgvector's default and bounds. */
export const HNSW_DEFAULT_EF_SEARCH = 40;
export const HNSW_MIN_EF_SEARCH = 1;
export const HNSW_MAX_EF_SEARCH = 1000;

/** Collection names: `notes`, `demo.docs`; at most this many characters. */
export const COLLECTION_NAME_MAX_CHARS = 63;
export const COLLECTION_NAME_REGEX = new RegExp(`^[a-z0-9][a-z0-9._-]{0,${COLLECTION_NAME_MAX_CHARS - 1}}$`);
/** User attribute names (a subset of Arkiv's `^[\p{L}_][\p{L}\p{N}_]*$`). */
export const ATTRIBUTE_NAME_REGEX = /^[a-z_][a-z0-9_]{0,31}$/;
/** Attribute names with this prefix belong to arkivector itself. */
export const RESERVED_PREFIX = 'arkivector_';

/** Vector ids: 1–256 bytes of UTF-8. */
export const ID_MIN_BYTES = 1;
export const ID_MAX_BYTES = 256;
/**
 * The form of an Arkiv entity key (`0x` + 64 hex digits, case-insensitive in both parts: `0X` and upper-case
 * digits name the same key). A `ref` of this form is always a key, so an id of
 * this form is refused at write time and skipped when read: it could otherwise take over look-ups of the
 * entity whose key it spells.
 */
export const ENTITY_KEY_FORM_REGEX = /^0[xX][0-9a-fA-F]{64}$/;
/** `str` attribute values: at most 1024 bytes of UTF-8. */
export const STR_ATTRIBUTE_MAX_BYTES = 1024;

/** Largest unsigned integer a `uint` attribute holds (2^53 − 1, the largest exact JS integer). */
export const UINT_ATTRIBUTE_MAX = Number.MAX_SAFE_INTEGER;
/** `i32` bounds; stored as `v + I32_OFFSET`. */
export const I32_MIN = -2147483648;
export const I32_MAX = 2147483647;
export const I32_OFFSET = 2147483648;

/** Block time of Arkiv v1 chains, used to turn TTL durations into blocks. */
export const BLOCK_TIME_SECONDS = 2;

/** Content type of a collection definition entity (UTF-8 JSON payload). */
export const COLLECTION_CONTENT_TYPE = 'application/vnd.arkivector.collection.v1+json';
/** Content type of a vector entity (halfvec + document payload). */
export const VECTOR_CONTENT_TYPE = 'application/vnd.arkivector.vector.v1';

/** Reserved string attributes every arkivector entity carries. */
export const ATTR_TYPE = 'arkivector_type';
export const ATTR_COLLECTION = 'arkivector_collection';
export const ATTR_ID = 'arkivector_id';
/** Values of `arkivector_type`. */
export const ENTITY_TYPE_COLLECTION = 'collection';
export const ENTITY_TYPE_VECTOR = 'vector';

/** Vector payload header: u8 format, u8 element, u16 LE dim. */
export const VECTOR_PAYLOAD_FORMAT = 1;
/** Element code 1 = IEEE-754 binary16. */
export const VECTOR_ELEMENT_BINARY16 = 1;
export const VECTOR_PAYLOAD_HEADER_BYTES = 4;

/** Largest finite binary16 value. */
export const HALF_MAX = 65504;

/**
 * Bounds on a collection definition found on chain (ARCHITECTURE.md §8.1–8.2, bounds). Anyone may write a
 * definition and every list answer repeats it, so a violator is skipped and counted, never served.
 */
export const DEFINITION_PAYLOAD_MAX_BYTES = 64 * 1024;
/** `description`: at most this many UTF-8 bytes. */
export const DEFINITION_DESCRIPTION_MAX_BYTES = 1024;
/** `writers`: at most this many addresses. */
export const DEFINITION_WRITERS_MAX = 256;
/** `attributes`: at most this many declared attributes. */
export const DEFINITION_ATTRIBUTES_MAX = 64;
/** `embedder`: the whole object, as JSON, at most this many UTF-8 bytes (`model` included). */
export const DEFINITION_EMBEDDER_MAX_BYTES = 1024;

/**
 * Largest decoded size (payload + content type + attribute names and values, in bytes) of an entity the
 * indexer keeps. A vector of 4000 dims with a 65,536-character document and 64 full `str` attributes fits;
 * anything larger is skipped and counted in its collection's `stats.rejected` (a compressed calldata of a
 * few hundred bytes can otherwise make every node hold megabytes).
 */
export const ENTITY_DECODED_MAX_BYTES = 512 * 1024;

/**
 * Bounds on one DB-chain registry transaction a follower decodes: its calldata, and the operations its
 * `execute` array declares. Both are read from the transaction alone (its hash checked first), so every node
 * skips the same ones; a transaction over either is skipped and counted (`anomalies`), never decoded, and our
 * writer refuses a batch over them before signing. Far above what a block can carry on Tiramisu.
 */
export const TX_CALLDATA_MAX_BYTES = 1024 * 1024;
export const TX_OPERATIONS_MAX = 4096;

/**
 * Collection definitions a node follows (its --collections and --collection-owner names aside): at most
 * this many per creator (the address that created it, which a change of owner does not move), and this
 * many in all, chosen by creation position (the earliest created first), so every node at the same block
 * follows the same ones. The rest are skipped and counted (`/v1/status` `skipped_definitions`): anyone can
 * write definitions, and each one followed costs every node a store.
 */
export const DEFINITIONS_PER_CREATOR_MAX = 1_000;
export const DEFINITIONS_MAX = 10_000;
