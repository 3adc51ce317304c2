// Shared fixtures for the engine tests: VectorRecord builders, and the seeded generators of
// test/helpers/generators.ts (shared with the benchmarks).
import {
  type CollectionDefinition,
  decodeVectorPayload,
  encodeVectorPayload,
  type AttributeValue,
  type VectorRecord,
} from '../../src/collections/index.ts';
export { clustered, mulberry32 } from '../helpers/generators.ts';

export function definition(
  dim: number,
  attributes: CollectionDefinition['attributes'] = {},
  metric: CollectionDefinition['metric'] = 'cosine',
): CollectionDefinition {
  return { dim, metric, attributes, open: true, writers: [], index: { m: 16, ef_construction: 64, ef_search: 40 } };
}

export function keyOf(i: number): string {
  return `0x${i.toString(16).padStart(64, '0')}`;
}

export function makeRecord(
  i: number,
  vector: ArrayLike<number>,
  attributes: Record<string, AttributeValue> = {},
  options: { document?: string; id?: string; key?: string; owner?: string; collection?: string } = {},
): VectorRecord {
  const payload = decodeVectorPayload(
    encodeVectorPayload({ vector: Array.from(vector), document: options.document ?? '' }),
  );
  const attrs: Record<string, AttributeValue> = Object.create(null);
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) attrs[k] = v;
  return {
    key: options.key ?? keyOf(i),
    owner: options.owner ?? '0x00000000000000000000000000000000000000aa',
    creator: options.owner ?? '0x00000000000000000000000000000000000000aa',
    collection: options.collection ?? 'test',
    id: options.id ?? `id-${i}`,
    expiresAt: 1000n,
    dim: payload.dim,
    vector: payload.vector,
    halfvec: payload.halfvec,
    document: payload.document,
    attributes: attrs,
  };
}
