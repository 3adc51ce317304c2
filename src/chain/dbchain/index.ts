// The DB-chain ("Gen D", Tiramisu) wire, for code that speaks the protocol itself: the devnet's DB-chain
// node and tests that write raw `execute` calldata or read raw logs. Everything else reaches the DB-chain
// through src/chain/index.ts (the driver's source and writer factories).
//
// - abi.ts: REGISTRY_ADDRESS, SELECTORS, registryAbi (execute + view calls), OPERATION_TAGS / _KINDS /
//   _STRUCTS, EVENT_SIGNATURES / EVENT_TOPICS / eventAbi, ERROR_SIGNATURES / errorAbi.
// - attributes.ts: cells (Cell, WireCell, TYPE_IDS), names (checkName, encodeName, decodeName), values
//   (encodeCell, decodeCell), list rules (checkCellList, sortCells), system cells (createCells,
//   splitCreateCells), limits, creation flags, expiry (resolveExpiry).
// - calldata.ts: encodeExecute / decodeExecute (and the per-op and outer halves).
// - keys.ts: entityKey, predictKeys, the entityNonce call.
// - events.ts: encodeRegistryEvent / decodeRegistryEvent.
// - errors.ts: DbChainCodecError (code = the node's custom error where one exists, with its revert),
//   encodeRegistryError / decodeRegistryError / describeRegistryError.
export {
  ERROR_SIGNATURES,
  EVENT_SIGNATURES,
  EVENT_TOPICS,
  OPERATION_KINDS,
  OPERATION_STRUCTS,
  OPERATION_TAGS,
  REGISTRY_ADDRESS,
  SELECTORS,
  errorAbi,
  eventAbi,
  registryAbi,
  type EventKind,
  type OperationKind,
  type RegistryErrorName,
} from './abi.ts';
export {
  CONTENT_TYPE_CELL,
  CREATION_FLAGS,
  CREATION_FLAGS_MASK,
  MAX_CELLS_PER_OP,
  MAX_USER_CELLS_PER_CREATE,
  NAME_MAX_BYTES,
  PAYLOAD_CELL,
  PAYLOAD_MAX_BYTES,
  PERMANENT_EXPIRES_AT,
  RESERVED_NAMES,
  STR_VALUE_MAX_BYTES,
  TYPE_IDS,
  U64_MAX,
  USER_NAME_PATTERN,
  checkCellList,
  checkCreationFlags,
  checkExpiryFields,
  checkName,
  createCells,
  decodeCell,
  decodeName,
  encodeCell,
  encodeName,
  resolveExpiry,
  sortCells,
  splitCreateCells,
  type Cell,
  type CellType,
  type CreateContent,
  type ExpiryFields,
  type WireCell,
} from './attributes.ts';
export {
  decodeExecute,
  decodeOperation,
  decodeWireExecute,
  encodeExecute,
  encodeOperation,
  encodeWireExecute,
  type RegistryOperation,
  type WireOperation,
} from './calldata.ts';
export {
  DbChainCodecError,
  decodeRegistryError,
  decodeRevertReason,
  describeRegistryError,
  encodeRegistryError,
  encodeRevertReason,
  expiryOverflowReason,
  type CodecOnlyCode,
  type RegistryRevert,
} from './errors.ts';
export {
  RegistryEventError,
  decodeRegistryEvent,
  encodeRegistryEvent,
  type EventLog,
  type RegistryEvent,
} from './events.ts';
export {
  decodeEntityNonce,
  entityKey,
  entityNonceCall,
  predictKeys,
  randomSalt,
  type EntityKeyInput,
} from './keys.ts';
