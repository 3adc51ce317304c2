// Public surface of src/engine/: the per-collection store (indexer and service), the search types the
// service reads, the filter compiler and its error, the metric table, and the keyword/fusion helpers. Other layers import from here only.

export { CollectionStore } from './collectionStore.ts';
export type { BlockChanges, StoreOptions } from './collectionStore.ts';
export type {
  FilterParams,
  HybridAnswer,
  HybridHit,
  HybridSearchParams,
  KeywordAnswer,
  KeywordHit,
  KeywordSearchParams,
  RecordSummary,
  SearchAnswer,
  SearchHit,
  SearchMode,
  SearchParams,
} from './searchTypes.ts';
export { engineStores, engineStoresWith } from './storeFactory.ts';
export { stopGraphRebuilds } from './rebuildThread.ts';
export { ENGINE_ENV, engineSettingWarning, selectedEngine } from './hnsw/engine.ts';
export { nativeAddon } from './hnsw/nativeAddon.ts';
export { REBUILD_RETRY_MS, REBUILD_WORKER_ATTEMPTS } from './rebuild.ts';
export type { RebuildLogger, RebuildOptions, RebuildPhase } from './rebuild.ts';
export type { IndexedStore, StoreChanges, StoreFactory } from './storeContract.ts';
export { SEARCH_MODES } from './searchTypes.ts';
export { measureRecall, RECALL_SAMPLE_QUERIES } from './recallEstimate.ts';
export type { RecallEstimate } from './recallEstimate.ts';
export { QUERY_VALUE_MAX } from './limits.ts';
export { EngineError, InvalidFilterError } from './errors.ts';
export type { EngineErrorCode } from './errors.ts';
export { compileFilter, compileJsonFilter, compileWhere } from './filter/compile.ts';
export type { Cond, Field, Key, Leaf } from './filter/types.ts';
export { METRIC_OPS, metricOps } from './metrics.ts';
export type { MetricOps, Opclass } from './metrics.ts';
export { EF_SEARCH_SCALE, effectiveEf, exactThreshold } from './hnsw/params.ts';
export { RRF_K, rrf, tokenize } from './keyword.ts';
