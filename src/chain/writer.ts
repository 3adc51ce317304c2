// What the write path asks of a chain, whatever its protocol: send a batch of entity operations with this
// node's signer and learn the keys of what it creates, then follow the transaction to its receipt and
// block. The service talks only to this interface; `v1/writer.ts` implements it for Arkiv v1 over the
// shared signer (`signer.ts`) and transport (ARCHITECTURE.md §7).
import type { Address, Hex } from 'viem';
import type { EntityBatch } from './operations.ts';

export interface SentTransaction {
  hash: Hex;
  /** The key of each create of the batch, in order (known once the node accepted the transaction). */
  keys: Hex[];
}

export interface TransactionOutcome {
  blockNumber: number;
  status: 'success' | 'reverted';
  /** Why it reverted, as the node explains it (eth_call replay), when available. */
  reason?: string;
  /**
   * The keys of the batch's creates as the mined transaction logged them, in order, for a chain whose keys
   * at send time are a prediction (the DB-chain: another sender of the same signer can take the nonce).
   */
  keys?: Hex[];
}

/** A log of a mined transaction's receipt. */
export interface ReceiptLog {
  address: Address;
  topics: Hex[];
  data: Hex;
}

/** The RPC could not be reached to send or follow the transaction. */
export class ChainUnreachableError extends Error {
  override name = 'ChainUnreachableError';
}

/** The node refused the transaction before mining it (estimateGas or sendRawTransaction failed). */
export class TransactionRefusedError extends Error {
  override name = 'TransactionRefusedError';
}

/**
 * Updates of entities that are not live at the tip (expired or deleted since the caller read them): the
 * chain would revert the batch, so it is refused before signing. `keys` are those entities; the caller may
 * write them anew as creates.
 */
export class EntityNotLiveError extends TransactionRefusedError {
  override name = 'EntityNotLiveError';
  constructor(readonly keys: readonly Hex[]) {
    super(`not live at the chain's tip (expired or deleted): ${keys.join(', ')}`);
  }
}

export interface ChainWriter {
  /** The signer's address, lowercase. */
  readonly address: Address;
  balance(): Promise<bigint>;
  /**
   * Sends one atomic batch; batches of one writer go out in call order, one at a time. `batch` may be a
   * function: it runs at the batch's turn, after every earlier send was accepted or refused, so it sees
   * their effects (a throw fails only this send). Returns as soon as the node accepted the transaction.
   */
  send(batch: EntityBatch | (() => EntityBatch)): Promise<SentTransaction>;
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<TransactionOutcome>;
}
