// The record the engine benches (`scripts/bench.ts`, `scripts/peers/inMemory.ts`) insert for vector i: a
// synthetic key, owner and id, and the vector passed through the wire codec, as the indexer stores it.
import {
  type AttributeValue,
  decodeVectorPayload,
  encodeVectorPayload,
  type VectorRecord,
} from '../src/collections/index.ts';

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
