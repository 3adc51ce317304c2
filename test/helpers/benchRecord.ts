// The record the engine benches (scripts/bench/engine.ts, test/bench/peers/inMemory.ts) insert for vector i: a
// synthetic key, owner and id, and the vector passed through the wire codec, as the indexer stores it;
// and the collection those records go into.
import {
  type AttributeValue,
  type CollectionDefinition,
  decodeVectorPayload,
  encodeVectorPayload,
  type VectorRecord,
} from '../../src/collections/index.ts';

type Vector = Parameters<typeof encodeVectorPayload>[0]['vector'];

export function benchRecord(i: number, vector: Vector, attributes: Record<string, AttributeValue> = {}): VectorRecord {
  const p = decodeVectorPayload(encodeVectorPayload({ vector, document: '' }));
  return {
    key: `0x${i.toString(16).padStart(64, '0')}`,
    owner: '0x00000000000000000000000000000000000000aa',
    creator: undefined,
    collection: 'bench',
    id: String(i),
    expiresAt: 1n << 40n,
    dim: p.vector.length,
    vector: p.vector,
    halfvec: p.halfvec,
    document: '',
    attributes: Object.assign(Object.create(null), attributes),
  };
}

/** The benches' collection: cosine, the two attributes their filter cases select on (`bucket`, `cluster`). */
export function benchDefinition(dim: number, index: { m: number; efConstruction: number }): CollectionDefinition {
  return {
    dim,
    metric: 'cosine',
    attributes: { bucket: 'i32', cluster: 'i32' },
    open: true,
    writers: [],
    index: { m: index.m, ef_construction: index.efConstruction, ef_search: 40 },
  };
}
