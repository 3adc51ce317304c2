// Entity keys (reference/arkiv-gen-d.md §2): keccak256(uint256 chainId ‖ registry ‖ owner ‖ uint64 nonce
// ‖ uint128 salt), where the nonce is the owner's entity nonce (a counter apart from the account nonce,
// advanced only by successful creates) and the i-th create of a batch uses nonce + i. A writer knows its
// keys before it sends; the prediction holds while no other create of the same owner is in flight.
import { encodeFunctionData, encodePacked, hexToBigInt, keccak256, type Address, type Hex } from 'viem';
import { REGISTRY_ADDRESS, registryAbi } from './abi.ts';

export interface EntityKeyInput {
  chainId: number | bigint;
  owner: Address;
  nonce: bigint;
  salt: bigint;
}

/**
 * @example entityKey({ chainId: 7738577, owner: '0x1111111111111111111111111111111111111111', nonce: 0n, salt: 0n })
 *   // '0xede6f7a7d22551741202fc9e3d5faa0f0a6d619cff53b973de889f78a534dda0'
 */
export function entityKey({ chainId, owner, nonce, salt }: EntityKeyInput): Hex {
  return keccak256(
    encodePacked(
      ['uint256', 'address', 'address', 'uint64', 'uint128'],
      [BigInt(chainId), REGISTRY_ADDRESS, owner, nonce, salt],
    ),
  );
}

/** The keys of a batch's creates, in order: create i uses `nonce + i`. */
export function predictKeys(chainId: number, owner: Address, nonce: bigint, salts: readonly bigint[]): Hex[] {
  return salts.map((salt, i) => entityKey({ chainId, owner, nonce: nonce + BigInt(i), salt }));
}

/** The `eth_call` data of `entityNonce(owner)`. */
export function entityNonceCall(owner: Address): Hex {
  return encodeFunctionData({ abi: registryAbi, functionName: 'entityNonce', args: [owner] });
}

/** The answer of `entityNonce` (one uint64 word). */
export function decodeEntityNonce(result: Hex): bigint {
  if (!/^0x[0-9a-fA-F]{64}$/.test(result)) throw new Error(`entityNonce answered ${result.slice(0, 80)}, not one word`);
  const nonce = hexToBigInt(result);
  if (nonce >> 64n !== 0n) throw new Error('entityNonce answered a value above uint64');
  return nonce;
}

/** 128 random bits, as the SDK picks salts. */
export function randomSalt(): bigint {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return hexToBigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}
