// The record shapes a collection store hands out: the summary search hits carry (everything but the
// vector) and what get/records readers get (a fresh object owning a copy of its vector). The store
// itself keeps neither: its records are columns (slotTable.ts).

import type { AttributeValue, VectorRecord } from '../collections/index.ts';
import { halfvecOf } from './vectorSlab.ts';

/**
 * A record without its vector and the fields every record of a store shares (its collection's name and
 * dimension), which readers get from the store: what search hits and listings carry, built from the
 * store's columns on demand (slotTable.ts `summary`).
 */
export type StoredRecord = Omit<VectorRecord, 'vector' | 'halfvec' | 'collection' | 'dim'>;

/**
 * A record read out of the store (get, records): it owns a copy of its vector (the slab slot may be
 * reused later); the halfvec bytes are derived from that copy on first read, since few readers ask and
 * encoding costs about twice the copy. Search hits do not use it: they carry the stored summary.
 */
export class RecordView implements VectorRecord {
  key: string;
  owner: string;
  creator: string | undefined;
  collection: string;
  id: string;
  expiresAt: bigint;
  dim: number;
  document: string;
  attributes: Record<string, AttributeValue>;
  vector: Float32Array;
  #halfvec: Uint8Array | undefined;

  /**
   * @param r the stored fields
   * @param vector the record's own copy of its vector
   * @param collection the store's collection name
   */
  constructor(r: StoredRecord, vector: Float32Array, collection: string) {
    this.key = r.key;
    this.owner = r.owner;
    this.creator = r.creator;
    this.collection = collection;
    this.id = r.id;
    this.expiresAt = r.expiresAt;
    this.dim = vector.length;
    this.document = r.document;
    this.attributes = r.attributes;
    this.vector = vector;
  }

  get halfvec(): Uint8Array {
    return (this.#halfvec ??= halfvecOf(this.vector));
  }

  set halfvec(bytes: Uint8Array) {
    this.#halfvec = bytes;
  }
}
