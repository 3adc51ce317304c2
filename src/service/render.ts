// Shapes records for answers: typed attributes as {type, value}, expiry as a block number, documents
// only when asked for.
import type { CollectionDefinition, VectorRecord } from '../collections/index.ts';

export function typedAttributes(record: Omit<VectorRecord, 'vector' | 'halfvec'>, definition: CollectionDefinition) {
  const out: Record<string, { type: CollectionDefinition['attributes'][string]; value: string | number | boolean }> =
    {};
  const byName = Object.entries(record.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, value] of byName) {
    const type = definition.attributes[name];
    if (type) out[name] = { type, value };
  }
  return out;
}

export function entityOf(
  record: Omit<VectorRecord, 'vector' | 'halfvec'>,
  definition: CollectionDefinition,
  includeDocument: boolean,
) {
  return {
    key: record.key,
    id: record.id,
    owner: record.owner,
    ...(record.creator ? { creator: record.creator } : {}),
    expires_at_block: Number(record.expiresAt),
    attributes: typedAttributes(record, definition),
    ...(includeDocument ? { document: record.document } : {}),
  };
}
