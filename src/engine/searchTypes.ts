// What a store's reads take and answer, declared once: the service's view of a store
// (src/service/context.ts) is written in these types, and CollectionStore implements them.
import type { StoredRecord } from './recordView.ts';

/** How a vector search was answered: an exact scan or the HNSW graph. */
export const SEARCH_MODES = ['exact', 'hnsw'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** A record as searches and listings hand it out: everything but the vector (the store's own object: read only). */
export type RecordSummary = Readonly<StoredRecord>;

/** A filter: the `where` language, the JSON form, or both (ANDed). */
export type FilterParams = { where?: string; filter?: unknown };

export type SearchParams = FilterParams & {
  vector: ArrayLike<number>;
  k: number;
  /** The caller's search width (pgvector's ef_search); the definition's, grown with the collection, when absent. */
  efSearch?: number;
};
/** A search hit: the record's stored summary (read only, no vector) with its distance and score. */
export type SearchHit = { record: RecordSummary; distance: number; score: number };
export type SearchAnswer = { results: SearchHit[]; search_mode: SearchMode };

export type KeywordSearchParams = FilterParams & { text: string; k: number };
export type KeywordHit = { record: RecordSummary; score: number };
export type KeywordAnswer = { results: KeywordHit[] };

export type HybridSearchParams = FilterParams & { vector: ArrayLike<number>; text: string; k: number };
/** A fused hit; `distance` is the vector distance (also for a hit the keyword side alone found). */
export type HybridHit = { record: RecordSummary; score: number; distance?: number };
export type HybridAnswer = { results: HybridHit[]; search_mode: SearchMode };
