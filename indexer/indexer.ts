// The chain indexer: bootstraps the arkivector entities at a pinned block (paged entity queries pinned to
// that block), then tails blocks as entity operations in batches, applying each batch as one step so no
// answer sees half a block. Handles reorgs (journal rollback to the common ancestor), RPC failures
// (backoff, `stalled`), confirmations and snapshots. Readers use `collections`, `asOfBlock`, `syncState`.
// It reads the chain only through a ChainSource (src/chain), so it does not know the protocol.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import {
  createArkivV1Source,
  type ChainEntity,
  type ChainSource,
  type EntitySelector,
  type PageOptions,
  type RpcTransport,
  type SourceBlock,
} from '../src/chain/index.ts';
import type { CallBudget } from '../src/chain/callBudget.ts';
import { applyOps, type CollectionFilter } from './applyOps.ts';
import { silentProgress, type ProgressSink } from './progress.ts';
import {
  CollectionResolver,
  type DefinitionCap,
  type DefinitionRefusal,
  type PublishedCollection,
  type ResolverLogger,
} from './resolver.ts';
import {
  SnapshotRefusedError,
  readSnapshotEntities,
  readSnapshotMeta,
  removeStaleStaging,
  snapshotStoreDir,
  verifySnapshotFiles,
  writeSnapshot,
  type DecodedUnder,
} from './snapshot.ts';
import type { IndexedStore, StoreFactory } from '../src/engine/index.ts';
import {
  ATTR_COLLECTION,
  ATTR_TYPE,
  DEFINITIONS_MAX,
  DEFINITIONS_PER_CREATOR_MAX,
  ENTITY_DECODED_MAX_BYTES,
  InvalidArgumentError,
} from '../src/collections/index.ts';
import { defined } from '../src/defined.ts';
import { INDEXER_DEFAULTS } from './defaults.ts';
import type { SyncState } from './syncState.ts';
import { TrackedEntities, boundedEntity, classify, type EntityContent, type TrackedEntity } from './trackedEntities.ts';

export type { SyncState } from './syncState.ts';

export interface IndexerLogger extends ResolverLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface IndexerOptions<S extends IndexedStore = IndexedStore> {
  /** Where blocks and entities come from (one of `source` and `transport` is required). */
  source?: ChainSource;
  /** Shorthand for `source: createArkivV1Source(transport)`, the default driver over a JSON-RPC transport. */
  transport?: RpcTransport;
  stores: StoreFactory<S>;
  chainId: number;
  /** Follow head − N. */
  confirmations?: number;
  /** More than this many blocks behind the followed head counts as catching_up. */
  liveLag?: number;
  /** Expected seconds per block (stalled after 3 block times of failures; poll cadence). */
  blockTimeSeconds?: number;
  /** Blocks per JSON-RPC batch while catching up. */
  batchSize?: number;
  /** Only these collections (undefined: all). */
  collections?: readonly string[];
  pinnedOwners?: ReadonlyMap<string, Address>;
  /**
   * How many definitions to follow (resolver.ts); default DEFINITIONS_PER_CREATOR_MAX / DEFINITIONS_MAX, and
   * no cap with `collections` (the node follows only the names it was given).
   */
  definitionCap?: DefinitionCap;
  /** Bootstrap at this block instead of the followed head. */
  startBlock?: number;
  dataDir?: string;
  /** Write a snapshot after this many applied blocks (when live) and on stop. */
  snapshotEveryBlocks?: number;
  /**
   * The RPC's call budget (`--rpc-budget`, src/chain/callBudget.ts): every step waits until a step's calls
   * fit it, and a bootstrap (or a collection's vectors read by pages) waits before each of its calls.
   * Waiting so is chosen, not a stall: `stalled` counts from when the next call was due.
   */
  callBudget?: Pick<CallBudget, 'waitMs' | 'callsPerHour' | 'sleep'>;
  logger?: IndexerLogger;
  progress?: ProgressSink;
}

/** How far a bootstrap has read (while one runs): `/v1/status` `bootstrap` and the progress line. */
export interface BootstrapProgress {
  /** The block it reads at. */
  block: number;
  /** Query pages answered so far, and the entities on them this node keeps. */
  pages: number;
  entities: number;
  /** ms since the epoch. */
  startedAt: number;
}

/** The last failed step, kept after recovery so status can say what happened and when. */
export interface IndexerFailure {
  message: string;
  /** ms since the epoch. */
  at: number;
  /** When a step next succeeded (ms since the epoch); undefined while still failing. */
  recoveredAt?: number;
}

export interface IndexerEvents {
  /** A block (or batch ending at it) became visible. */
  block: [number];
  state: [SyncState];
  reorg: [{ from: number; to: number }];
}

const noopLogger: IndexerLogger = { info() {}, warn() {}, error() {}, debug() {} };
/**
 * Calls a paced step is budgeted for: the head with the tip's header, then a span's end header, its logs
 * and its start's header again (a span over blocks that logged nothing; each registry transaction adds 2).
 */
export const PACED_STEP_CALLS = 5;
const RECENT_HASHES = 512;
const MAX_BACKOFF_MS = 5_000;
/**
 * How long the first contact waits for the head before a node with a snapshot serves it unverified
 * (`stalled`) and keeps trying, in block times (the time `stalled` takes anyway).
 */
const OFFLINE_START_BLOCK_TIMES = 3;
/**
 * Blocks in the first batch of a catch-up; each next batch doubles, up to `batchSize`. Nothing overlaps
 * the first fetch (later ones are fetched while the previous batch is applied), so it is kept short.
 */
