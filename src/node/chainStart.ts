// The first contact of a node with its RPC, bounded by one deadline for a node with a data dir: which
// generation it speaks (`--protocol auto`, remembered by protocolMemo.ts), its chain id, and its first
// head. A node whose data dir remembers the generation and holds a snapshot does not wait past the deadline
// for an RPC that hangs or errs: it starts on what it remembers and serves the snapshot as `stalled` (docs/consistency.md,
// "Start without the RPC") while the indexer keeps asking. Without either, it waits for the RPC as long as
// the transport's retries do.
import type { Logger } from 'pino';
import type { ChainSource } from '../chain/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';

/** Block times the first contact waits for the RPC before a node with a snapshot starts on it. */
export const OFFLINE_START_BLOCK_TIMES = 3;

/** When the first contact gives up on the RPC (ms since the epoch), from now. */
export const startDeadline = (blockTimeSeconds: number): number =>
  Date.now() + OFFLINE_START_BLOCK_TIMES * blockTimeSeconds * 1000;

/** `promise`'s value, or 'timeout' at `deadline`, or the error it rejected with. */
export async function until<T>(promise: Promise<T>, deadline: number): Promise<T | Error | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise.catch((error: Error) => error), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export const reasonOf = (answer: Error | 'timeout') => (answer === 'timeout' ? 'no answer' : answer.message);

/**
 * The chain id, from the RPC; a node with a snapshot in `dataDir` does not wait past `deadline` for an RPC
 * that errs or says nothing: it starts on the snapshot's chain id. `offline` says it did.
 */
export async function startChainId(
  source: ChainSource,
  dataDir: string | undefined,
  deadline: number,
  logger: Logger,
): Promise<{ chainId: number; offline: boolean }> {
  const saved = dataDir ? await ChainIndexer.snapshotChainId(dataDir) : undefined;
  if (saved === undefined) return { chainId: await source.chainId(), offline: false };
  const answer = await until(source.chainId(), deadline);
  if (typeof answer === 'number') return { chainId: answer, offline: false };
  logger.warn(
    { chain_id: saved, reason: reasonOf(answer) },
    'the RPC does not answer: starting on the snapshot (stalled until the chain answers)',
  );
  return { chainId: saved, offline: true };
}

/**
 * `source` whose first head read fails at once: the RPC already did not answer by the deadline, so the
 * indexer starts on its snapshot now instead of waiting for it again. Every later read is the source's.
 */
export function offlineFirstHead(source: ChainSource): ChainSource {
  let first = true;
  return {
    ...source,
    head() {
      if (!first) return source.head();
      first = false;
      return Promise.reject(new Error('the RPC did not answer at start'));
    },
  };
}

/** Resolves once `indexer` is past `starting` (its snapshot loaded, or its first block), or after `ms`. */
export function pastStarting(indexer: ChainIndexer, ms: number): Promise<void> {
  if (indexer.syncState !== 'starting') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      indexer.off('state', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    indexer.on('state', done);
  });
}
