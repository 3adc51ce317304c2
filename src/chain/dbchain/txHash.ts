// Whether an RPC's answer to eth_getTransactionByHash is the transaction its hash names: the signed
// envelope rebuilt from the answer's fields and hashed. A transaction skipped for its size is skipped on
// every node only if its calldata is the chain's, not one RPC's padding.
import { formatTransaction, keccak256, serializeTransaction, type Hex, type RpcTransaction } from 'viem';

/** Envelope types whose hash is rebuilt here (legacy, EIP-2930, EIP-1559, EIP-4844, EIP-7702). */
const KNOWN_TYPES = new Set(['0x0', '0x1', '0x2', '0x3', '0x4']);

/**
 * True when the answer hashes to `hash`, false when it does not (or cannot be serialized), undefined for an
 * envelope type this node does not know (the chain's own system transactions never log registry events).
 * Cost: one keccak over the calldata.
 */
export function transactionHashMatches(answer: Record<string, unknown>, hash: Hex): boolean | undefined {
  const type = typeof answer.type === 'string' ? answer.type.toLowerCase() : '0x0';
  if (!KNOWN_TYPES.has(type)) return undefined;
  try {
    const tx = formatTransaction(answer as unknown as RpcTransaction);
    const signature = tx.type === 'legacy' ? { r: tx.r, s: tx.s, v: tx.v } : { r: tx.r, s: tx.s, yParity: tx.yParity };
    const serialized = serializeTransaction({ ...tx, data: tx.input } as never, signature as never);
    return keccak256(serialized) === hash.toLowerCase();
  } catch {
    return false;
  }
}
