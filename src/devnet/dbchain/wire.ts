// The DB-chain registry's wire surface as the devnet executes it (arkiv-gen-d.md §1.2, §1.3, §1.10, §3,
// §4.5): the `execute` ABI, the per-op structs, the view calls, the five events and the custom errors.
import { parseAbi, parseAbiParameters, type Address } from 'viem';

export const REGISTRY_ADDRESS: Address = '0x4400000000000000000000000000000000000044';

export const REGISTRY_ABI = parseAbi([
  'function execute((uint8 operation, bytes operationData)[] ops) returns (bytes32[] keys)',
  'function entityNonce(address owner) view returns (uint64)',
  'function customAttributeNames(bytes32 entityKey) view returns (bytes32[])',
  'function attributeTypeId(bytes32 entityKey, bytes32 name) view returns (uint8)',
  'event EntityCreated(bytes32 indexed entityKey, address indexed owner, uint64 expiresAt, uint8 creationFlags)',
  'event EntityPatched(bytes32 indexed entityKey, address indexed owner)',
  'event ExpiryExtended(bytes32 indexed entityKey, address indexed owner, uint64 expiresAt)',
  'event OwnershipTransferred(bytes32 indexed entityKey, address indexed previousOwner, address indexed newOwner)',
  'event EntityDeleted(bytes32 indexed entityKey, address indexed owner)',
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
  'error NotOwner(bytes32 entityKey, address owner, address caller)',
  'error ReadOnlyEntity(bytes32 entityKey)',
  'error ReservedCreationFlags(uint8 flags)',
  'error ExpiryDeadOnArrival(uint64 target, uint64 block)',
  'error ExpiryNotExtended(bytes32 entityKey, uint64 current, uint64 target)',
  'error TransferToZeroAddress(bytes32 entityKey)',
  'error TransferToSelf(bytes32 entityKey)',
  'error Ident32InvalidByte(uint256 index, bytes1 value)',
  'error Ident32Empty()',
  // The reference names this revert without a signature (§1.8); the devnet's guess is argument-less.
  'error ExpiryOverflow()',
]);

const ATTRIBUTE = '(bytes32 name, uint8 typeId, bytes value)';
/** `operationData` of each op tag, as one `abi.encode(struct)` value. */
export const OP_STRUCTS = {
  1: parseAbiParameters(
    `(uint128 salt, uint64 expiresAt, uint64 minLifetime, uint8 creationFlags, ${ATTRIBUTE}[] attributes)`,
  ),
  2: parseAbiParameters(`(bytes32 entityKey, ${ATTRIBUTE}[] mutations)`),
  3: parseAbiParameters('(bytes32 entityKey, uint64 expiresAt, uint64 minLifetime)'),
  4: parseAbiParameters('(bytes32 entityKey, address newOwner)'),
  5: parseAbiParameters('(bytes32 entityKey)'),
} as const;

export const OP_CREATE = 1;
export const OP_PATCH = 2;
export const OP_EXTEND = 3;
export const OP_TRANSFER = 4;
export const OP_DELETE = 5;

/** Type ids (§1.5); the index is the id. */
export const TYPE_NAMES = [
  'tombstone',
  'bool',
  'i32',
  'u64',
  'u256',
  'dec',
  'bytes32',
  'bytes',
  'str',
  'addr',
  'key',
] as const;
export type TypeName = (typeof TYPE_NAMES)[number];
export const TYPE_IDS = Object.fromEntries(TYPE_NAMES.map((name, id) => [name, id])) as Record<TypeName, number>;

export const MAX_ATTRIBUTES = 32;
export const MAX_STR_BYTES = 128;
export const MAX_PAYLOAD_BYTES = 131_072;
export const FLAG_READONLY = 0b01;
export const FLAG_PERMISSIONLESS_EXTENSION = 0b10;
export const UINT64_MAX = (1n << 64n) - 1n;
