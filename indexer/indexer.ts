// The chain indexer: bootstraps the arkivector entities at a pinned block (paged entity queries pinned to
// that block), then tails blocks as entity operations in batches, applying each batch as one step so no
// answer sees half a block. Handles reorgs (journal rollback to the common ancestor), RPC failures
// (backoff, `stalled`), confirmations and snapshots. Readers use `collections`, `asOfBlock`, `syncState`.
// It reads the chain only through a ChainSource (src/chain), so it does not know the protocol.
//
// This file is the follower's surface and its loop; each phase lives in its own module: follow.ts (a
// step, a span, the one apply-and-commit path), reorg.ts, bootstrap.ts, snapshots.ts and pacing.ts, all
// sharing the state in core.ts.
import { EventEmitter } from 'node:events';
import type { Address, Hex } from 'viem';
import type { IndexedStore } from '../src/engine/index.ts';
import { IndexerCore, type IndexerCounters } from './core.ts';
import { step } from './follow.ts';
import type { DefinitionRefusal, PublishedCollection } from './resolver.ts';
import { snapshotChainId, snapshotNow } from './snapshots.ts';
import type { SyncState } from './syncState.ts';
import type { BootstrapProgress, IndexerEvents, IndexerFailure, IndexerOptions } from './types.ts';

export type { SyncState } from './syncState.ts';
export type {
  BootstrapProgress,
  IndexerEvents,
  IndexerFailure,
  IndexerLogger,
  IndexerOptions,
} from './types.ts';
export { PACED_STEP_CALLS } from './pacing.ts';
export { REREAD_ONE_BY_ONE_MAX } from './entityReads.ts';

const MAX_BACKOFF_MS = 5_000;

export class ChainIndexer<S extends IndexedStore = IndexedStore> extends EventEmitter<IndexerEvents> {
  readonly #core: IndexerCore<S>;

  constructor(options: IndexerOptions<S>) {
    super();
    this.#core = new IndexerCore<S>(options, this);
  }

  /**
   * The chain id of the snapshot in `dataDir`, if it holds a readable one: a node can start on it while
   * the RPC does not answer (the indexer checks it at the first answer).
   */
  static snapshotChainId(dataDir: string): Promise<number | undefined> {
    return snapshotChainId(dataDir);
  }

  /** Counters for status and metrics. */
  get counters(): IndexerCounters {
    return this.#core.counters;
  }
  /** The last block fully applied (undefined while starting). */
  get asOfBlock(): number | undefined {
    return this.#core.asOf;
  }
  /** The hash of asOfBlock, set with it (an answer names it so a reader can check it on any RPC). */
  get asOfBlockHash(): Hex | undefined {
    const { asOf, hashes } = this.#core;
    return asOf === undefined ? undefined : hashes.get(asOf);
  }
  /** The chain head last seen. */
  get headBlock(): number | undefined {
    return this.#core.head;
  }
  /** When the head was last read (ms since the epoch): a paced node's `live` is as of then. */
  get headSeenAt(): number | undefined {
    return this.#core.headSeenAt;
  }
  /** How far the bootstrap running now has read (undefined when none runs). */
  get bootstrapProgress(): Readonly<BootstrapProgress> | undefined {
    return this.#core.bootstrapping;
  }
  get syncState(): SyncState {
    return this.#core.state;
  }
  /** The failure of the last step, undefined once a step succeeded since. */
  get lastError(): string | undefined {
    return this.#core.lastError;
  }
  /** The last failure, kept after recovery with when it happened and when the node recovered. */
  get lastFailure(): Readonly<IndexerFailure> | undefined {
    return this.#core.lastFailure;
  }
  /** When the next step may start under the call budget (ms since the epoch), if it is waiting for it. */
  get pacedUntil(): number | undefined {
    return this.#core.pacer.pacedUntil;
  }
  get collections(): ReadonlyMap<string, PublishedCollection<S>> {
    return this.#core.resolver.published;
  }
  /** Why this node does not follow the live definition `key` (undefined: it does, or it is not known). */
  definitionRefusal(key: Hex): DefinitionRefusal | undefined {
    return this.#core.resolver.refusal(key);
  }
  /** Whether this node would follow a definition of `name` that `creator` writes now (undefined) or why not. */
  refusalOfNextDefinition(creator: Address, name: string): DefinitionRefusal | undefined {
    const { wanted, resolver } = this.#core;
    if (wanted && !wanted(name)) return { reason: 'not_followed' };
    return resolver.refusalOfNext(creator, name);
  }
  /** Live definition entities skipped (invalid or over the bounds). */
  get rejectedDefinitions(): number {
    return this.counters.definitionsRejected;
  }
  /** Bytes of entity payloads the indexer holds (documents included). */
  get payloadBytes(): number {
    return this.#core.table.payloadBytes;
  }

