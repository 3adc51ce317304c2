// The service layer: one implementation of each operation, called by both the MCP tools and the REST API.
export { count, type CountParameters, type CountResult } from './count.ts';
export { createCollection } from './createCollection.ts';
export { deleteEntities, type DeleteResult } from './delete.ts';
export { upsert, type UpsertResult } from './upsert.ts';
export type { ProgressReporter, WaitMode, WriteStep } from './submit.ts';
export { get, type GetParameters, type GetResult } from './get.ts';
export { getCollection } from './getCollection.ts';
export { keepDefinitionsAlive, KEEPALIVE_EXTEND_BLOCKS, KEEPALIVE_HORIZON_BLOCKS } from './keepDefinitionsAlive.ts';
export { listCollections, type ListCollectionsResult } from './listCollections.ts';
export { search, type SearchParameters, type SearchResult } from './search.ts';
export { status, type StatusResult } from './status.ts';
export type { Embedder, IndexerView, ReadableStore, ServiceContext } from './context.ts';
export {
  ChainUnavailableError,
  ConflictError,
  ForbiddenError,
  SignerNotConfiguredError,
  TxFailedError,
  CollectionNotFoundError,
  EmbedderMismatchError,
  EmbedderNotConfiguredError,
  EntityNotFoundError,
  InvalidArgumentError,
  NotYetIndexedError,
} from './errors.ts';
export * as schemas from './schemas.ts';
export { SEARCH_K_DEFAULT, SEARCH_K_MAX, SEARCH_K_MIN, MIN_BLOCK_TIMEOUT_MS_DEFAULT, MAX_REQUEST_BYTES } from './limits.ts';
