// What a follower does with one logged registry transaction before zipping it with its logs: skip it when it
// is over the decoding bounds (TX_CALLDATA_MAX_BYTES, TX_OPERATIONS_MAX), read from its calldata's length and
// the operation count its `execute` array declares, both without decoding; only a transaction whose answer
// hashes to its hash is skipped, so every node skips the same ones and padding by one RPC skips nothing.
// Otherwise its calldata is decoded by the node's rules. Pure, so it runs on any thread (decodeThread.ts).
import type { Hex } from 'viem';
import { TX_CALLDATA_MAX_BYTES, TX_OPERATIONS_MAX } from '../../collections/index.ts';
import { decodeExecute, type RegistryOperation } from './calldata.ts';
import { DbChainCodecError } from './errors.ts';
import type { LoggedTransaction } from './reads.ts';
import { transactionHashMatches } from './txHash.ts';

/** The operations, or why the transaction is skipped (over a bound), or why its answer is refused (the RPC's fault). */
export type TxVerdict = { calls: RegistryOperation[] } | { skipped: string } | { refused: string };

const OUTER_OFFSET = (0x20).toString(16).padStart(64, '0');
const HEX_WORD = /^[0-9a-fA-F]{64}$/;

/**
 * Why `input` is over a bound, in O(1), or undefined. The count is the canonical layout's (selector, 0x20,
 * count): a calldata laid out otherwise is not canonical, and decoding refuses it.
 * @example overBounds(`0x49650044${'0'.repeat(62)}20${(5000).toString(16).padStart(64, '0')}`)
 *   // 'it declares 5000 operations, over TX_OPERATIONS_MAX (4096)'
 */
export function overBounds(input: Hex): string | undefined {
  const bytes = Math.floor((input.length - 2) / 2);
  if (bytes > TX_CALLDATA_MAX_BYTES)
    return `its calldata is ${bytes} bytes, over TX_CALLDATA_MAX_BYTES (${TX_CALLDATA_MAX_BYTES})`;
  const count = input.slice(74, 138);
  if (input.slice(10, 74) !== OUTER_OFFSET || !HEX_WORD.test(count)) return undefined;
  const declared = BigInt(`0x${count}`);
  if (declared > BigInt(TX_OPERATIONS_MAX))
    return `it declares ${declared} operations, over TX_OPERATIONS_MAX (${TX_OPERATIONS_MAX})`;
  return undefined;
}

/** The verdict on one transaction (its `envelope`, the RPC's whole answer, is hashed only when it is over a bound). */
export function txVerdict(tx: LoggedTransaction): TxVerdict {
  const over = overBounds(tx.input);
  if (over !== undefined) {
    if (tx.envelope && transactionHashMatches(tx.envelope, tx.hash) === true) return { skipped: over };
    return { refused: `${over}, and the RPC's answer is not the transaction its hash names` };
  }
  try {
    return { calls: decodeExecute(tx.input) };
  } catch (error) {
    if (error instanceof DbChainCodecError) return { refused: error.message };
    throw error;
  }
}
