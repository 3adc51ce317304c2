// The record shapes of a collection store: what a slot keeps (everything but the vector, which lives
// in the slab, and what search hits carry) and what get/records readers get (a fresh object owning a
// copy of its vector).

import type { AttributeValue, VectorRecord } from '../collections/index.ts';
import { halfvecOf } from './vectorSlab.ts';

/**
 * What a slot keeps of a record: everything but the vector (in the slab or the graph) and the fields
 * every record of a store shares (its collection's name and dimension: 16 bytes a record), which
 * readers get from the store.
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

/**
 * The attributes of every record that has none: one object (nothing writes to a stored record's
 * attributes but the string sharing, which finds no names here), frozen so that nothing can.
 */
const NO_ATTRIBUTES: Readonly<Record<string, AttributeValue>> = Object.freeze(Object.setPrototypeOf({}, null));

/** A value JSON carries exactly (it has no −0, NaN or ±Infinity). */
function jsonExact(v: AttributeValue): boolean {
  return typeof v !== 'number' || (Number.isFinite(v) && !Object.is(v, -0));
}

/**
 * A record's attributes as a fast-properties object with no prototype, sized to its properties.
 * Decoders build them with `Object.create(null)`, which V8 keeps in dictionary mode (about 200 bytes
 * for two attributes); an object literal preallocates four properties (56 bytes for one to four);
 * JSON.parse allocates exactly the properties it reads (40 bytes for two), so values JSON carries
 * exactly go through it. The prototype is dropped after parsing (JSON.parse makes `__proto__`, a valid
 * attribute name, an own property) or, for the literal, before any name is set.
 * @param attrs the decoded attributes
 * @returns a copy with the same own properties, in the same order (the shared empty object for none)
 */
export function compactAttributes(attrs: Readonly<Record<string, AttributeValue>>): Record<string, AttributeValue> {
  const names = Object.keys(attrs);
  if (names.length === 0) return NO_ATTRIBUTES as Record<string, AttributeValue>;
  let out: Record<string, AttributeValue>;
  if (!Array.isArray(attrs) && names.every((name) => jsonExact(attrs[name]!))) {
    out = JSON.parse(JSON.stringify(attrs));
    Object.setPrototypeOf(out, null);
  } else {
    out = {};
    Object.setPrototypeOf(out, null);
    for (const name of names) out[name] = attrs[name]!;
  }
  return out;
}

/**
 * Attributes read from a snapshot's JSON, kept as they are (JSON.parse sized them: see
 * compactAttributes) once their prototype is dropped.
 * @param parsed an object JSON.parse made, the caller's to give away
 */
export function parsedAttributes(parsed: Record<string, AttributeValue>): Record<string, AttributeValue> {
  if (Array.isArray(parsed)) return compactAttributes(parsed);
  if (Object.keys(parsed).length === 0) return NO_ATTRIBUTES as Record<string, AttributeValue>;
  Object.setPrototypeOf(parsed, null);
  return parsed;
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
    id: rec.id,
    expiresAt: rec.expiresAt,
    document: rec.document,
    attributes: compactAttributes(rec.attributes),
  };
}
