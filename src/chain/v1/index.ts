// Arkiv v1 on the wire, for code that speaks the protocol itself rather than through the seams: the
// devnet (an Arkiv v1 node) and tests that write raw storage transactions or read raw logs.
export {
  ARKIV_ADDRESS,
  ARKIV_EVENT_SIGNATURES,
  ARKIV_TOPICS,
  ATTRIBUTE_NAME_PATTERN,
  MAX_CONTENT_TYPE_BYTES,
  MAX_DECOMPRESSED_BYTES,
  MAX_OPERATIONS_PER_TX,
  QUERY_PAGE_LIMIT,
  SYSTEM_TX_FROM,
  SYSTEM_TX_TO,
  arkivEventAbi,
  entityKey,
  type ArkivEventName,
} from './protocol.ts';
export {
  StorageTxDecodeError,
  decodeStorageOpsRlp,
  decodeStorageTransaction,
  emptyStorageOps,
  encodeStorageOpsRlp,
  encodeStorageTransaction,
  validateStorageOps,
  type StorageOps,
} from './storageTransaction.ts';
export { decodeBlock, type DecodedBlock } from './blockOps.ts';
export {
  forEachEntityPage,
  getBlockNumber,
  getBlocksWithReceipts,
  getHeadAndHeader,
  getHeaders,
  queryAllEntities,
  type BlockTransaction,
  type BlockWithReceipts,
  type ChainLogData,
  type QueriedEntity,
} from './reads.ts';
export { v1Query } from './source.ts';
