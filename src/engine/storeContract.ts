// What the indexer needs from a collection store: staged changes with a synchronous commit, so one
// block becomes visible in every collection at once. The engine declares it (CollectionStore
// implements it, storeFactory.ts builds it) so the engine never imports from indexer/: the indexer
// sits above the engine and takes the contract from src/engine/index.ts.
import type { CollectionDefinition, VectorRecord } from '../collections/index.ts';

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
  /** Loaded from a snapshot it had to convert (another engine's graph): that snapshot is written again. */
  readonly converted?: boolean;
  /** Stops background work (a running graph rebuild) of a store the indexer dropped; reads keep working. */
  close?(): Promise<void>;
}

export interface StoreFactory<S extends IndexedStore = IndexedStore> {
  create(name: string, definition: CollectionDefinition): S;
  load(dir: string, name: string, definition: CollectionDefinition): Promise<S>;
}
