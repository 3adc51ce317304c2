// Arkiv v1 ("Gen B") protocol constants shared by the devnet, the indexer and the write path:
// the processor address, the event ABI and topics, and entity key derivation.
import { concat, hexToBytes, keccak256, numberToHex, parseAbi, toEventSelector, type Hex } from 'viem';

/** Storage transactions are sent to this address; the last 5 bytes spell "arkiv". */
export const ARKIV_ADDRESS = '0x00000000000000000000000000000061726b6976' as const;

/** op-geth --dev injects a deposit transaction from here as tx 0 of every block; expiry logs ride on it. */
export const SYSTEM_TX_FROM = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001' as const;
export const SYSTEM_TX_TO = '0x4200000000000000000000000000000000000015' as const;

export const ARKIV_EVENT_SIGNATURES = {
  created:
    'event ArkivEntityCreated(uint256 indexed entityKey, address indexed ownerAddress, uint256 expirationBlock, uint256 cost)',
  updated:
    'event ArkivEntityUpdated(uint256 indexed entityKey, address indexed ownerAddress, uint256 oldExpirationBlock, uint256 newExpirationBlock, uint256 cost)',
  deleted: 'event ArkivEntityDeleted(uint256 indexed entityKey, address indexed ownerAddress)',
  extended:
    'event ArkivEntityBTLExtended(uint256 indexed entityKey, address indexed ownerAddress, uint256 oldExpirationBlock, uint256 newExpirationBlock, uint256 cost)',
  ownerChanged:
    'event ArkivEntityOwnerChanged(uint256 indexed entityKey, address indexed oldOwnerAddress, address indexed newOwnerAddress)',
  expired: 'event ArkivEntityExpired(uint256 indexed entityKey, address indexed ownerAddress)',
} as const;

export type ArkivEventName = keyof typeof ARKIV_EVENT_SIGNATURES;

export const arkivEventAbi = parseAbi(Object.values(ARKIV_EVENT_SIGNATURES));

/** topic0 of each Arkiv event, derived from the canonical signatures. */
export const ARKIV_TOPICS: Record<ArkivEventName, Hex> = Object.fromEntries(
  Object.entries(ARKIV_EVENT_SIGNATURES).map(([name, signature]) => [name, toEventSelector(signature)]),
) as Record<ArkivEventName, Hex>;

/** The node caps a storage transaction at this many operations across its five lists. */
export { MAX_BATCH_OPERATIONS as MAX_OPERATIONS_PER_TX } from '../operations.ts';
/** contentType must be non-empty and at most this many bytes. */
export const MAX_CONTENT_TYPE_BYTES = 128;
/** The node reads at most this much decompressed calldata. */
export const MAX_DECOMPRESSED_BYTES = 20 * 1024 * 1024;
/** Attribute names accepted by the node (Go regexp over UTF-8). */
export const ATTRIBUTE_NAME_PATTERN = /^[\p{L}_][\p{L}\p{N}_]*$/u;
/** arkiv_query never returns more than this many entities per page. */
export const QUERY_PAGE_LIMIT = 200;

/**
 * The key of the i-th create of a transaction: keccak256(txHash ‖ payload ‖ uint256(i)).
 * @example entityKey('0x43…c2', new TextEncoder().encode('hello'), 0)
 */
export function entityKey(txHash: Hex, payload: Uint8Array, createIndex: number): Hex {
  return keccak256(concat([hexToBytes(txHash), payload, hexToBytes(numberToHex(createIndex, { size: 32 }))]));
}
