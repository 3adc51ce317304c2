// What the service operations need from the rest of the node: the indexer's published view (read once
// per answer, synchronously, so an answer never mixes two blocks), chain facts, and optional embedder
// and signer. Built once by `arkivector serve`; tests build it around a real indexer and devnet.
import type {
  FilterParams,
  HybridAnswer,
  HybridSearchParams,
  IndexedStore,
  KeywordAnswer,
  KeywordSearchParams,
  RecallEstimate,
  RecordSummary,
  SearchAnswer,
  SearchParams,
} from '../engine/index.ts';
import type { DefinitionRefusal, PublishedCollection, SyncState } from '../../indexer/index.ts';
import type { CallBudget, ChainWriter, HeadClock } from '../chain/index.ts';
import type { Embedder } from '../embedder/types.ts';

export type { Embedder, EmbedderState } from '../embedder/types.ts';

/** A record without its vector, collection and dimension (the store's): what searches and listings hand out (the store's own object: read only). */
export type { RecordSummary };

/** The read side of a collection store (the engine's CollectionStore; the search types are the engine's). */
export interface ReadableStore extends IndexedStore {
  search(params: SearchParams): SearchAnswer;
  /**
   * `search` at the moment of the call, its graph walk on a thread where the engine has one (stores
   * without: absent); undefined when the store changed before it answered: ask `search` again.
   */
  searchPinned?(params: SearchParams): Promise<SearchAnswer | undefined>;
  count(params?: FilterParams): number;
  /** The live records passing a filter, without vectors. */
  select(params?: FilterParams): readonly RecordSummary[];
  keywordSearch(params: KeywordSearchParams): KeywordAnswer;
  hybridSearch(params: HybridSearchParams): HybridAnswer;
  /** `hybridSearch`, its vector part on threads as searchPinned's; undefined: the store changed, ask again. */
  hybridSearchPinned?(params: HybridSearchParams): Promise<HybridAnswer | undefined>;
  /** The node's own recall estimate (null until measured; measuring starts in the background). */
  recallEstimate?(): RecallEstimate | null;
}

/** The indexer as the service sees it. */
export interface IndexerView {
  readonly asOfBlock: number | undefined;
  /** The hash of asOfBlock, when the indexer keeps it. */
  readonly asOfBlockHash?: string | undefined;
  /** The chain head last seen. */
  readonly headBlock: number | undefined;
  /**
   * The head expected now: headBlock plus the blocks made since it was read, at the chain's pace
   * (withHeadEstimate). Absent: headBlock.
   */
  readonly headBlockEstimated?: number | undefined;
  /** Measured against headBlockEstimated where it is given: `live` only within --live-lag of it. */
  readonly syncState: SyncState;
  /** The failure of the last step; undefined once a step succeeded since. */
  readonly lastError: string | undefined;
  /** The last failure, kept after recovery (ms since the epoch). */
  readonly lastFailure?: { readonly message: string; readonly at: number; readonly recoveredAt?: number };
  readonly collections: ReadonlyMap<string, PublishedCollection<ReadableStore>>;
  /** Work counters (blocks applied, reorgs, …) for metrics. */
  readonly counters?: Readonly<Record<string, number>>;
  /** Until when (ms since the epoch) the follower waits for its call budget before polling again. */
  readonly pacedUntil?: number | undefined;
  /** When the head was last read (ms since the epoch). */
  readonly headSeenAt?: number | undefined;
  /** The bootstrap running now, and how far it has read. */
  readonly bootstrapProgress?:
    | { readonly block: number; readonly pages: number; readonly entities: number; readonly startedAt: number }
    | undefined;
  waitForBlock(block: number, timeoutMs: number): Promise<boolean>;
  /** Why the node does not follow the live definition `key` (undefined: it does, or unknown). */
  definitionRefusal?(key: string): DefinitionRefusal | undefined;
  /** Whether the node would follow a definition of `name` written now by `creator` (undefined) or why not. */
  refusalOfNextDefinition?(creator: string, name: string): DefinitionRefusal | undefined;
  /** Check the chain now (after a write) instead of at the next poll. */
  poke?(): void;
}

export interface ServiceContext {
  indexer: IndexerView;
  chain: {
    chainId: number;
    rpc: string;
    /** The generation followed (`v1`, `dbchain`), when the gateway knows it. */
    protocol?: string;
    /** Whether the RPC answered "rate limited" within the last minute (the follower backs off, it is not down). */
    rateLimited?: () => boolean;
    /** The node's JSON-RPC call budget (`--rpc-budget`), when it has one. */
    callsPerHour?: number;
    /** That budget itself: calls the service makes beside the node's transport (arkivector_verify) spend from it. */
    callBudget?: CallBudget;
  };
  minBlockTimeoutMs: number;
  /** The RPC arkivector_verify checks answers against (--verify-rpc; a stdio node's own); none: no such tool. */
  verifyRpc?: { url: string; headers?: Record<string, string> };
  embedder?: Embedder;
  /** The signer, when this node may write (ARKIVECTOR_PRIVATE_KEY / --private-key-file). */
  writer?: ChainWriter;
  /** Unix time (seconds) of a block, for answers that show dates (KuraDB's list_rag). */
  blockTimestamp?(block: number): Promise<number>;
  /** How long a write waits for its receipt. */
  receiptTimeoutMs?: number;
}

/**
 * The indexer with `syncState` measured against the head the node expects now, and that head as
 * `headBlockEstimated`: a node paced to its call budget reads the head minutes apart, so `live` as of its
 * last read would hide how far the chain has gone since. Only a `live` state is moved (to `catching_up`);
 * every other member is the indexer's own (a proxy, so the indexer's private state stays its own).
 */
export function withHeadEstimate(
  indexer: IndexerView,
  clock: HeadClock,
  options: { liveLag: number; confirmations: number },
): IndexerView {
  const estimated = () =>
    indexer.headBlock === undefined ? undefined : clock.estimate(indexer.headBlock, indexer.headSeenAt);
  const syncState = (): SyncState => {
    const state = indexer.syncState;
    const head = estimated();
    const asOf = indexer.asOfBlock;
    if (state !== 'live' || head === undefined || asOf === undefined) return state;
    return Math.max(0, head - options.confirmations) - asOf > options.liveLag ? 'catching_up' : 'live';
  };
  return new Proxy(indexer, {
    get(target, property) {
      if (property === 'syncState') return syncState();
      if (property === 'headBlockEstimated') return estimated();
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
