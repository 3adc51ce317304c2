// The state every phase of the indexer shares (where it stands, the table and the resolver, the sync
// state and its clocks), and the one commit through which anything it applies becomes visible.
import type { EventEmitter } from 'node:events';
import type { Hex } from 'viem';
import type { ChainSource, PageOptions, SourceBlock } from '../src/chain/index.ts';
import { DEFINITIONS_MAX, DEFINITIONS_PER_CREATOR_MAX } from '../src/collections/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import type { CollectionFilter } from './applyOps.ts';
import { INDEXER_DEFAULTS } from './defaults.ts';
import { reread, type EntityReader } from './entityReads.ts';
import { Pacer, type PacingHost } from './pacing.ts';
import { silentProgress, type ProgressSink } from './progress.ts';
import { CollectionResolver } from './resolver.ts';
import type { SyncState } from './syncState.ts';
import { TrackedEntities } from './trackedEntities.ts';
import type { BootstrapProgress, IndexerEvents, IndexerFailure, IndexerLogger, IndexerOptions } from './types.ts';

const RECENT_HASHES = 512;
/**
 * Blocks in the first batch of a catch-up; each next batch doubles, up to `batchSize`. Nothing overlaps
 * the first fetch (later ones are fetched while the previous batch is applied), so it is kept short.
 */
export const FIRST_CATCH_UP_BATCH = 2;

const noopLogger: IndexerLogger = { info() {}, warn() {}, error() {}, debug() {} };

export type ResolvedOptions<S extends IndexedStore> = Required<
  Pick<IndexerOptions<S>, 'confirmations' | 'liveLag' | 'blockTimeSeconds' | 'batchSize' | 'snapshotEveryBlocks'>
> &
  IndexerOptions<S>;

/** Counters for status and metrics. */
export type IndexerCounters = {
  blocksApplied: number;
  entityOps: number;
  anomalies: number;
  reorgs: number;
  bootstraps: number;
  snapshotsLoaded: number;
  snapshotsWritten: number;
  /** Live definition entities skipped (invalid or over the bounds); recomputed, not accumulated. */
  readonly definitionsRejected: number;
  /** Live definition entities over the cap (per creator or in all), not followed; recomputed. */
  readonly definitionsSkipped: number;
};

export class IndexerCore<S extends IndexedStore = IndexedStore> implements PacingHost, EntityReader {
  readonly options: ResolvedOptions<S>;
  readonly source: ChainSource;
  readonly logger: IndexerLogger;
  readonly progress: ProgressSink;
  readonly wanted: CollectionFilter;
  readonly pacer: Pacer;
  readonly paged: PageOptions;
  resolver!: CollectionResolver<S>;
  table!: TrackedEntities;
  asOf: number | undefined;
  hashes = new Map<number, Hex>();
  head: number | undefined;
  /** When the head was last read (ms since the epoch). */
  headSeenAt: number | undefined;
  bootstrapping: BootstrapProgress | undefined;
  state: SyncState = 'starting';
  /**
   * When the node last knew it was current: a step that finished (head read and whatever it called for
   * applied), or a page of a bootstrap arriving. `stalled` is three block times past it, whatever requests
   * are in flight (a hanging one must not keep `live`).
   */
  freshAt = Date.now();
  failures = 0;
  lastError: string | undefined;
  lastFailure: IndexerFailure | undefined;
  /** Reorgs handled one after another without a quiet step in between (hashes flapping): backed off. */
  reorgStreak = 0;
  /** A snapshot loaded while the RPC did not answer: its block and chain are checked at the first answer. */
  unverified = false;
  stopped = true;
  loop: Promise<void> | undefined;
  wake: (() => void) | undefined;
  /** Block of the last snapshot written or loaded. */
  snapshotAt: number | undefined;
  /**
   * While catching up, the next batch is fetched while the current one is applied, so the node's
   * serving and our inserts overlap. It is used only if it starts right after asOfBlock and still chains
   * onto it; a reorg after the fetch is caught by the next step's canonical check, as for any batch.
   */
  prefetched: { from: number; blocks: Promise<SourceBlock[] | undefined> } | undefined;
  /** Size of the next catch-up batch (FIRST_CATCH_UP_BATCH, doubling up to batchSize). */
  catchUpBatch = FIRST_CATCH_UP_BATCH;
  readonly counters: IndexerCounters;

