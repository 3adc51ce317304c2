// What the indexer needs from a collection store (the engine's CollectionStore implements it): staged
// changes with a synchronous commit, so one block becomes visible in every collection at once.
import type { CollectionDefinition, VectorRecord } from '../src/collections/index.ts';

export interface StoreChanges {
  /** Entity keys to drop. */
  remove: readonly string[];
  /** Records to insert, replacing any record with the same id or key. */
  upsert: readonly VectorRecord[];
}

export interface IndexedStore {
  readonly size: number;
  get(ref: string): VectorRecord | undefined;
  records(): IterableIterator<VectorRecord>;
  updateDefinition(definition: CollectionDefinition): void;
  /** Does the expensive work (may yield to the event loop); nothing is visible until the returned commit runs. */
  prepare(changes: StoreChanges): Promise<() => void>;
  save(dir: string): Promise<void>;
}

export interface StoreFactory<S extends IndexedStore = IndexedStore> {
  create(name: string, definition: CollectionDefinition): S;
  load(dir: string, name: string, definition: CollectionDefinition): Promise<S>;
}
