// The record shapes of a collection store: what a slot keeps (everything but the vector, which lives
// in the slab) and what readers get (a fresh object owning a copy of its vector).

import type { AttributeValue, VectorRecord } from '../collections/index.ts';
import { halfvecOf } from './vectorSlab.ts';

/** What a slot keeps of a record: everything but the vector, which lives in the slab. */
export type StoredRecord = Omit<VectorRecord, 'vector' | 'halfvec'>;

/**
 * A record read out of the store: it owns a copy of its vector (the slab slot may be reused later);
 * the halfvec bytes are derived from that copy on first read, since few readers ask and encoding
 * costs about twice the copy. A search hit takes its copy on first read too (most answers never show
 * vectors), and at the latest before the store next writes its slab (see HitBatch).
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
  #vector: Float32Array | undefined;
  #load: (() => Float32Array) | undefined;
  #halfvec: Uint8Array | undefined;

  /**
   * @param r the stored fields
   * @param vector the record's own copy of its vector, or a function that makes that copy (called once)
   */
  constructor(r: StoredRecord, vector: Float32Array | (() => Float32Array)) {
    this.key = r.key;
    this.owner = r.owner;
    this.creator = r.creator;
    this.collection = r.collection;
    this.id = r.id;
    this.expiresAt = r.expiresAt;
    this.dim = r.dim;
    this.document = r.document;
    this.attributes = r.attributes;
    if (typeof vector === 'function') this.#load = vector;
    else this.#vector = vector;
  }

  get vector(): Float32Array {
    if (this.#vector === undefined) {
      this.#vector = this.#load!();
      this.#load = undefined;
    }
    return this.#vector;
  }

  set vector(v: Float32Array) {
    this.#vector = v;
    this.#load = undefined;
  }

  /** Takes the vector copy now if it was deferred. */
  settle(): void {
    void this.vector;
  }

  get halfvec(): Uint8Array {
    return (this.#halfvec ??= halfvecOf(this.vector));
  }

  set halfvec(bytes: Uint8Array) {
    this.#halfvec = bytes;
  }
}

/**
 * The hits of one search whose vector copies are deferred. The store holds each batch weakly and
 * settles the live ones before it writes its slab again (the next block's prepare): until then every
 * slot still holds the vector it held at search time, so a deferred copy is the same copy. One
 * WeakRef per search (not per hit) keeps the cost near 1 µs; like any WeakRef target, a batch lives
 * at least until the current job ends, so a synchronous loop of searches keeps its hits until it
 * returns to the event loop.
 */
export class HitBatch {
  readonly views: RecordView[] = [];

  settle(): void {
    for (const v of this.views) v.settle();
  }
}

/** Weakly held HitBatches: settled together, pruned of collected ones as the list grows. */
export class PendingHits {
  #refs: WeakRef<HitBatch>[] = [];
  #pruneAt = PENDING_PRUNE_MIN;

  track(batch: HitBatch): void {
    this.#refs.push(new WeakRef(batch));
    if (this.#refs.length < this.#pruneAt) return;
    this.#refs = this.#refs.filter((r) => r.deref() !== undefined);
    this.#pruneAt = Math.max(PENDING_PRUNE_MIN, this.#refs.length * 2);
  }

  /** Copies every deferred vector still reachable; called before the slab is written. */
  settleAll(): void {
    for (const r of this.#refs) r.deref()?.settle();
    this.#refs = [];
    this.#pruneAt = PENDING_PRUNE_MIN;
  }
}

/** Batches tracked before the first pruning pass (the list then prunes at twice what survives). */
const PENDING_PRUNE_MIN = 1024;

/**
 * A record's attributes as a fast-properties object with no prototype. Decoders build them with
 * `Object.create(null)`, which V8 keeps in dictionary mode: about 200 bytes for two attributes, against
 * about 60 for an object whose shape every record with the same attribute names shares. The prototype
 * is dropped before any name is set, so `__proto__` (a valid attribute name) stays an own property.
 * @param attrs the decoded attributes
 * @returns a copy with the same own properties, in the same order
 */
export function compactAttributes(attrs: Readonly<Record<string, AttributeValue>>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  Object.setPrototypeOf(out, null);
  for (const name of Object.keys(attrs)) out[name] = attrs[name]!;
  return out;
}

/**
 * The part of a record a slot keeps.
 * @param rec an incoming record
 * @returns a fresh object with the stored fields only: keeping the caller's record would pin its vector
 * arrays (and its attributes in dictionary mode, see compactAttributes)
 */
export function storedRecord(rec: VectorRecord): StoredRecord {
  return {
    key: rec.key,
    owner: rec.owner,
    creator: rec.creator,
    collection: rec.collection,
    id: rec.id,
    expiresAt: rec.expiresAt,
    dim: rec.dim,
    document: rec.document,
    attributes: compactAttributes(rec.attributes),
  };
}
