// The StoreFactory the chain indexer uses (storeContract.ts): creates and loads the engine's
// CollectionStore for each collection it resolves. Wired in by src/gateway.ts.

import type { CollectionDefinition } from '../collections/index.ts';
import type { StoreFactory } from './storeContract.ts';
import { CollectionStore } from './collectionStore.ts';

/**
 * Engine-backed stores for the indexer.
 * @example new ChainIndexer({ stores: engineStores, … })
 */
export const engineStores = {
  create: (name: string, definition: CollectionDefinition): CollectionStore => new CollectionStore(name, definition),
  load: (dir: string, name: string, definition: CollectionDefinition): Promise<CollectionStore> =>
    CollectionStore.load(dir, name, definition),
} satisfies StoreFactory<CollectionStore>;
