// The DB-chain ("Gen D") registry as an ABI: its address, the `execute` call and the view calls, the
// operation tags and the structs each tag's `operationData` encodes, the five events and the custom
// errors a revert carries (reference/arkiv-gen-d.md §0, §1.2, §1.3, §1.10, §3, §4.5). Selectors and
// topics are derived from the signatures here; the codec test pins them to the reference's values.
import { parseAbi, parseAbiParameters, toEventSelector, toFunctionSelector, type Hex } from 'viem';

/** The entity registry: no bytecode, the executor routes calls to it natively. */
export const REGISTRY_ADDRESS = '0x4400000000000000000000000000000000000044' as const;

export const registryAbi = parseAbi([
  'function execute((uint8 operation, bytes operationData)[] ops) returns (bytes32[] keys)',
  'function entityNonce(address owner) view returns (uint64)',
  'function customAttributeNames(bytes32 entityKey) view returns (bytes32[])',
  'function attributeTypeId(bytes32 entityKey, bytes32 name) view returns (uint8)',
]);

export const SELECTORS = {
  execute: toFunctionSelector('execute((uint8,bytes)[])'),
  entityNonce: toFunctionSelector('entityNonce(address)'),
  customAttributeNames: toFunctionSelector('customAttributeNames(bytes32)'),
  attributeTypeId: toFunctionSelector('attributeTypeId(bytes32,bytes32)'),
  /** The protocol's own expiry purge (newer nodes): appears in blocks, changes no answer, never ours to decode. */
  purgeExpired: toFunctionSelector('purgeExpired(bytes32[])'),
  /** The retired generation-1 registry ABI: no network runs it; a successful one is an anomaly. */
  legacyExecute: toFunctionSelector(
    'execute((uint8,bytes32,bytes,(bytes32[4]),(bytes32,uint8,bytes32[4])[],uint32,address)[])',
  ),
} as const satisfies Record<string, Hex>;

/** Operation tags (the `uint8 operation` of each `execute` element). There is no update and no expire. */
export const OPERATION_TAGS = { create: 1, patch: 2, extend: 3, transfer: 4, delete: 5 } as const;
export type OperationKind = keyof typeof OPERATION_TAGS;
export const OPERATION_KINDS = Object.fromEntries(Object.entries(OPERATION_TAGS).map(([k, v]) => [v, k])) as Record<
  number,
  OperationKind | undefined
>;

/** `operationData` of each tag: `abi.encode` of one struct (field order is wire order). */
export const OPERATION_STRUCTS = {
  create: parseAbiParameters(
    '(uint128 salt, uint64 expiresAt, uint64 minLifetime, uint8 creationFlags, (bytes32 name, uint8 typeId, bytes value)[] attributes)',
  ),
  patch: parseAbiParameters('(bytes32 entityKey, (bytes32 name, uint8 typeId, bytes value)[] mutations)'),
  extend: parseAbiParameters('(bytes32 entityKey, uint64 expiresAt, uint64 minLifetime)'),
  transfer: parseAbiParameters('(bytes32 entityKey, address newOwner)'),
  delete: parseAbiParameters('(bytes32 entityKey)'),
} as const;

export const EVENT_SIGNATURES = {
  created:
    'event EntityCreated(bytes32 indexed entityKey, address indexed owner, uint64 expiresAt, uint8 creationFlags)',
  patched: 'event EntityPatched(bytes32 indexed entityKey, address indexed owner)',
  extended: 'event ExpiryExtended(bytes32 indexed entityKey, address indexed owner, uint64 expiresAt)',
  transferred:
    'event OwnershipTransferred(bytes32 indexed entityKey, address indexed previousOwner, address indexed newOwner)',
  deleted: 'event EntityDeleted(bytes32 indexed entityKey, address indexed owner)',
} as const;
export type EventKind = keyof typeof EVENT_SIGNATURES;

export const eventAbi = parseAbi(Object.values(EVENT_SIGNATURES));

/** topic0 of each event. */
export const EVENT_TOPICS = Object.fromEntries(
  Object.entries(EVENT_SIGNATURES).map(([name, signature]) => [name, toEventSelector(signature)]),
) as Record<EventKind, Hex>;

/** Every custom error a registry revert may carry (§1.10), by name. */
export const ERROR_SIGNATURES = [
  'error EmptyBatch()',
  'error InvalidOpType(uint8 operation)',
  'error NonCanonicalOperationData(uint8 operation)',
  'error AttributesNotSorted()',
  'error TooManyAttributes(uint256 count, uint256 max)',
  'error EmptyMutations(bytes32 entityKey)',
  'error TombstoneInCreate(bytes32 name)',
  'error TombstoneValueNotEmpty(bytes32 name)',
  'error SystemAttributeNotWritable(bytes32 name)',
  'error InvalidValueType(bytes32 name, uint8 typeId)',
  'error EntityNotFound(bytes32 entityKey)',
  'error EntityExpired(bytes32 entityKey, uint64 expiresAt)',
  // Argument order as arkiv-bindings/src/lib.rs @11b8f771 declares it (the selector does not show it).
  'error NotOwner(bytes32 entityKey, address caller, address owner)',
  'error ReadOnlyEntity(bytes32 entityKey)',
  'error ReservedCreationFlags(uint8 creationFlags)',
  'error ExpiryDeadOnArrival(uint64 target, uint64 block)',
  'error ExpiryNotExtended(bytes32 entityKey, uint64 newExpiresAt, uint64 currentExpiresAt)',
  'error TransferToZeroAddress(bytes32 entityKey)',
  'error TransferToSelf(bytes32 entityKey)',
  'error Ident32InvalidByte(uint256 position, bytes1 value)',
  'error Ident32Empty()',
] as const;

export const errorAbi = parseAbi(ERROR_SIGNATURES);

export type RegistryErrorName = (typeof errorAbi)[number]['name'];