const FIRST_CATCH_UP_BATCH = 2;
/** Collection names per `IN (…)` query when bootstrap reads vectors. */
const BOOTSTRAP_NAMES_PER_QUERY = 50;
/**
 * Up to this many entities read again for one collection are read one by one (`entityAt`); more, and the
 * whole collection is paged through instead (fewer round trips for a rebuild or a definition change).
 */
export const REREAD_ONE_BY_ONE_MAX = 64;
/** Concurrent `entityAt` reads when reading entities again one by one. */
const REREAD_CONCURRENCY = 8;

function toTracked(entity: ChainEntity, wanted: CollectionFilter): TrackedEntity | undefined {
  const stringAttributes = new Map((entity.stringAttributes ?? []).map((a) => [a.key, a.value]));
  const kind = classify(stringAttributes);
  if (!kind || (wanted && !wanted(kind.collection))) return undefined;
  // An oversize payload is never decoded from hex: it is only measured.
  const hexBytes = entity.value ? (entity.value.length - 2) >> 1 : 0;
  const skip = hexBytes > ENTITY_DECODED_MAX_BYTES;
  return boundedEntity(
    {
      key: entity.key.toLowerCase() as Hex,
      ...kind,
      owner: entity.owner.toLowerCase() as Address,
      creator: entity.creator?.toLowerCase() as Address | undefined,
      contentType: entity.contentType ?? '',
      payload: entity.value && !skip ? new Uint8Array(Buffer.from(entity.value.slice(2), 'hex')) : new Uint8Array(),
      stringAttributes,
      numericAttributes: new Map((entity.numericAttributes ?? []).map((a) => [a.key, BigInt(a.value)])),
      expiresAt: BigInt(entity.expiresAt),
      lastModifiedAtBlock: entity.lastModifiedAtBlock ?? 0,
      sequence: creationSequence(entity),
    },
    skip ? hexBytes : 0,
  );
}

const creationSequence = (entity: ChainEntity): bigint =>
  (BigInt(entity.createdAtBlock ?? 0) << 32n) |
  (BigInt(entity.transactionIndexInBlock ?? 0) << 16n) |
  BigInt(entity.operationIndexInTransaction ?? 0);

export class ChainIndexer<S extends IndexedStore = IndexedStore> extends EventEmitter<IndexerEvents> {
  readonly #options: Required<
    Pick<IndexerOptions<S>, 'confirmations' | 'liveLag' | 'blockTimeSeconds' | 'batchSize' | 'snapshotEveryBlocks'>
  > &
    IndexerOptions<S>;
  readonly #source: ChainSource;
  readonly #logger: IndexerLogger;
  readonly #progress: ProgressSink;
  readonly #wanted: CollectionFilter;
  #resolver!: CollectionResolver<S>;
  #table!: TrackedEntities;
  #asOf: number | undefined;
  #hashes = new Map<number, Hex>();
  #head: number | undefined;
  /** When the head was last read (ms since the epoch). */
  #headSeenAt: number | undefined;
  #bootstrapping: BootstrapProgress | undefined;
  /** Page walks of the indexer wait for the call budget before each call. */
  readonly #paced: PageOptions = { beforeCall: () => this.#awaitBudget(1) };
  #state: SyncState = 'starting';
  /**
   * When the node last knew it was current: a step that finished (head read and whatever it called for
   * applied), or a page of a bootstrap arriving. `stalled` is three block times past it, whatever requests
   * are in flight (a hanging one must not keep `live`).
   */
  #freshAt = Date.now();
  /** Until when the node chose to wait for its call budget after a good step (ms since the epoch). */
  #quietUntil = 0;
  #stallTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #lastError: string | undefined;
  #lastFailure: IndexerFailure | undefined;
  /** Reorgs handled one after another without a quiet step in between (hashes flapping): backed off. */
  #reorgStreak = 0;
  /** A snapshot loaded while the RPC did not answer: its block and chain are checked at the first answer. */
  #unverified = false;
  #stopped = true;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** Block of the last snapshot written or loaded. */
  #snapshotAt: number | undefined;
  /**
   * While catching up, the next batch is fetched while the current one is applied, so the node's
   * serving and our inserts overlap. It is used only if it starts right after asOfBlock and still chains
   * onto it; a reorg after the fetch is caught by the next step's canonical check, as for any batch.
   */
  #prefetched: { from: number; blocks: Promise<SourceBlock[] | undefined> } | undefined;
  /** Size of the next catch-up batch (FIRST_CATCH_UP_BATCH, doubling up to batchSize). */
  #catchUpBatch = FIRST_CATCH_UP_BATCH;
  /** Counters for status and metrics. */
  readonly counters = (() => {
    const self = this;
    return {
      blocksApplied: 0,
      entityOps: 0,
      anomalies: 0,
      reorgs: 0,
      bootstraps: 0,
      snapshotsLoaded: 0,
      snapshotsWritten: 0,
      /** Live definition entities skipped (invalid or over the bounds); recomputed, not accumulated. */
      get definitionsRejected(): number {
        return self.#resolver?.rejectedDefinitions ?? 0;
      },
      /** Live definition entities over the cap (per creator or in all), not followed; recomputed. */
      get definitionsSkipped(): number {
        return self.#resolver?.skippedDefinitions ?? 0;
      },
    };
  })();

