// The chain layer's public surface, chosen by hand: the two seams (ChainSource for the indexer,
// ChainWriter for the service), the entity operations both speak, the shared JSON-RPC transport, and the
// two drivers, Arkiv v1 and the DB-chain. Protocol details stay in `v1/` and `dbchain/` (their own
// indexes serve the devnet's two nodes and raw-wire tests).
export {
  MAX_BATCH_OPERATIONS,
  PERMANENT_BTL,
  batchSize,
  emptyBatch,
  type ChangeOwnerOp,
  type CreateOp,
  type EntityBatch,
  type EntityOp,
  type ExtendOp,
  type NumericAttribute,
  type OpPosition,
  type StringAttribute,
  type UpdateOp,
} from './operations.ts';
export {
  budgetedTransport,
  countCalls,
  createCallBudget,
  type BudgetClock,
  type CallBudget,
} from './callBudget.ts';
export {
  ChainDataError,
  type BlockHeader,
  type ChainEntity,
  type ChainSource,
  type EntitySelector,
  type HeadWatch,
  type PageOptions,
  type SourceBlock,
  type SourceSpan,
} from './source.ts';
export {
  ChainUnreachableError,
  EntityNotLiveError,
  TransactionRefusedError,
  type ChainWriter,
  type SentTransaction,
  type TransactionOutcome,
} from './writer.ts';
export {
  RPC_ANSWER_MAX_BYTES,
  RpcAnswerTooLargeError,
  RpcResponseError,
  RpcUnavailableError,
  createHttpTransport,
  redactUrl,
  type RpcCall,
  type RpcTransport,
  type TransportOptions,
} from './transport.ts';
export { watchHeads, type HeadWatcher } from './headWatcher.ts';
export { HEAD_SAMPLES_MAX, HeadClock, observeHeads } from './headEstimate.ts';
export { createArkivV1Source, type ArkivV1SourceOptions } from './v1/source.ts';
export {
  V1_UNTIL_DELETED_BTL,
  createArkivV1Writer,
  type ArkivV1WriterOptions,
} from './v1/writer.ts';
export { createDbChainSource, dbChainQuery, type DbChainSourceOptions } from './dbchain/source.ts';
export { createDbChainWriter, type DbChainWriterOptions } from './dbchain/writer.ts';
export { detectProtocol, type ChainProtocol } from './detect.ts';
