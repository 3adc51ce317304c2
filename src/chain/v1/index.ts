// Arkiv v1 on the wire, for code that speaks the protocol itself rather than through the seams: the
// devnet (an Arkiv v1 node) and tests that write raw storage transactions or read raw logs. Everything
// else reaches v1 through src/chain/index.ts (createArkivV1Source, createArkivV1Writer).
export {
  ARKIV_ADDRESS,
  ARKIV_TOPICS,
  QUERY_PAGE_LIMIT,
  SYSTEM_TX_FROM,
  SYSTEM_TX_TO,
  arkivEventAbi,
  entityKey,
} from './protocol.ts';
export {
  StorageTxDecodeError,
  decodeStorageTransaction,
  emptyStorageOps,
  encodeStorageTransaction,
  encodeStorageTransactionOffThread,
  validateStorageOps,
  type StorageOps,
} from './storageTransaction.ts';
export { v1Query } from './source.ts';