  constructor(options: IndexerOptions<S>) {
    super();
    this.#options = {
      ...INDEXER_DEFAULTS,
      ...options,
    };
    const { source, transport } = options;
    if (source) this.#source = source;
    else if (transport) this.#source = createArkivV1Source(transport);
    else throw new TypeError('ChainIndexer needs a chain: pass `source` (or `transport` for Arkiv v1)');
    this.#logger = options.logger ?? noopLogger;
    this.#progress = options.progress ?? silentProgress;
    const only = options.collections ? new Set(options.collections) : undefined;
    this.#wanted = only ? (name) => only.has(name) : undefined;
    this.#reset();
  }

  #reset(): void {
    // The stores of the resolver being replaced are dropped: stop their background work.
    this.#resolver?.closeStores();
    this.#resolver = new CollectionResolver<S>({
      stores: this.#options.stores,
      pinnedOwners: this.#options.pinnedOwners,
      definitionCap: this.#options.collections
        ? undefined
        : (this.#options.definitionCap ?? { perCreator: DEFINITIONS_PER_CREATOR_MAX, total: DEFINITIONS_MAX }),
      logger: this.#logger,
      reread: (entities, block, hash) => this.#reread(entities, block, hash),
    });
    this.#table = new TrackedEntities(this.#resolver.onEntityChange);
    this.#hashes = new Map();
  }

  /**
   * The chain id of the snapshot in `dataDir`, if it holds a readable one: a node can start on it while
   * the RPC does not answer (the indexer checks it at the first answer).
   */
  static async snapshotChainId(dataDir: string): Promise<number | undefined> {
    const meta = await readSnapshotMeta(dataDir).catch(() => undefined);
    return meta?.chainId;
  }

  /** The last block fully applied (undefined while starting). */
  get asOfBlock(): number | undefined {
    return this.#asOf;
  }
  /** The hash of asOfBlock, set with it (an answer names it so a reader can check it on any RPC). */
  get asOfBlockHash(): Hex | undefined {
    return this.#asOf === undefined ? undefined : this.#hashes.get(this.#asOf);
  }
  /** The chain head last seen. */
  get headBlock(): number | undefined {
    return this.#head;
  }
  /** When the head was last read (ms since the epoch): a paced node's `live` is as of then. */
  get headSeenAt(): number | undefined {
    return this.#headSeenAt;
  }
  /** How far the bootstrap running now has read (undefined when none runs). */
  get bootstrapProgress(): Readonly<BootstrapProgress> | undefined {
    return this.#bootstrapping;
  }
  get syncState(): SyncState {
    return this.#state;
  }
  /** The failure of the last step, undefined once a step succeeded since. */
  get lastError(): string | undefined {
    return this.#lastError;
  }
  /** The last failure, kept after recovery with when it happened and when the node recovered. */
  get lastFailure(): Readonly<IndexerFailure> | undefined {
    return this.#lastFailure;
  }
  get collections(): ReadonlyMap<string, PublishedCollection<S>> {
    return this.#resolver.published;
  }
  /** Why this node does not follow the live definition `key` (undefined: it does, or it is not known). */
  definitionRefusal(key: Hex): DefinitionRefusal | undefined {
    return this.#resolver.refusal(key);
  }
  /** Whether this node would follow a definition of `name` that `creator` writes now (undefined) or why not. */
  refusalOfNextDefinition(creator: Address, name: string): DefinitionRefusal | undefined {
    if (this.#wanted && !this.#wanted(name)) return { reason: 'not_followed' };
    return this.#resolver.refusalOfNext(creator, name);
  }
  /** Live definition entities skipped (invalid or over the bounds). */
  get rejectedDefinitions(): number {
    return this.counters.definitionsRejected;
  }
  /** Bytes of entity payloads the indexer holds (documents included). */
  get payloadBytes(): number {
    return this.#table.payloadBytes;
  }

  /** Starts following the chain in the background. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#freshAt = Date.now();
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#loop;
    this.#prefetched = undefined;
    if (this.#options.dataDir && this.#asOf !== undefined && this.#asOf !== this.#snapshotAt)
      await this.#snapshot().catch((error) =>
        this.#logger.error({ error: (error as Error).message }, 'snapshot failed'),
      );
  }

  /** Checks the chain now instead of at the next poll (after a write, or on a newHeads notification). */
  poke(): void {
    this.#wake?.();
  }

  /** Resolves true once asOfBlock >= block, false after timeoutMs. */
  waitForBlock(block: number, timeoutMs: number): Promise<boolean> {
    if (this.#asOf !== undefined && this.#asOf >= block) return Promise.resolve(true);
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

  /**
   * A block is applied: the sync state follows before waiters hear of it, so the first answer after start
   * (a waiter on the first block) never says `starting` while it carries a block.
   */
  #applied(block: number): void {
    this.#updateState();
    this.emit('block', block);
  }

  #seeHead(head: number): void {
    this.#head = head;
    this.#headSeenAt = Date.now();
  }

  #setState(state: SyncState): void {
    if (state === this.#state) return;
    this.#state = state;
    this.#logger.info({ sync_state: state, as_of_block: this.#asOf, head_block: this.#head }, 'sync state');
    this.emit('state', state);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #run(): Promise<void> {
    const blockMs = this.#options.blockTimeSeconds * 1000;
    // Retries stay within one block time, so a recovered RPC is noticed within a block.
    const maxBackoff = Math.max(100, Math.min(MAX_BACKOFF_MS, blockMs));
    // Staleness is checked on a clock of its own: a step that hangs in a request is still timed.
    this.#stallTimer = setInterval(() => this.#updateState(), Math.max(20, Math.min(1_000, blockMs / 4)));
    this.#stallTimer.unref?.();
    let backoff = 250;
    while (!this.#stopped) {
      await this.#pace();
      if (this.#stopped) break;
      try {
        const outcome = await this.#step();
        this.#failures = 0;
        this.#lastError = undefined;
        if (this.#lastFailure && this.#lastFailure.recoveredAt === undefined)
          this.#lastFailure.recoveredAt = Date.now();
        backoff = 250;
        if (outcome !== 'reorg') this.#fresh();
        this.#updateState();
        if (outcome === 'reorg') {
          // A reorg right after another (hashes that flap between two answers) must not become a busy
          // loop of requests: back off, doubling, up to a block time, and say so.
          this.#reorgStreak++;
          if (this.#reorgStreak > 1) {
            const wait = Math.min(maxBackoff, 100 * 2 ** Math.min(10, this.#reorgStreak - 2));
            this.#fail(new Error(`${this.#reorgStreak} reorgs in a row: the RPC's block hashes keep changing`));
            if (!this.#stopped) await this.#sleep(wait);
          }
        } else if (outcome === 'idle') {
          this.#reorgStreak = 0;
          if (!this.#stopped) await this.#sleep(Math.max(100, blockMs / 4));
        }
      } catch (error) {
        this.#failures++;
        this.#fail(error as Error);
        this.#logger.warn({ error: this.#lastError, failures: this.#failures }, 'chain step failed; retrying');
        this.#updateState();
        if (!this.#stopped) await this.#sleep(Math.min(backoff, maxBackoff));
        backoff = Math.min(maxBackoff, backoff * 2);
      }
    }
    clearInterval(this.#stallTimer);
    this.#progress.done();
  }

  /** When the next step may start under the call budget (ms since the epoch), if it is waiting for it. */
  get pacedUntil(): number | undefined {
    return this.#quietUntil > Date.now() ? this.#quietUntil : undefined;
  }

  /** Waits until a step's calls fit the call budget. */
  #pace(): Promise<void> {
    return this.#awaitBudget(PACED_STEP_CALLS);
  }

  /**
   * Waits until `calls` more fit the call budget. The budget is asked again after each wait: writes and
   * status reads spend from it too, so a poke (the service pokes after a write) re-reads how long is left
   * instead of cutting the wait short; a stop ends it.
   */
  async #awaitBudget(calls: number): Promise<void> {
    const budget = this.#options.callBudget;
    if (!budget) return;
    let said: number | undefined;
    for (let wait = budget.waitMs(calls); wait > 0 && !this.#stopped; wait = budget.waitMs(calls)) {
      const until = Date.now() + wait;
      // Quiet chosen after a good step, or before the first retry of a failed one (a bootstrap page that
      // did not arrive), is not a stall; from a second failure in a row on, the stall clock runs on, so a
      // dead RPC still shows `stalled` 3 block times after the retry that was due.
      if (this.#failures <= 1) this.#quietUntil = until;
      // Said again only when a spend moved it: pokes (a newHeads every block with --ws) wake this wait too.
      if (said === undefined || Math.abs(until - said) >= 1_000) {
        said = until;
        this.#logger.debug({ wait_ms: wait, calls_per_hour: budget.callsPerHour }, 'pacing to the rpc budget');
        const progress = this.#bootstrapping;
        if (progress)
          this.#progress.bootstrap(progress.entities, Date.now() - progress.startedAt, {
            pages: progress.pages,
            nextCallAt: until,
          });
      }
      await (budget.sleep ? budget.sleep(wait) : this.#sleep(wait));
    }
  }

  #fail(error: Error): void {
    this.#lastError = error.message;
    this.#lastFailure = { message: error.message, at: Date.now() };
  }

  /** The node knows it is current as of now (see #freshAt). */
  #fresh(): void {
    this.#freshAt = Date.now();
  }

  #updateState(): void {
    if (this.#stopped && this.#loop === undefined) return;
    if (Date.now() - Math.max(this.#freshAt, this.#quietUntil) >= 3 * this.#options.blockTimeSeconds * 1000) {
      this.#setState('stalled');
      return;
    }
    // Out of `stalled` only through a step that succeeded (it refreshed the clock and cleared the error).
    if (this.#state === 'stalled' && this.#lastError !== undefined) return;
    if (this.#asOf === undefined || this.#head === undefined) return;
    const target = Math.max(0, this.#head - this.#options.confirmations);
    this.#setState(target - this.#asOf > this.#options.liveLag ? 'catching_up' : 'live');
  }

  /**
   * One unit of work: 'applied' (something changed, go on), 'idle' (caught up, wait) or 'reorg' (rolled
   * back, go on unless reorgs keep coming).
   */
  async #step(): Promise<'applied' | 'idle' | 'reorg'> {
    const source = this.#source;
    if (this.#asOf === undefined) {
      this.#progress.phase('connecting to the chain');
      const head = await this.#firstHead();
      if (head === undefined) return 'applied';
      this.#seeHead(head);
      await this.#initialize(Math.max(0, head - this.#options.confirmations));
      return 'applied';
    }
    if (this.#unverified) {
      const chainId = await source.chainId();
      if (chainId !== this.#options.chainId)
        throw new Error(`the RPC serves chain ${chainId}, this node's snapshot is of chain ${this.#options.chainId}`);
      const [header] = await source.headers([this.#asOf]);
      this.#unverified = false;
      if (!header || header.hash !== this.#hashes.get(this.#asOf)) {
        this.#logger.warn({ block: this.#asOf }, 'snapshot block is no longer canonical; rebuilding');
        const head = await source.head();
        this.#seeHead(head);
        await this.#bootstrap(Math.max(0, head - this.#options.confirmations));
        return 'applied';
      }
    }
    // One round trip per step: the head, and whether our last applied block is still canonical.
    const { head, header: tip } = await source.headAndHeader(this.#asOf);
    // A backend behind the one that served our blocks (a load balancer's lagging node) is an outage, not
    // a reorg: it would otherwise roll back or rebuild what the chain still has.
    if (!tip)
      throw new Error(`the RPC does not know block ${this.#asOf}, already applied here (a lagging backend?); retrying`);
    if (tip.hash === this.#hashes.get(this.#asOf) && head < this.#asOf)
      throw new Error(`the RPC's head ${head} is below block ${this.#asOf}, already applied here; retrying`);
    this.#seeHead(Math.max(head, this.#asOf));
    const target = Math.max(0, head - this.#options.confirmations);
    if (tip.hash !== this.#hashes.get(this.#asOf)) {
      await this.#handleReorg();
      return 'reorg';
    }
    if (this.#asOf >= target) {
      if (this.#options.dataDir && this.#asOf - (this.#snapshotAt ?? -Infinity) >= this.#options.snapshotEveryBlocks)
        await this.#snapshot();
      return 'idle';
    }
    const behind = target - this.#asOf;
    if (source.span) return this.#stepSpan(source.span.bind(source), target);
    const catchingUp = behind > this.#options.liveLag;
    if (!catchingUp) this.#catchUpBatch = FIRST_CATCH_UP_BATCH;
    const to = Math.min(target, this.#asOf + (catchingUp ? Math.min(this.#catchUpBatch, this.#options.batchSize) : 1));
    const started = Date.now();
    const blocks = await this.#blocksFrom(this.#asOf + 1, to);
    if (catchingUp && to < target) {
      this.#catchUpBatch = Math.min(this.#options.batchSize, this.#catchUpBatch * 2);
      this.#prefetch(to + 1, Math.min(target, to + this.#catchUpBatch));
    }
    let applied = 0;
    let ops = 0;
    let commit: () => void;
    let last: (typeof blocks)[number] | undefined;
    try {
      for (const block of blocks) {
        if (block.parentHash !== (last ? last.hash : this.#hashes.get(this.#asOf))) break;
        for (const anomaly of block.anomalies) this.#logger.warn({ block: block.number, anomaly }, 'block anomaly');
        this.counters.anomalies += block.anomalies.length;
        this.#table.beginBlock(block.number);
        await applyOps(
          this.#table,
          block.ops,
          block.number,
          (key, at) => this.#lookupCreation(key, at),
          this.#wanted,
          (names, at) => this.#loadVectors(names, at, block.hash),
        );
        this.#table.endBlock();
        ops += block.ops.length;
        applied++;
        last = block;
      }
      if (!last) {
        // The canonical check above just passed: the RPC answered a next block that does not link to
        // the one it confirmed. Retried with backoff; a real reorg shows at the next step's check.
        const first = blocks[0];
        throw new Error(
          first
            ? `block ${first.number} does not link to block ${this.#asOf} (parent ${first.parentHash}, applied ${this.#hashes.get(this.#asOf)}): the RPC answers inconsistently; retrying`
            : `the RPC answered no block after ${this.#asOf}; retrying`,
        );
      }
      commit = await this.#resolver.flush(this.#table, last.number, last.hash);
    } catch (error) {
      // Nothing of this batch became visible: put the table back at asOfBlock so the retry starts clean.
      this.#table.abortBlock();
      this.#table.rollBackTo(this.#asOf);
      throw error;
    }
    commit();
    this.#table.dropResolvedContent();
    for (const block of blocks.slice(0, applied)) this.#rememberHash(block.number, block.hash);
    this.#asOf = last.number;
    this.counters.blocksApplied += applied;
    this.counters.entityOps += ops;
    this.#applied(last.number);
    this.#reportProgress({ block: last.number, target, behind, blocks: applied, ops, started });
    return 'applied';
  }

  /** Catch-up progress after a step that applied `blocks` blocks from `started` (ms since the epoch). */
  #reportProgress(step: {
    block: number;
    target: number;
    behind: number;
    blocks: number;
    ops: number;
    started: number;
  }) {
    const seconds = Math.max(0.001, (Date.now() - step.started) / 1000);
    if (step.behind > this.#options.liveLag)
      this.#progress.catchUp({
        block: step.block,
        target: step.target,
        blocksPerSecond: step.blocks / seconds,
        entitiesPerSecond: step.ops / seconds,
      });
    else this.#progress.done();
  }

  /**
   * One step over a span of the source (blocks up to `target` of which only those with operations are
   * read). Each block with operations, and each block at which a tracked entity expires, is applied at
   * its own number in chain order, so the table ends where a block-by-block walk would; the blocks in
   * between change nothing and are not journaled. The whole span becomes visible at once, at its end.
   */
  async #stepSpan(span: NonNullable<ChainSource['span']>, target: number): Promise<'applied'> {
    const from = defined(this.#asOf, 'asOfBlock in a step');
    const behind = target - from;
    const started = Date.now();
    const { blocks, end } = await span(
      { number: from, hash: defined(this.#hashes.get(from), `hash of ${from}`) },
      target,
    );
    if (end.number <= from || end.number > target || blocks.some((b) => b.number <= from || b.number > end.number))
      throw new Error(`the source answered blocks outside ${from + 1}..${target}; retrying`);
    // The chain answered every read of the span: what follows is our own work (as a bootstrap's pages).
    this.#fresh();
    const withOps = new Map(blocks.map((block) => [block.number, block]));
    let ops = 0;
    let commit: () => void;
    try {
      for (let n = from + 1; n <= end.number; n++) {
        const block = withOps.get(n);
        if (!block && this.#table.expiringAt(n).length === 0) continue;
        for (const anomaly of block?.anomalies ?? []) this.#logger.warn({ block: n, anomaly }, 'block anomaly');
        this.counters.anomalies += block?.anomalies.length ?? 0;
        this.#table.beginBlock(n);
        await applyOps(
          this.#table,
          block?.ops ?? [],
          n,
          (key, at) => this.#lookupCreation(key, at),
          this.#wanted,
          (names, at) => {
            // Only a create or update gives a name its first definition, and those come in a listed block.
            if (!block)
              throw new Error(`collection ${names[0]} gained a definition at block ${at}, which has no operations`);
            return this.#loadVectors(names, at, block.hash);
          },
        );
        this.#table.endBlock();
        ops += block?.ops.length ?? 0;
      }
      commit = await this.#resolver.flush(this.#table, end.number, end.hash);
    } catch (error) {
      this.#table.abortBlock();
      this.#table.rollBackTo(from);
      throw error;
    }
    commit();
    this.#table.dropResolvedContent();
    for (const block of blocks) this.#rememberHash(block.number, block.hash);
    this.#rememberHash(end.number, end.hash);
    this.#asOf = end.number;
    this.counters.blocksApplied += end.number - from;
    this.counters.entityOps += ops;
    this.#applied(end.number);
    this.#reportProgress({ block: end.number, target, behind, blocks: end.number - from, ops, started });
    return 'applied';
  }

  /**
   * The head at the first contact. A node with a snapshot does not wait for an RPC that fails or hangs:
   * after OFFLINE_START_BLOCK_TIMES block times it serves the snapshot unverified (`stalled`, since nothing
   * is current) and returns undefined; the next steps check its chain and block as soon as the RPC answers.
   */
  async #firstHead(): Promise<number | undefined> {
    const { dataDir } = this.#options;
    const head = this.#source.head();
    if (!dataDir) return head;
    head.catch(() => undefined);
    const waitMs = OFFLINE_START_BLOCK_TIMES * this.#options.blockTimeSeconds * 1000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), waitMs);
    });
    const first = await Promise.race([head.catch((error: Error) => error), timedOut]).finally(() =>
      clearTimeout(timer),
    );
    if (typeof first === 'number') return first;
    if (await this.#loadSnapshot(dataDir, false)) {
      this.#logger.warn(
        { block: this.#asOf, reason: first === 'timeout' ? `no answer within ${waitMs} ms` : first.message },
        'the RPC does not answer: serving the snapshot as stalled until it does',
      );
      this.#progress.phase(`snapshot loaded at block ${this.#asOf}; waiting for the chain`);
      // Not fresh: whatever the snapshot holds, this node does not know it is current.
      this.#freshAt = Math.min(this.#freshAt, Date.now() - 3 * this.#options.blockTimeSeconds * 1000);
      this.#setState('stalled');
      return undefined;
    }
    if (first === 'timeout') return head;
    throw first;
  }

  #prefetch(from: number, to: number): void {
    // A failed prefetch is not an error yet: the step fetches that range again and fails there, if at all.
    this.#prefetched = { from, blocks: this.#source.blocks(from, to).catch(() => undefined) };
  }

  /** Blocks `from..to`: the prefetched batch when it still fits, else a fetch now. */
  async #blocksFrom(from: number, to: number): Promise<SourceBlock[]> {
    const prefetched = this.#prefetched;
    this.#prefetched = undefined;
    if (prefetched?.from === from) {
      const blocks = await prefetched.blocks;
      if (blocks?.[0] && blocks[0].parentHash === this.#hashes.get(from - 1))
        return blocks.filter((block) => block.number <= to);
    }
    return this.#source.blocks(from, to);
  }

  #rememberHash(block: number, hash: Hex): void {
    this.#hashes.set(block, hash);
    // Blocks arrive in ascending order (a rollback deletes the newer ones first), so the first key is the
    // oldest; a span remembers only its end's and its logged blocks' hashes, so keys are not consecutive.
    if (this.#hashes.size > RECENT_HASHES) this.#hashes.delete(this.#hashes.keys().next().value as number);
  }

  async #lookupCreation(key: Hex, block: number) {
    const found = await this.#source.entityAt(key, block);
    return found && { creator: found.creator?.toLowerCase() as Address | undefined, sequence: creationSequence(found) };
  }

  /**
   * The content of vector entities the resolver dropped, read again at `block` (the block the table
   * reflects). Each must come back with the content the table tracks (same last modification) and the
   * block must still have `hash`: otherwise the step fails and is retried, and nothing is published.
   */
  async #reread(
    entities: readonly TrackedEntity[],
    block: number,
    hash: Hex | undefined,
  ): Promise<ReadonlyMap<Hex, EntityContent>> {
    const wanted = new Map(entities.map((e) => [e.key, e]));
    const found = new Map<Hex, EntityContent>();
    const keep = (entity: ChainEntity | undefined) => {
      const tracked = entity && wanted.get(entity.key.toLowerCase() as Hex);
      const read = tracked && toTracked(entity, this.#wanted);
      if (!tracked || !read?.content) return;
      if (read.lastModifiedAtBlock !== tracked.lastModifiedAtBlock)
        throw new Error(`entity ${read.key} changed at block ${block} while it was read again; retrying`);
      found.set(read.key, read.content);
    };
    const started = Date.now();
    if (entities.length <= REREAD_ONE_BY_ONE_MAX) {
      for (let i = 0; i < entities.length; i += REREAD_CONCURRENCY)
        for (const entity of await Promise.all(
          entities.slice(i, i + REREAD_CONCURRENCY).map((e) => this.#source.entityAt(e.key, block)),
        ))
          keep(entity);
    } else {
      const names = [...new Set(entities.map((e) => e.collection))];
      for (const name of names)
        await this.#source.forEachEntityPage(
          { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: name } },
          block,
          (page) => {
            for (const entity of page) keep(entity);
          },
          this.#paced,
        );
    }
    if (hash !== undefined) {
      const [header] = await this.#source.headers([block]);
      if (header?.hash !== hash) throw new Error(`block ${block} changed while entities were read again; retrying`);
    }
    const missing = entities.find((e) => !found.has(e.key));
    if (missing) throw new Error(`entity ${missing.key} is not live at block ${block} with the content indexed`);
    this.#logger.debug({ block, entities: entities.length, ms: Date.now() - started }, 'entities read again');
    return found;
  }

  /**
   * The vectors of these names at `block` (one query per BOOTSTRAP_NAMES_PER_QUERY names), checked to come
   * from the block being applied.
   */
  async #loadVectors(names: readonly string[], block: number, hash: Hex): Promise<TrackedEntity[]> {
    const out: TrackedEntity[] = [];
    for (let i = 0; i < names.length; i += BOOTSTRAP_NAMES_PER_QUERY)
      await this.#source.forEachEntityPage(
        { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: names.slice(i, i + BOOTSTRAP_NAMES_PER_QUERY) } },
        block,
        (page) => {
          for (const entity of page) {
            const tracked = toTracked(entity, this.#wanted);
            if (tracked) out.push(tracked);
          }
        },
        this.#paced,
      );
    const [header] = await this.#source.headers([block]);
    if (header?.hash !== hash)
      throw new Error(`block ${block} changed while loading ${names.length} collections' vectors; retrying`);
    return out;
  }

  async #initialize(target: number): Promise<void> {
    if (this.#options.dataDir) {
      this.#progress.phase('loading the snapshot');
      if (await this.#loadSnapshot(this.#options.dataDir, true)) {
        this.#progress.phase(`snapshot loaded at block ${this.#asOf}; following the chain from there`);
        return;
      }
    }
    const pinned = this.#options.startBlock ?? target;
    this.#progress.phase(`bootstrap: reading the collections at block ${pinned}`);
    await this.#bootstrap(pinned);
    this.#progress.phase(`bootstrap done at block ${pinned}; following the chain`);
  }

  async #bootstrap(pinned: number): Promise<void> {
    this.#prefetched = undefined;
    const started = Date.now();
    const progress: BootstrapProgress = { block: pinned, pages: 0, entities: 0, startedAt: started };
    this.#bootstrapping = progress;
    try {
      await this.#bootstrapAt(pinned, progress);
    } finally {
      this.#bootstrapping = undefined;
    }
  }

  /** Reads every definition and vector live at `pinned`, each call paced to the budget (#paced). */
  async #bootstrapAt(pinned: number, progress: BootstrapProgress): Promise<void> {
    const source = this.#source;
    const started = progress.startedAt;
    await this.#awaitBudget(1);
    const [before] = await source.headers([pinned]);
    if (!before) throw new Error(`block ${pinned} is not available for bootstrap`);
    // Definitions first: only vectors of a name that has one are read, and each page is bounded
    // (oversize payloads dropped) before the next arrives.
    const only: EntitySelector['strings'] = this.#options.collections?.length
      ? { [ATTR_COLLECTION]: this.#options.collections }
      : {};
    const tracked: TrackedEntity[] = [];
    const keep = (page: ChainEntity[]) => {
      // Pages arriving are the chain answering: a long bootstrap is not an outage.
      this.#fresh();
      for (const entity of page) {
        const t = toTracked(entity, this.#wanted);
        if (t) tracked.push(t);
      }
      progress.pages++;
      progress.entities = tracked.length;
      this.#progress.bootstrap(tracked.length, Date.now() - started, { pages: progress.pages });
    };
    const definitions: EntitySelector = { strings: { [ATTR_TYPE]: 'collection', ...only } };
    await source.forEachEntityPage(definitions, pinned, keep, this.#paced);
    const names = [...new Set(tracked.map((t) => t.collection))].sort();
    for (let i = 0; i < names.length; i += BOOTSTRAP_NAMES_PER_QUERY) {
      const chunk = names.slice(i, i + BOOTSTRAP_NAMES_PER_QUERY);
      await source.forEachEntityPage(
        { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: chunk } },
        pinned,
        keep,
        this.#paced,
      );
    }
    await this.#awaitBudget(1);
    const [after] = await source.headers([pinned]);
    if (!after || after.hash !== before.hash)
      throw new Error(`block ${pinned} changed during bootstrap (reorg); retrying`);
    this.#bootstrapping = undefined;
    this.#reset();
    for (const entity of tracked) this.#table.set(entity.key, entity);
    const commit = await this.#resolver.flush(this.#table, pinned, before.hash);
    commit();
    this.#table.dropResolvedContent();
    this.#table.resetJournal(pinned);
    this.#rememberHash(pinned, before.hash);
    this.#asOf = pinned;
    this.counters.bootstraps++;
    this.#progress.done();
    const seconds = (Date.now() - started) / 1000;
    this.#logger.info(
      {
        block: pinned,
        entities: tracked.length,
        collections: this.collections.size,
        seconds,
        entities_per_second: Math.round(tracked.length / Math.max(seconds, 0.001)),
      },
      'bootstrap done',
    );
    this.#applied(pinned);
  }

  /** Walks back to the newest block whose hash we applied and that is still canonical, and rolls back to it. */
  async #handleReorg(): Promise<void> {
    const from = defined(this.#asOf, 'asOfBlock at a reorg');
    this.#prefetched = undefined;
    const known = [...this.#hashes.keys()].filter((n) => n <= from).sort((a, b) => b - a);
    let ancestor: number | undefined;
    let answered = 0;
    for (let i = 0; i < known.length && ancestor === undefined; i += 32) {
      const numbers = known.slice(i, i + 32);
      const headers = await this.#source.headers(numbers);
      answered += headers.filter((h) => h !== undefined).length;
      const match = numbers.findIndex((n, j) => headers[j]?.hash === this.#hashes.get(n));
      if (match >= 0) ancestor = numbers[match];
    }
    // No block we applied is known at all: a backend behind ours, not a chain that replaced them all.
    if (answered === 0)
      throw new Error(`the RPC knows none of the blocks applied here up to ${from} (a lagging backend?); retrying`);
    // The block we stand on is canonical after all: the answer that said otherwise was not.
    if (ancestor === from)
      throw new Error(`block ${from} came with another hash a moment ago: the RPC's block hashes flap; retrying`);
    this.counters.reorgs++;
    if (ancestor === undefined || !this.#table.canRollBackTo(ancestor)) {
      this.#logger.warn({ from, ancestor }, 'reorg deeper than the journal; rebuilding from the chain');
      const target = Math.max(0, (this.#head ?? from) - this.#options.confirmations);
      await this.#bootstrap(target);
      this.emit('reorg', { from, to: target });
      return;
    }
    this.#table.rollBackTo(ancestor);
    const commit = await this.#resolver.flush(this.#table, ancestor, this.#hashes.get(ancestor));
    commit();
    this.#table.dropResolvedContent();
    for (const n of [...this.#hashes.keys()]) if (n > ancestor) this.#hashes.delete(n);
    this.#asOf = ancestor;
    this.#logger.warn({ from, to: ancestor }, 'reorg: rolled back to the common ancestor');
    this.emit('reorg', { from, to: ancestor });
  }

  /** @param canonical check that the snapshot's block is still canonical (false: the RPC does not answer) */
  async #loadSnapshot(dataDir: string, canonical: boolean): Promise<boolean> {
    try {
      return await this.#loadVerifiedSnapshot(dataDir, canonical);
    } catch (error) {
      // An unreadable snapshot is not an outage: the chain has everything, so the node rebuilds rather
      // than retrying a load that cannot succeed. A store written by another version (or that no longer
      // fits its definition) is refused the same way.
      if (!(error instanceof SnapshotRefusedError || error instanceof InvalidArgumentError)) throw error;
      this.#logger.warn({ reason: error.message }, 'snapshot refused; rebuilding from the chain');
      this.#reset();
      return false;
    }
  }

  async #loadVerifiedSnapshot(dataDir: string, canonical: boolean): Promise<boolean> {
    const started = Date.now();
    const removed = await removeStaleStaging(dataDir);
    if (removed.length) this.#logger.info({ removed }, 'removed snapshot staging folders of stopped processes');
    const meta = await readSnapshotMeta(dataDir);
    if (!meta) return false;
    if (meta.chainId !== this.#options.chainId) {
      this.#logger.warn(
        { snapshot_chain: meta.chainId, chain: this.#options.chainId },
        'snapshot is for another chain; rebuilding',
      );
      return false;
    }
    if (canonical) {
      const [header] = await this.#source.headers([meta.block]);
      if (!header || header.hash !== meta.hash) {
        this.#logger.warn({ block: meta.block }, 'snapshot block is no longer canonical; rebuilding');
        return false;
      }
    }
    await verifySnapshotFiles(dataDir, meta);
    this.#reset();
    const { entities, verdicts } = await readSnapshotEntities(dataDir);
    for (const entity of entities) this.#table.set(entity.key, entity);
    for (const [name, kept] of verdicts)
      this.#resolver.restoreVerdicts(name, this.#table, kept.decodedUnder, kept.verdicts);
    await this.#resolver.adopt(
      this.#table,
      async (name, definition) => {
        const dir = snapshotStoreDir(dataDir, meta, name);
        // Only the store's own files are read here: any failure is the snapshot's (chain reads the
        // resolver makes around it stay retryable outages).
        return dir
          ? this.#options.stores.load(dir, name, definition).catch((error: Error) => {
              if (error instanceof InvalidArgumentError) throw error;
              throw new SnapshotRefusedError(`store of ${name}: ${error.message}`);
            })
          : undefined;
      },
      meta.block,
      meta.hash,
    );
    this.#table.resetJournal(meta.block);
    this.#rememberHash(meta.block, meta.hash);
    this.#asOf = meta.block;
    // A store converted from another engine's snapshot would convert again at every start until a block
    // moved the node on: with no snapshot of its own the next idle step (or the stop) writes one.
    const converted = [...this.collections.values()].some((c) => c.store.converted === true);
    this.#snapshotAt = converted ? undefined : meta.block;
    this.#unverified = !canonical;
    this.counters.snapshotsLoaded++;
    this.#logger.info(
      { block: meta.block, collections: this.collections.size, ms: Date.now() - started },
      'snapshot loaded',
    );
    this.#applied(meta.block);
    return true;
  }

  async #snapshot(): Promise<void> {
    const { dataDir } = this.#options;
    const block = this.#asOf;
    // Both callers check dataDir and asOfBlock first; the hash of asOfBlock is remembered whenever it is set.
    if (!dataDir || block === undefined) return;
    const hash = defined(this.#hashes.get(block), `hash of block ${block}`);
    const started = Date.now();
    const stores = new Map([...this.collections].map(([name, c]) => [name, c.store]));
    const decodedUnder: Record<string, DecodedUnder> = {};
    for (const [name, c] of this.collections) {
      const definition = this.#table.get(c.definitionKey);
      if (definition)
        decodedUnder[name] = { key: c.definitionKey, lastModifiedAtBlock: definition.lastModifiedAtBlock };
    }
    const verdictOf = (entity: TrackedEntity) => this.#resolver.keptVerdict(entity);
    await writeSnapshot(dataDir, { chainId: this.#options.chainId, block, hash }, this.#table.values(), stores, {
      decodedUnder,
      verdictOf,
    });
    this.#snapshotAt = block;
    this.counters.snapshotsWritten++;
    this.#logger.info({ block, dir: join(dataDir, 'snapshot'), ms: Date.now() - started }, 'snapshot written');
  }
}
