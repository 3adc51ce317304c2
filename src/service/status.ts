// status: chain, sync and signer facts for operators (REST GET /v1/status).
import type { EmbedderState, ServiceContext } from './context.ts';

export interface StatusResult {
  chain_id: number;
  rpc: string;
  head_block: number | null;
  as_of_block: number | null;
  lag: number | null;
  sync_state: ServiceContext['indexer']['syncState'];
  last_error: string | null;
  collections: number;
  /** Definitions of live entities skipped as invalid or over the bounds. */
  rejected_definitions: number;
  /** Collections whose name this node saw pass to another owner. */
  owner_changes: { collection: string; previous_owner: string; owner: string; at_block: number }[];
  signer: { address: string; balance_wei: string } | null;
  /** The embedder and, for the local one, what it is doing (fetching with progress, ready, failed). */
  embedder: ({ model: string; kind: 'local' | 'http' } & Partial<EmbedderState>) | null;
}

export async function status(ctx: ServiceContext): Promise<StatusResult> {
  const signer = ctx.writer
    ? { address: ctx.writer.address, balance_wei: (await ctx.writer.balance().catch(() => -1n)).toString() }
    : null;
  const { indexer } = ctx;
  const head = indexer.headBlock ?? null;
  const asOf = indexer.asOfBlock ?? null;
  return {
    chain_id: ctx.chain.chainId,
    rpc: ctx.chain.rpc,
    head_block: head,
    as_of_block: asOf,
    lag: head !== null && asOf !== null ? head - asOf : null,
    sync_state: indexer.syncState,
    last_error: indexer.lastError ?? null,
    collections: indexer.collections.size,
    rejected_definitions: indexer.counters?.definitionsRejected ?? 0,
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
  };
}
