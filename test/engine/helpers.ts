// Shared fixtures for the engine tests: seeded PRNG, clustered vectors, VectorRecord builders.
import {
  type CollectionDefinition,
  decodeVectorPayload,
  encodeVectorPayload,
  type AttributeValue,
  type VectorRecord,
} from '../../src/collections/index.ts';
export { mulberry32 } from '../helpers/writes.ts';
import { mulberry32 } from '../helpers/writes.ts';

export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** Clustered unit vectors: `clusters` centres, each point = centre + spread·noise, normalised. */
export function clustered(
  n: number,
  dim: number,
  seed: number,
  clusters = 16,
  spread = 0.5,
): { vectors: Float32Array[]; cluster: number[] } {
  const centres = mulberry32(12345);
  const c: number[][] = [];
  for (let i = 0; i < clusters; i++) c.push(Array.from({ length: dim }, () => gaussian(centres)));
  const rand = mulberry32(seed);
  const vectors: Float32Array[] = [];
  const cluster: number[] = [];
  for (let i = 0; i < n; i++) {
    const ci = Math.floor(rand() * clusters);
    const v = new Float32Array(dim);
    let norm = 0;
    for (let j = 0; j < dim; j++) {
      v[j] = c[ci]![j]! + spread * gaussian(rand);
      norm += v[j]! * v[j]!;
    }
    norm = Math.sqrt(norm);
    for (let j = 0; j < dim; j++) v[j] = v[j]! / norm;
    vectors.push(v);
    cluster.push(ci);
  }
  return { vectors, cluster };
}

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
