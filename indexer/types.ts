// The indexer's options, events and the shapes its status getters answer with.
import type { Address } from 'viem';
import type { ChainSource } from '../src/chain/index.ts';
import type { CallBudget } from '../src/chain/callBudget.ts';
import type { IndexedStore, StoreFactory } from '../src/engine/index.ts';
import type { ProgressSink } from './progress.ts';
import type { DefinitionCap, ResolverLogger } from './resolver.ts';
import type { SyncState } from './syncState.ts';

export interface IndexerLogger extends ResolverLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface IndexerOptions<S extends IndexedStore = IndexedStore> {
  /** Where blocks and entities come from: a chain driver's source (src/chain). */
  source: ChainSource;
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
