// Shapes records for answers: typed attributes as {type, value}, expiry as a block number (or "never"), documents
// only when asked for.
import type { CollectionDefinition } from '../collections/index.ts';
import type { RecordSummary } from './context.ts';
import { expiresAtBlock } from './lifetime.ts';

type AttributeType = CollectionDefinition['attributes'][string];

/** Each definition's attributes in name order, sorted once rather than per rendered record. */
const sortedAttributes = new WeakMap<CollectionDefinition, readonly (readonly [string, AttributeType])[]>();

function attributesByName(definition: CollectionDefinition): readonly (readonly [string, AttributeType])[] {
  let sorted = sortedAttributes.get(definition);
  if (sorted === undefined) {
    sorted = Object.entries(definition.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    sortedAttributes.set(definition, sorted);
  }
  return sorted;
}

/**
 * A record's attributes that its collection defines, as `{type, value}`, in name order (attributes the
 * definition does not name are left out).
 */
export function typedAttributes(record: RecordSummary, definition: CollectionDefinition) {
  const out: Record<string, { type: AttributeType; value: string | number | boolean }> = {};
  const values = record.attributes;
  for (const [name, type] of attributesByName(definition)) {
    const value = values[name];
    if (value !== undefined && Object.hasOwn(values, name))
      out[name] = { type, value: type === 'f32' && typeof value === 'number' ? shortestF32(value) : value };
  }
  return out;
}

/**
 * The shortest decimal that rounds to the same binary32 value: what was written (8.59), not the binary32
 * value printed as a double (8.59000015258789). Nine significant digits always round-trip.
 */
export function shortestF32(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return Number(value.toPrecision(9));
}

export function entityOf(record: RecordSummary, definition: CollectionDefinition, includeDocument: boolean) {
  return {
    key: record.key,
    id: record.id,
    owner: record.owner,
    ...(record.creator ? { creator: record.creator } : {}),
    expires_at_block: expiresAtBlock(record.expiresAt),
    attributes: typedAttributes(record, definition),
    ...(includeDocument ? { document: record.document } : {}),
  };
}
