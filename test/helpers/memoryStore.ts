// A plain Map-backed store implementing the indexer's store contract, so indexer suites can read the
// exact live set the indexer published (the engine's CollectionStore is tested on its own).
import type { CollectionDefinition, VectorRecord } from '../../src/collections/index.ts';
import type { IndexedStore, StoreChanges, StoreFactory } from '../../indexer/storeContract.ts';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class MemoryStore implements IndexedStore {
  readonly byId = new Map<string, VectorRecord>();
  definition: CollectionDefinition;
  constructor(definition: CollectionDefinition) {
    this.definition = definition;
  }
  get size() {
    return this.byId.size;
  }
  get(ref: string) {
    return this.byId.get(ref) ?? [...this.byId.values()].find((r) => r.key === ref.toLowerCase());
  }
  records() {
    return this.byId.values();
  }
  updateDefinition(definition: CollectionDefinition) {
    this.definition = definition;
  }
  async prepare(changes: StoreChanges) {
    return () => {
      for (const key of changes.remove) {
        for (const [id, record] of this.byId) if (record.key === key) this.byId.delete(id);
      }
      for (const record of changes.upsert) {
        for (const [id, existing] of this.byId) if (existing.key === record.key) this.byId.delete(id);
        this.byId.set(record.id, record);
      }
    };
  }
  async save(dir: string) {
    const records = [...this.byId.values()].map((r) => ({ ...r, expiresAt: r.expiresAt.toString(), vector: [...r.vector], halfvec: [...r.halfvec] }));
    await writeFile(join(dir, 'records.json'), JSON.stringify(records));
  }
  static async load(dir: string, definition: CollectionDefinition) {
    const store = new MemoryStore(definition);
    const records = JSON.parse(await readFile(join(dir, 'records.json'), 'utf8')) as (Omit<VectorRecord, 'expiresAt' | 'vector' | 'halfvec'> & { expiresAt: string; vector: number[]; halfvec: number[] })[];
    for (const r of records) {
      store.byId.set(r.id, { ...r, attributes: Object.assign(Object.create(null), r.attributes), expiresAt: BigInt(r.expiresAt), vector: new Float32Array(r.vector), halfvec: new Uint8Array(r.halfvec) });
    }
    return store;
  }
}

export const memoryStores: StoreFactory = {
  create: (_name, definition) => new MemoryStore(definition),
  load: (dir, _name, definition) => MemoryStore.load(dir, definition),
};
