// One returned entity against the chain: that it is its id's winner in the collection at the block, and
// that every field the answer shows is the chain's; and the request's filter, evaluated by the engine's
// own compiler and predicates over the chain's records.
import { isDeepStrictEqual } from 'node:util';
import type { CollectionDefinition, VectorRecord } from '../collections/index.ts';
import { AttributeColumns } from '../engine/attributeColumns.ts';
import { compileFilter } from '../engine/filter/compile.ts';
import { buildPredicate } from '../engine/filter/predicate.ts';
import { expiresAtBlock } from '../service/lifetime.ts';
import { typedAttributes } from '../service/render.ts';
import type { VectorsAt, Winner } from './collectionAt.ts';
import type { Check } from './types.ts';

/** The fields of an entity or search result the answer shows (each optional: answers differ by kind). */
export interface Claimed {
  key?: unknown;
  id?: unknown;
  owner?: unknown;
  creator?: unknown;
  expires_at_block?: unknown;
  last_modified_block?: unknown;
  attributes?: unknown;
  document?: unknown;
}

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);

/**
 * Finds the chain's winner for a claimed entity, or says why there is none.
 * @returns the winner, or the evidence of a refutation
 */
export function winnerFor(
  claimed: Claimed,
  vectors: VectorsAt,
  name: string,
  block: number,
): { winner: Winner } | { evidence: string } {
  const id = String(claimed.id);
  const key = String(lower(claimed.key));
  const winner = vectors.winners.get(id);
  const judged = vectors.judged.get(key);
  if (winner && winner.entity.key === key) return { winner };
  if (judged?.kind === 'not_permitted')
    return {
      evidence: `entity ${key} was created or is owned by a writer collection ${name} does not permit (creator ${judged.entity.creator ?? 'unknown'}, owner ${judged.entity.owner})`,
    };
  if (judged?.kind === 'rejected') return { evidence: `entity ${key} does not count in ${name}: ${judged.reason}` };
  if (judged && winner)
    return {
      evidence: `entity ${key} is shadowed: id ${JSON.stringify(id)} is entity ${winner.entity.key} (modified at block ${winner.entity.lastModifiedAtBlock}) at block ${block}`,
    };
  if (winner)
    return {
      evidence: `no live vector of ${name} has key ${key} and id ${JSON.stringify(id)} at block ${block}: that id is entity ${winner.entity.key}`,
    };
  return { evidence: `no live vector of ${name} has id ${JSON.stringify(id)} at block ${block}` };
}

/** The fields of `claimed` that differ from the chain's record, described; empty when all agree. */
export function fieldMismatches(
  claimed: Claimed,
  record: VectorRecord,
  lastModified: number | undefined,
  definition: CollectionDefinition,
  block: number,
): string[] {
  const out: string[] = [];
  const differs = (field: string, shown: unknown, chain: unknown) =>
    out.push(`${field}: the answer says ${JSON.stringify(shown)}, the chain ${JSON.stringify(chain)}`);
  if (claimed.owner !== undefined && lower(claimed.owner) !== record.owner.toLowerCase())
    differs('owner', claimed.owner, record.owner);
  if ((claimed.creator !== undefined || 'owner' in claimed) && lower(claimed.creator) !== lower(record.creator))
    differs('creator', claimed.creator, record.creator);
  // As answers give it: a block number, or "never" for a permanent entity.
  const expires = expiresAtBlock(BigInt(record.expiresAt));
  if (claimed.expires_at_block !== expires) differs('expires_at_block', claimed.expires_at_block, expires);
  if (typeof claimed.expires_at_block === 'number' && claimed.expires_at_block <= block)
    out.push(`expires_at_block ${claimed.expires_at_block} is not after block ${block}: not live there`);
  if (claimed.last_modified_block !== undefined && claimed.last_modified_block !== lastModified)
    differs('last_modified_block', claimed.last_modified_block, lastModified);
  const attributes = typedAttributes(record, definition);
  if (!isDeepStrictEqual(sortedEntries(claimed.attributes), sortedEntries(attributes)))
    differs('attributes', claimed.attributes, attributes);
  if (claimed.document !== undefined && claimed.document !== record.document)
    differs('document', claimed.document, record.document);
  return out;
}

const sortedEntries = (value: unknown) =>
  value && typeof value === 'object'
    ? Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => [k, v && typeof v === 'object' ? { ...v } : v] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1))
    : value;

/**
 * The request's `where` / `filter` as a test of chain records, compiled by the engine against the
 * collection's definition; undefined when the request has none.
 * @throws InvalidFilterError when it does not compile against that definition
 */
export function filterOf(
  request: { where?: unknown; filter?: unknown },
  definition: CollectionDefinition,
): ((records: readonly VectorRecord[]) => boolean[]) | undefined {
  const cond = compileFilter(
    { where: typeof request.where === 'string' ? request.where : undefined, filter: request.filter },
    definition,
  );
  if (cond === undefined) return undefined;
  return (records) => {
    const columns = new AttributeColumns(() => records.length);
    columns.reset(definition.attributes);
    records.forEach((record, slot) => void columns.set(slot, record));
    const passes = buildPredicate(cond, columns);
    return records.map((_, slot) => passes(slot));
  };
}

/** The request's filter checks of `records` (one per record), or one unverifiable check when it does not compile. */
export function filterChecks(
  request: { where?: unknown; filter?: unknown },
  definition: CollectionDefinition,
  records: readonly { subject: string; record: VectorRecord }[],
): Check[] {
  let test: ReturnType<typeof filterOf>;
  try {
    test = filterOf(request, definition);
  } catch (error) {
    return [
      {
        check: 'filter',
        verdict: 'unverifiable',
        reason: `the request's filter does not compile against the collection's definition: ${(error as Error).message}`,
      },
    ];
  }
  if (!test) return [];
  const passes = test(records.map((r) => r.record));
  return records.map(({ subject }, i) =>
    passes[i]
      ? { check: 'filter', verdict: 'verified', subject }
      : { check: 'filter', verdict: 'refuted', subject, evidence: "the chain's entity does not pass the filter" },
  );
}
