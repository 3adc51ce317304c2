// The StoreFactory the chain indexer uses (storeContract.ts): creates and loads the engine's
// CollectionStore for each collection it resolves. Wired in by src/node/indexer.ts.

import type { CollectionDefinition } from '../collections/index.ts';
import { CollectionStore, type StoreOptions } from './collectionStore.ts';
import type { StoreFactory } from './storeContract.ts';

/**
 * Engine-backed stores for the indexer, with options (the gateway passes its logger for rebuilds).
 * @param options how the stores run and log their graph rebuilds
 * @example new ChainIndexer({ stores: engineStoresWith({ rebuild: { logger } }), … })
 */
export function engineStoresWith(options: StoreOptions): StoreFactory<CollectionStore> {
  return {
    create: (name: string, definition: CollectionDefinition) => new CollectionStore(name, definition, options),
    load: (dir: string, name: string, definition: CollectionDefinition) =>
      CollectionStore.load(dir, name, definition, options),
  };
}

/**
 * Engine-backed stores for the indexer (rebuild failures are not logged).
 * @example new ChainIndexer({ stores: engineStores, … })
 */
export const engineStores = engineStoresWith({});
