// Shared write fixtures for suites that put arkivector entities on the devnet through the SDK, plus a
// seeded random generator and a sync-state waiter.
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { encodeCollectionEntity, encodeVectorEntity } from '../../src/collections/index.ts';
import type { ChainIndexer, SyncState } from '../../indexer/index.ts';

/** An open collection of 4-dimensional cosine vectors with pgvector's index defaults and `attributes`. */
export function openDefinition(attributes: CollectionDefinition['attributes'] = {}): CollectionDefinition {
  return {
    dim: 4,
    metric: 'cosine',
    open: true,
    writers: [],
    index: { m: 16, ef_construction: 64, ef_search: 40 },
    attributes,
  };
}

/** createEntity arguments for a collection definition. */
export function definitionArgs(name: string, def: CollectionDefinition, expiresIn = 100_000) {
  return { ...encodeCollectionEntity(name, def), expiresIn };
}

/** createEntity arguments for a vector entity. */
export function vectorArgs(
  collection: string,
  entity: { id: string; vector: number[]; document?: string; attributes?: Record<string, unknown> },
  def: CollectionDefinition,
  expiresIn = 20_000,
) {
  const encoded = encodeVectorEntity({ collection, ...entity }, def);
  return { payload: encoded.payload, contentType: encoded.contentType, attributes: encoded.attributes, expiresIn };
}

/** Resolves when `indexer` reaches `wanted`, failing after `ms`. */
export function stateReached(
  indexer: Pick<ChainIndexer, 'syncState' | 'on' | 'off'>,
  wanted: SyncState,
  ms = 15_000,
): Promise<void> {
  if (indexer.syncState === wanted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sync state ${wanted} not reached (is ${indexer.syncState})`)), ms);
    const on = (state: SyncState) => {
      if (state !== wanted) return;
      clearTimeout(timer);
      indexer.off('state', on);
      resolve();
    };
    indexer.on('state', on);
  });
}
