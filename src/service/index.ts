// The service layer: one implementation of each operation, called by both the MCP tools and the REST API.
export { count, type CountParameters, type CountResult } from './count.ts';
export { createCollection } from './createCollection.ts';
export { deleteEntities, type DeleteResult } from './delete.ts';
export { get, type GetParameters, type GetResult } from './get.ts';
export { getCollection } from './getCollection.ts';
export { keepDefinitionsAlive, KEEPALIVE_EXTEND_BLOCKS, KEEPALIVE_HORIZON_BLOCKS } from './keepDefinitionsAlive.ts';
export { listEntities, type ListEntitiesResult } from './listEntities.ts';
export { listCollections, type ListCollectionsResult } from './listCollections.ts';
export { listRag, type ListRagResult } from './listRag.ts';
export { search, type SearchParameters, type SearchResult } from './search.ts';
export {
  RAG_LIMIT_DEFAULT,
  RAG_LIMIT_MAX,
  RagArgumentError,
  searchRag,
  searchRagArgs,
  parseSearchRagArgs,
  type RagMode,
  type RagQuery,
  type SearchRagResult,
} from './searchRag.ts';
export { status, type StatusResult } from './status.ts';
export { upsert, type UpsertResult, vectorContent } from './upsert.ts';
export { verify, verifyArgs, verifyResultShape } from './verify.ts';
export type { ProgressReporter, WaitMode, WriteStep } from './submit.ts';
export type { Embedder, IndexerView, ReadableStore, ServiceContext } from './context.ts';
export { withHeadEstimate } from './context.ts';
export {
  ChainUnavailableError,
  CollectionNotFoundError,
  ConflictError,
  EmbedderMismatchError,
  EmbedderNotConfiguredError,
  EntityNotFoundError,
  ForbiddenError,
  InvalidArgumentError,
  NotYetIndexedError,
  SignerNotConfiguredError,
  TxFailedError,
} from './errors.ts';
export {
  MAX_REQUEST_BYTES,
  MIN_BLOCK_TIMEOUT_MS_DEFAULT,
  SEARCH_K_DEFAULT,
  SEARCH_K_MAX,
  SEARCH_K_MIN,
} from './limits.ts';
