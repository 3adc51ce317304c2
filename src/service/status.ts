// status: chain, sync and signer facts for operators (REST GET /v1/status). Answers from what the node
// holds: the signer's balance comes from a cache refreshed in the background, so a hanging RPC cannot
// hold a status call (the console polls it every 2 s).
import type { ChainWriter } from '../chain/index.ts';
import type { EmbedderState, ServiceContext } from './context.ts';
import { memoryLifetime, type MemoryLifetime } from './lifetime.ts';
import { STATUS_BALANCE_MAX_AGE_MS, STATUS_BALANCE_WAIT_MS, STATUS_RECALL_MAX } from './limits.ts';

export interface StatusResult {
  chain_id: number;
  rpc: string;
  /** The generation followed: `v1` or `dbchain` (null when not known). */
  protocol: string | null;
  /** The RPC answered "rate limited" within the last minute: the node waits as asked, it is not stalled. */
  rate_limited: boolean;
  /**
   * The call budget the follower paces itself to (`--rpc-budget`), and when it next polls if it is waiting
   * for it: a paced node is not stalled, and its head_block is as of its last poll (head_block_estimated is
   * where the chain should be now). Null: no budget.
   */
  rpc_budget: { calls_per_hour: number; next_poll_at: string | null } | null;
  /** The chain head last seen. */
  head_block: number | null;
  /**
   * The head the node expects now: `head_block` plus the blocks made since it was read (at the chain's
   * measured pace); `head_block` itself right after a read. `lag` and `sync_state` are measured against it.
   */
  head_block_estimated: number | null;
  /** When the node last read the head (null: not yet): minutes ago on a node paced to its call budget. */
  head_seen_at: string | null;
  as_of_block: number | null;
  lag: number | null;
  sync_state: ServiceContext['indexer']['syncState'];
  /** The bootstrap running now (its block, the query pages answered, the entities kept); null when none runs. */
  bootstrap: { block: number; pages: number; entities: number; started_at: string } | null;
  /** The failure of the indexer's last step; null once a step succeeded since. */
  last_error: string | null;
  /** The last failure, kept after recovery: when it happened and when the node recovered (null: not yet). */
  last_failure: { message: string; at: string; age_seconds: number; recovered_at: string | null } | null;
  collections: number;
  /** Definitions of live entities skipped as invalid or over the bounds. */
  rejected_definitions: number;
  /** Definitions over the cap (per owner or in all) that this node does not follow. */
  skipped_definitions: number;
  /** Collections whose name this node saw pass to another owner. */
  owner_changes: { collection: string; previous_owner: string; owner: string; at_block: number }[];
  /** `balance_wei` is "-1" until a balance was read; `balance_age_seconds` says how old it is (null: never read). */
  signer: { address: string; balance_wei: string; balance_age_seconds: number | null } | null;
  /** The embedder and, for the local one, what it is doing (fetching with progress, ready, failed). */
  embedder: ({ model: string; kind: 'local' | 'http' } & Partial<EmbedderState>) | null;
  /**
   * The node's own recall@10 estimate per collection (of more than 10 records, the largest
   * STATUS_RECALL_MAX): null fields until the first measurement, which a status read starts in the
   * background; a collection scanned exactly reports 1 and `exact` without measuring.
   */
  recall: RecallRow[];
  /** How long a memory written without a ttl lasts on this chain, and what keeping it costs. */
  memory_lifetime: MemoryLifetime;
}

type RecallRow = {
  collection: string;
  records: number;
  recall_at_10: number | null;
  queries: number;
  search_mode: 'exact' | 'hnsw' | null;
  measured_at: string | null;
};

function recallRows(ctx: ServiceContext): RecallRow[] {
  const listed = [...ctx.indexer.collections.values()]
    .filter((c) => c.store.recallEstimate !== undefined && c.store.size > 10)
    .sort((a, b) => b.store.size - a.store.size || (a.name < b.name ? -1 : 1))
    .slice(0, STATUS_RECALL_MAX);
  return listed.map((c) => {
    const e = c.store.recallEstimate?.() ?? null;
    return {
      collection: c.name,
      records: c.store.size,
      recall_at_10: e?.recall_at_10 ?? null,
      queries: e?.queries ?? 0,
      search_mode: e?.search_mode ?? null,
      measured_at: e?.measured_at ?? null,
    };
  });
}

