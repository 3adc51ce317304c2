// Query limits the engine enforces itself (the zod schemas read them from here too).

/**
 * Largest magnitude of a query vector element. Stored vectors are binary16 (|x| ≤ 65504), and hnswlib
 * computes in float32: with |q| ≤ 1e16 every kernel stays finite at any dim up to 4000
 * (l2: 4000 · (1e16 + 65504)² ≈ 4e35; ip: 4000 · 1e16 · 65504 ≈ 3e24; float32 max ≈ 3.4e38), so no
 * search can produce a NaN or infinite distance. Anything else is invalid_argument.
 */
export const QUERY_VALUE_MAX = 1e16;

/**
 * What a collection holding a handful of small vectors costs its node at most with the native engine (C
 * heap and JS heap together, its definition aside): its graph starts at HNSW_INITIAL_CAPACITY elements and
 * grows with its content, so anyone who can write a definition and a vector costs every node this much.
 */
export const COLLECTION_SMALL_BYTES_MAX = 40 * 1024;