  constructor(
    options: IndexerOptions<S>,
    readonly events: EventEmitter<IndexerEvents>,
  ) {
    this.options = { ...INDEXER_DEFAULTS, ...options };
    if (!options.source) throw new TypeError('ChainIndexer needs a chain: pass `source` (a ChainSource)');
    this.source = options.source;
    this.logger = options.logger ?? noopLogger;
    this.progress = options.progress ?? silentProgress;
    const only = options.collections ? new Set(options.collections) : undefined;
    this.wanted = only ? (name) => only.has(name) : undefined;
    this.pacer = new Pacer(options.callBudget, this);
    this.paged = this.pacer.paged;
    const self = this;
    this.counters = {
      blocksApplied: 0,
      entityOps: 0,
      anomalies: 0,
      reorgs: 0,
      bootstraps: 0,
      snapshotsLoaded: 0,
      snapshotsWritten: 0,
      get definitionsRejected(): number {
        return self.resolver?.rejectedDefinitions ?? 0;
      },
      get definitionsSkipped(): number {
        return self.resolver?.skippedDefinitions ?? 0;
      },
    };
    this.reset();
  }

  /** A fresh table and resolver (before a bootstrap or a snapshot load, or after a refused one). */
  reset(): void {
    // The stores of the resolver being replaced are dropped: stop their background work.
    this.resolver?.closeStores();
    this.resolver = new CollectionResolver<S>({
      stores: this.options.stores,
      pinnedOwners: this.options.pinnedOwners,
      definitionCap: this.options.collections
        ? undefined
        : (this.options.definitionCap ?? { perCreator: DEFINITIONS_PER_CREATOR_MAX, total: DEFINITIONS_MAX }),
      logger: this.logger,
      reread: (entities, block, hash) => reread(this, entities, block, hash),
    });
    this.table = new TrackedEntities(this.resolver.onEntityChange);
    this.hashes = new Map();
  }

  /**
   * The one commit: the resolver stages every change of the table up to `block` into the stores, and
   * they all become visible at once. A failure leaves what readers see as it was.
   */
  async commitAt(block: number, hash: Hex | undefined, onFailure?: () => void): Promise<void> {
    let commit: () => void;
    try {
      commit = await this.resolver.flush(this.table, block, hash);
    } catch (error) {
      onFailure?.();
      throw error;
    }
    commit();
    this.table.dropResolvedContent();
  }

  /**
   * A block is applied: the sync state follows before waiters hear of it, so the first answer after start
   * (a waiter on the first block) never says `starting` while it carries a block.
   */
  applied(block: number): void {
    this.updateState();
    this.events.emit('block', block);
  }

  rememberHash(block: number, hash: Hex): void {
    this.hashes.set(block, hash);
    // Blocks arrive in ascending order (a rollback deletes the newer ones first), so the first key is the
    // oldest; a span remembers only its end's and its logged blocks' hashes, so keys are not consecutive.
    if (this.hashes.size > RECENT_HASHES) this.hashes.delete(this.hashes.keys().next().value as number);
  }

  seeHead(head: number): void {
    this.head = head;
    this.headSeenAt = Date.now();
  }

  setState(state: SyncState): void {
    if (state === this.state) return;
    this.state = state;
    this.logger.info({ sync_state: state, as_of_block: this.asOf, head_block: this.head }, 'sync state');
    this.events.emit('state', state);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  fail(error: Error): void {
    this.lastError = error.message;
    this.lastFailure = { message: error.message, at: Date.now() };
  }

  /** The node knows it is current as of now (see freshAt). */
  fresh(): void {
    this.freshAt = Date.now();
  }

  updateState(): void {
    if (this.stopped && this.loop === undefined) return;
    const blockMs = this.options.blockTimeSeconds * 1000;
    if (Date.now() - Math.max(this.freshAt, this.pacer.quietUntil) >= 3 * blockMs) {
      this.setState('stalled');
      return;
    }
    // Out of `stalled` only through a step that succeeded (it refreshed the clock and cleared the error).
    if (this.state === 'stalled' && this.lastError !== undefined) return;
    if (this.asOf === undefined || this.head === undefined) return;
    const target = Math.max(0, this.head - this.options.confirmations);
    this.setState(target - this.asOf > this.options.liveLag ? 'catching_up' : 'live');
  }
}
