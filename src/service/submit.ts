// The shared tail of every write: send one batch of entity operations with this node's signer (through
// the writer's one ordered queue), then wait as asked (none: accepted; receipt: mined; indexed: searchable on
// this node), reporting each step.
import type { Hex } from 'viem';
import {
  ChainUnreachableError,
  EntityNotLiveError,
  TransactionRefusedError,
  type ChainWriter,
  type EntityBatch,
} from '../chain/index.ts';
import type { ServiceContext } from './context.ts';
import { ChainUnavailableError, NotYetIndexedError, SignerNotConfiguredError, TxFailedError } from './errors.ts';
import { RECEIPT_TIMEOUT_MS_DEFAULT } from './limits.ts';

export type WaitMode = 'indexed' | 'receipt' | 'none';
export type WriteStep = 'sent' | 'receipt' | 'indexed';
/** Progress of a write: step 1 sent, 2 receipt, 3 indexed (of the steps the wait mode asks for). */
export type ProgressReporter = (step: WriteStep, progress: number, total: number, message: string) => void;

export interface Submitted {
  hash: Hex;
  /** The key of each create of the batch, in order. */
  keys: Hex[];
  block_number: number | null;
  /**
   * Settles (never rejects) once this node has indexed the write's block, or the write failed, or the
   * receipt and indexing timeouts ran out: later writes of the same ids wait for it.
   */
  settled: Promise<void>;
}

export function requireWriter(ctx: ServiceContext): ChainWriter {
  if (!ctx.writer) throw new SignerNotConfiguredError();
  return ctx.writer;
}

const receiptTimeout = (ctx: ServiceContext) => ctx.receiptTimeoutMs ?? RECEIPT_TIMEOUT_MS_DEFAULT;

/** The background half of a write the caller did not wait for: until indexed here, or failed. */
async function indexedLater(ctx: ServiceContext, hash: Hex, block?: number): Promise<void> {
  try {
    const mined = block ?? (await requireWriter(ctx).waitForReceipt(hash, receiptTimeout(ctx))).blockNumber;
    ctx.indexer.poke?.();
    await ctx.indexer.waitForBlock(mined, ctx.minBlockTimeoutMs);
  } catch {
    // A write that never lands has nothing to wait for.
  }
}

/**
 * @param batch the operations, or a function building them at the queue's turn (it may throw)
 */
export async function submit(
  ctx: ServiceContext,
  batch: EntityBatch | (() => EntityBatch),
  wait: WaitMode,
  onProgress?: ProgressReporter,
): Promise<Submitted> {
  const writer = requireWriter(ctx);
  const total = wait === 'none' ? 1 : wait === 'receipt' ? 2 : 3;
  let hash: Hex;
  let keys: Hex[];
  try {
    ({ hash, keys } = await writer.send(batch));
  } catch (error) {
    if (error instanceof TransactionRefusedError) {
      const failed = new TxFailedError(error.message);
      // Which updates the chain would refuse: a caller that can write them anew (upsert) does.
      if (error instanceof EntityNotLiveError) Object.assign(failed.meta, { not_live: [...error.keys] });
      throw failed;
    }
    if (error instanceof ChainUnreachableError) throw new ChainUnavailableError(error.message);
    throw error;
  }
  onProgress?.('sent', 1, total, `transaction ${hash} accepted`);
  if (wait === 'none') return { hash, keys, block_number: null, settled: indexedLater(ctx, hash) };
  let outcome;
  try {
    outcome = await writer.waitForReceipt(hash, receiptTimeout(ctx));
  } catch {
    throw new TxFailedError('no receipt before the timeout; the transaction may still be mined', hash);
  }
  if (outcome.status === 'reverted') throw new TxFailedError(outcome.reason ?? 'reverted', hash);
  // What the chain logged beats what was predicted at send time (the DB-chain's keys).
  if (outcome.keys && outcome.keys.length === keys.length) keys = outcome.keys;
  onProgress?.('receipt', 2, total, `mined in block ${outcome.blockNumber}`);
  if (wait === 'receipt')
    return { hash, keys, block_number: outcome.blockNumber, settled: indexedLater(ctx, hash, outcome.blockNumber) };
  ctx.indexer.poke?.();
  const started = Date.now();
  if (!(await ctx.indexer.waitForBlock(outcome.blockNumber, ctx.minBlockTimeoutMs))) {
    const error = new NotYetIndexedError(outcome.blockNumber, ctx.indexer.asOfBlock ?? null, Date.now() - started);
    Object.assign(error.meta, { tx_hash: hash, block_number: outcome.blockNumber });
    throw error;
  }
  onProgress?.('indexed', 3, total, `indexed at block ${ctx.indexer.asOfBlock}`);
  return { hash, keys, block_number: outcome.blockNumber, settled: Promise.resolve() };
}
