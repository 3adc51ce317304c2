// The registry's custom errors both ways (reference/arkiv-gen-d.md §1.10): encoded as revert data (the
// devnet reverts with them) and decoded from it (a writer's tx_failed names the error), plus the codec's
// own error, which names the node error the same input would revert with when there is one.
import { decodeErrorResult, encodeErrorResult, parseAbi, type Hex } from 'viem';
import { errorAbi, type RegistryErrorName } from './abi.ts';

/** A custom error with its arguments, as the node reverts with it. */
export interface RegistryRevert {
  name: RegistryErrorName;
  args: readonly unknown[];
}

/**
 * What the codec refuses, and why. `code` is the node's custom error when the node would revert on the
 * same input (`AttributesNotSorted`, `TooManyAttributes`, …; `revert` then holds its arguments), or one
 * of the codec's own codes for rules only our writer applies (`ReservedName`, `NotExecuteCalldata`, …).
 */
export class DbChainCodecError extends Error {
  override name = 'DbChainCodecError';
  constructor(
    readonly code: RegistryErrorName | CodecOnlyCode,
    message: string,
    readonly revert?: RegistryRevert,
  ) {
    super(message);
  }
}

/** Codec refusals with no node error of their own. */
export type CodecOnlyCode =
  /** Not `execute` calldata, or not ABI at all. */
  | 'NotExecuteCalldata'
  /** A name the SDK reserves (query keywords and type tags) or one containing `--`. */
  | 'ReservedName'
  /** A value out of its type's range (e.g. an i32 beyond 32 bits) before encoding. */
  | 'ValueOutOfRange'
  /** A str over 128 bytes or a payload over 128 KiB. */
  | 'ValueTooLong'
  /** An expiry the node would refuse (overflow, dead on arrival) or a field outside uint64. */
  | 'InvalidExpiry';

/** Throws the codec error for a node rule, with the revert the node would give. */
export function refuse(name: RegistryErrorName, message: string, args: readonly unknown[] = []): never {
  throw new DbChainCodecError(name, message, { name, args });
}

/**
 * Revert data for a custom error.
 * @example encodeRegistryError({ name: 'AttributesNotSorted', args: [] }) // '0x3206846a'
 */
export function encodeRegistryError(revert: RegistryRevert): Hex {
  return encodeErrorResult({ abi: errorAbi, errorName: revert.name, args: revert.args } as never);
}

/** The custom error in revert data, or undefined when it is none of the registry's. */
export function decodeRegistryError(data: Hex): RegistryRevert | undefined {
  try {
    const decoded = decodeErrorResult({ abi: errorAbi, data });
    // viem also decodes Solidity's own Error(string) and Panic(uint256): those are not registry errors.
    if (!errorAbi.some((item) => item.name === decoded.errorName)) return undefined;
    return { name: decoded.errorName as RegistryErrorName, args: (decoded.args ?? []) as readonly unknown[] };
  } catch {
    return undefined;
  }
}

const reasonAbi = parseAbi(['error Error(string)']);

/**
 * Revert data for a plain reason, Solidity's `Error(string)`: what the node reverts with for faults that
 * have no custom error (arkiv: crates/arkiv-reth-executor/src/revert.rs, `decode_revert_data`).
 */
export function encodeRevertReason(reason: string): Hex {
  return encodeErrorResult({ abi: reasonAbi, errorName: 'Error', args: [reason] });
}

/** The reason in `Error(string)` revert data, or undefined when the data is something else. */
export function decodeRevertReason(data: Hex): string | undefined {
  try {
    const decoded = decodeErrorResult({ abi: reasonAbi, data });
    return decoded.errorName === 'Error' ? String(decoded.args?.[0]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The node's revert when `block + minLifetime` overflows uint64. The registry ABI has no custom error for it
 * (arkiv-bindings/src/lib.rs @11b8f771): the executor's `DecodeError::ExpiryOverflow` goes out as
 * `Error(string)` with its display text (arkiv-reth-executor decode.rs @11b8f771, revert.rs).
 * @example expiryOverflowReason(5n, 2n ** 64n - 1n) // 'expiry overflow (5 + 18446744073709551615)'
 */
export function expiryOverflowReason(block: bigint, minLifetime: bigint): string {
  return `expiry overflow (${block} + ${minLifetime})`;
}

/**
 * A custom error as one line naming it and its arguments.
 * @example describeRegistryError({ name: 'TooManyAttributes', args: [33n, 32n] }) // 'TooManyAttributes(33, 32)'
 */
export function describeRegistryError(revert: RegistryRevert): string {
  return `${revert.name}(${revert.args.map((a) => String(a)).join(', ')})`;
}
