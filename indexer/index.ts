// The indexer's public surface, chosen by hand: the follower, its options and events, the sync states,
// the tunables' defaults, progress sinks, and the shape of a published collection that the service
// reads. The tracked-entity table, the resolver's internals and the snapshot format stay inside.
export {
  ChainIndexer,
  type BootstrapProgress,
  type IndexerEvents,
  type IndexerLogger,
  type IndexerOptions,
} from './indexer.ts';
export { INDEXER_DEFAULTS } from './defaults.ts';
export { SYNC_STATES, type SyncState } from './syncState.ts';
export {
  clearProgressLine,
  logProgress,
  silentProgress,
  ttyProgress,
  type BootstrapPaging,
  type ProgressSink,
} from './progress.ts';
export type { DefinitionRefusal } from './admissionRounds.ts';
export type { CollectionStats, PublishedCollection } from './published.ts';
