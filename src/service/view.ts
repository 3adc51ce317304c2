// One consistent view of the node for one answer: waits for `min_block` first, then reads the block
// number, sync state and collections together, synchronously, so the answer reflects exactly one block.
import { METRIC_OPS } from '../engine/index.ts';
import { ArkivectorError } from '../errors.ts';
import type { PublishedCollection } from '../../indexer/index.ts';
import type { ReadableStore, ServiceContext } from './context.ts';
import { ChainUnavailableError, CollectionNotFoundError, NotYetIndexedError } from './errors.ts';
import type { Collection } from './schemas.ts';

export interface View {
  as_of_block: number;
  /** The hash of as_of_block (null when the indexer does not say it). */
  as_of_block_hash: string | null;
  sync_state: ServiceContext['indexer']['syncState'];
  collections: ReadonlyMap<string, PublishedCollection<ReadableStore>>;
}

/** Waits for min_block (bounded by the node's timeout), then returns the view. Await nothing after it. */
export async function readView(ctx: ServiceContext, minBlock?: number): Promise<() => View> {
  const { indexer } = ctx;
  if (minBlock !== undefined && (indexer.asOfBlock ?? -1) < minBlock) {
    const started = Date.now();
    if (!(await indexer.waitForBlock(minBlock, ctx.minBlockTimeoutMs))) {
      throw new NotYetIndexedError(minBlock, indexer.asOfBlock ?? null, Date.now() - started);
    }
  } else if (indexer.asOfBlock === undefined && indexer.syncState === 'starting') {
    // A read right after start (an agent's first call over stdio) waits for the first applied block,
    // within the same bound as min_block; the view below still answers not_yet_indexed if it never comes.
    await indexer.waitForBlock(0, ctx.minBlockTimeoutMs);
  }
  return () => {
    if (indexer.asOfBlock === undefined && indexer.syncState === 'stalled') {
      throw new ChainUnavailableError(
        `nothing is indexed yet and the chain cannot be read (${indexer.lastError ?? 'no answer'})`,
      );
    }
    if (indexer.asOfBlock === undefined) {
      throw new ArkivectorError('not_yet_indexed', 'the node is still starting: nothing is indexed yet', {
        meta: { as_of_block: null, sync_state: indexer.syncState },
      });
    }
    return {
      as_of_block: indexer.asOfBlock,
      as_of_block_hash: indexer.asOfBlockHash ?? null,
      sync_state: indexer.syncState,
      collections: indexer.collections,
    };
  };
}

export function collectionIn(view: View, name: string): PublishedCollection<ReadableStore> {
  const collection = view.collections.get(name);
  if (!collection) throw new CollectionNotFoundError(name);
  return collection;
}

/** The Collection object of docs/rest.md and docs/tools.md. */
export function describeCollection(view: View, c: PublishedCollection<ReadableStore>): Collection {
  const d = c.definition;
  return {
    name: c.name,
    column: `halfvec(${d.dim})`,
    dim: d.dim,
    metric: d.metric,
    index: {
      type: 'hnsw',
      opclass: METRIC_OPS[d.metric].opclass,
      m: d.index.m,
      ef_construction: d.index.ef_construction,
      ef_search: d.index.ef_search,
    },
    attributes: { ...d.attributes },
    open: d.open,
    owner: c.owner,
    writers: [...d.writers],
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.embedder !== undefined ? { embedder: { ...d.embedder } } : {}),
    definition_key: c.definitionKey,
    conflicts: [...c.conflicts],
    ...(c.ownerChange
      ? { owner_change: { previous_owner: c.ownerChange.previousOwner, at_block: c.ownerChange.atBlock } }
      : {}),
    stats: { ...c.stats },
    sync_state: view.sync_state,
    as_of_block: view.as_of_block,
  };
}