  /** Starts following the chain in the background. */
  start(): void {
    const core = this.#core;
    if (!core.stopped) return;
    core.stopped = false;
    core.freshAt = Date.now();
    core.loop = this.#run();
  }

  async stop(): Promise<void> {
    const core = this.#core;
    core.stopped = true;
    core.wake?.();
    await core.loop;
    core.prefetched = undefined;
    if (core.options.dataDir && core.asOf !== undefined && core.asOf !== core.snapshotAt)
      await snapshotNow(core).catch((error) =>
        core.logger.error({ error: (error as Error).message }, 'snapshot failed'),
      );
  }

  /** Checks the chain now instead of at the next poll (after a write, or on a newHeads notification). */
  poke(): void {
    this.#core.wake?.();
  }

  /** Resolves true once asOfBlock >= block, false after timeoutMs. */
  waitForBlock(block: number, timeoutMs: number): Promise<boolean> {
    const asOf = this.#core.asOf;
    if (asOf !== undefined && asOf >= block) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onBlock = (n: number) => {
        if (n < block) return;
        clearTimeout(timer);
        this.off('block', onBlock);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.off('block', onBlock);
        resolve(false);
      }, timeoutMs);
      this.on('block', onBlock);
    });
  }

  async #run(): Promise<void> {
    const core = this.#core;
    const blockMs = core.options.blockTimeSeconds * 1000;
    // Retries stay within one block time, so a recovered RPC is noticed within a block.
    const maxBackoff = Math.max(100, Math.min(MAX_BACKOFF_MS, blockMs));
    // Staleness is checked on a clock of its own: a step that hangs in a request is still timed.
    const stallTimer = setInterval(() => core.updateState(), Math.max(20, Math.min(1_000, blockMs / 4)));
    stallTimer.unref?.();
    let backoff = 250;
    while (!core.stopped) {
      await core.pacer.pace();
      if (core.stopped) break;
      try {
        const outcome = await step(core);
        core.failures = 0;
        core.lastError = undefined;
        if (core.lastFailure && core.lastFailure.recoveredAt === undefined) core.lastFailure.recoveredAt = Date.now();
        backoff = 250;
        if (outcome !== 'reorg') core.fresh();
        core.updateState();
        if (outcome === 'reorg') {
          // A reorg right after another (hashes that flap between two answers) must not become a busy
          // loop of requests: back off, doubling, up to a block time, and say so.
          core.reorgStreak++;
          if (core.reorgStreak > 1) {
            const wait = Math.min(maxBackoff, 100 * 2 ** Math.min(10, core.reorgStreak - 2));
            core.fail(new Error(`${core.reorgStreak} reorgs in a row: the RPC's block hashes keep changing`));
            if (!core.stopped) await core.sleep(wait);
          }
        } else if (outcome === 'idle') {
          core.reorgStreak = 0;
          if (!core.stopped) await core.sleep(Math.max(100, blockMs / 4));
        }
      } catch (error) {
        core.failures++;
        core.fail(error as Error);
        core.logger.warn({ error: core.lastError, failures: core.failures }, 'chain step failed; retrying');
        core.updateState();
        if (!core.stopped) await core.sleep(Math.min(backoff, maxBackoff));
        backoff = Math.min(maxBackoff, backoff * 2);
      }
    }
    clearInterval(stallTimer);
    core.progress.done();
  }
}