interface BalanceCache {
  wei?: bigint;
  /** ms since the epoch of the last successful read. */
  at?: number;
  refreshing?: Promise<void>;
}
const balances = new WeakMap<ChainWriter, BalanceCache>();

/** The cached balance, refreshed in the background when stale; waits at most STATUS_BALANCE_WAIT_MS. */
async function cachedBalance(writer: ChainWriter): Promise<BalanceCache> {
  let cache = balances.get(writer);
  if (!cache) balances.set(writer, (cache = {}));
  const entry = cache;
  if (!entry.refreshing && (entry.at === undefined || Date.now() - entry.at >= STATUS_BALANCE_MAX_AGE_MS)) {
    entry.refreshing = writer
      .balance()
      .then(
        (wei) => {
          entry.wei = wei;
          entry.at = Date.now();
        },
        () => undefined,
      )
      .finally(() => {
        entry.refreshing = undefined;
      });
  }
  if (entry.refreshing) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      entry.refreshing,
      new Promise((resolve) => (timer = setTimeout(resolve, STATUS_BALANCE_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }
  return entry;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Seconds since `ms` (ms since the epoch), to a tenth. */
const ageSeconds = (ms: number) => Math.round((Date.now() - ms) / 100) / 10;

export async function status(ctx: ServiceContext): Promise<StatusResult> {
  const balance = ctx.writer ? await cachedBalance(ctx.writer) : undefined;
  const signer =
    ctx.writer && balance
      ? {
          address: ctx.writer.address,
          balance_wei: (balance.wei ?? -1n).toString(),
          balance_age_seconds: balance.at === undefined ? null : ageSeconds(balance.at),
        }
      : null;
  const { indexer } = ctx;
  const failure = indexer.lastFailure;
  const head = indexer.headBlock ?? null;
  const estimated = indexer.headBlockEstimated ?? head;
  const asOf = indexer.asOfBlock ?? null;
  const seenAt = indexer.headSeenAt;
  const bootstrap = indexer.bootstrapProgress;
  return {
    chain_id: ctx.chain.chainId,
    rpc: ctx.chain.rpc,
    protocol: ctx.chain.protocol ?? null,
    rate_limited: ctx.chain.rateLimited?.() ?? false,
    rpc_budget:
      ctx.chain.callsPerHour === undefined
        ? null
        : {
            calls_per_hour: ctx.chain.callsPerHour,
            next_poll_at: indexer.pacedUntil === undefined ? null : iso(indexer.pacedUntil),
          },
    head_block: head,
    head_block_estimated: estimated,
    head_seen_at: seenAt === undefined ? null : iso(seenAt),
    as_of_block: asOf,
    lag: estimated !== null && asOf !== null ? estimated - asOf : null,
    sync_state: indexer.syncState,
    bootstrap: bootstrap
      ? {
          block: bootstrap.block,
          pages: bootstrap.pages,
          entities: bootstrap.entities,
          started_at: iso(bootstrap.startedAt),
        }
      : null,
    last_error: indexer.lastError ?? null,
    last_failure: failure
      ? {
          message: failure.message,
          at: iso(failure.at),
          age_seconds: ageSeconds(failure.at),
          recovered_at: failure.recoveredAt === undefined ? null : iso(failure.recoveredAt),
        }
      : null,
    collections: indexer.collections.size,
    rejected_definitions: indexer.counters?.definitionsRejected ?? 0,
    skipped_definitions: indexer.counters?.definitionsSkipped ?? 0,
    owner_changes: [...indexer.collections.values()].flatMap((c) =>
      c.ownerChange
        ? [
            {
              collection: c.name,
              previous_owner: c.ownerChange.previousOwner,
              owner: c.owner,
              at_block: c.ownerChange.atBlock,
            },
          ]
        : [],
    ),
    signer,
    embedder: ctx.embedder
      ? { model: ctx.embedder.model, kind: ctx.embedder.kind ?? 'http', ...ctx.embedder.state?.() }
      : null,
    recall: recallRows(ctx),
    memory_lifetime: memoryLifetime(ctx.chain.protocol),
  };
}
