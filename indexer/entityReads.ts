// Entity reads the indexer makes besides blocks: an entity's creation (for an operation that does not
// carry it), a collection's vectors when its name gains a definition, and vector entities read again
// when the resolver dropped their content. Everything read is bounded and checked against the block.
import type { Address, Hex } from 'viem';
import type { ChainEntity, ChainSource, PageOptions } from '../src/chain/index.ts';
import { ATTR_COLLECTION, ATTR_TYPE, ENTITY_DECODED_MAX_BYTES } from '../src/collections/index.ts';
import type { CollectionFilter } from './applyOps.ts';
import type { IndexerLogger } from './types.ts';
import { boundedEntity, classify, type EntityContent, type TrackedEntity } from './trackedEntities.ts';

/** Collection names per `IN (…)` query when vectors are read by name. */
export const NAMES_PER_QUERY = 50;
/**
 * Up to this many entities read again for one collection are read one by one (`entityAt`); more, and the
 * whole collection is paged through instead (fewer round trips for a rebuild or a definition change).
 */
export const REREAD_ONE_BY_ONE_MAX = 64;
/** Concurrent `entityAt` reads when reading entities again one by one. */
const REREAD_CONCURRENCY = 8;

/** An entity as the table tracks it, or undefined when it is not an arkivector entity this node keeps. */
export function toTracked(entity: ChainEntity, wanted: CollectionFilter): TrackedEntity | undefined {
  const stringAttributes = new Map((entity.stringAttributes ?? []).map((a) => [a.key, a.value]));
  const kind = classify(stringAttributes);
  if (!kind || (wanted && !wanted(kind.collection))) return undefined;
  // An oversize payload is never decoded from hex: it is only measured.
  const hexBytes = entity.value ? (entity.value.length - 2) >> 1 : 0;
  const skip = hexBytes > ENTITY_DECODED_MAX_BYTES;
  return boundedEntity(
    {
      key: entity.key.toLowerCase() as Hex,
      ...kind,
      owner: entity.owner.toLowerCase() as Address,
      creator: entity.creator?.toLowerCase() as Address | undefined,
      contentType: entity.contentType ?? '',
      payload: entity.value && !skip ? new Uint8Array(Buffer.from(entity.value.slice(2), 'hex')) : new Uint8Array(),
      stringAttributes,
      numericAttributes: new Map((entity.numericAttributes ?? []).map((a) => [a.key, BigInt(a.value)])),
      expiresAt: BigInt(entity.expiresAt),
      lastModifiedAtBlock: entity.lastModifiedAtBlock ?? 0,
      sequence: creationSequence(entity),
    },
    skip ? hexBytes : 0,
  );
}

const creationSequence = (entity: ChainEntity): bigint =>
  (BigInt(entity.createdAtBlock ?? 0) << 32n) |
  (BigInt(entity.transactionIndexInBlock ?? 0) << 16n) |
  BigInt(entity.operationIndexInTransaction ?? 0);

/** What the reads need: the source, which collections this node keeps, and the budget's page pacing. */
export interface EntityReader {
  readonly source: ChainSource;
  readonly wanted: CollectionFilter;
  readonly paged: PageOptions;
  readonly logger: IndexerLogger;
}

/** The creator and creation position of `key`, read at `block`. */
export async function lookupCreation(reader: EntityReader, key: Hex, block: number) {
  const found = await reader.source.entityAt(key, block);
  return found && { creator: found.creator?.toLowerCase() as Address | undefined, sequence: creationSequence(found) };
}

/**
 * The content of vector entities the resolver dropped, read again at `block` (the block the table
 * reflects). Each must come back with the content the table tracks (same last modification) and the
 * block must still have `hash`: otherwise the step fails and is retried, and nothing is published.
 */
export async function reread(
  reader: EntityReader,
  entities: readonly TrackedEntity[],
  block: number,
  hash: Hex | undefined,
): Promise<ReadonlyMap<Hex, EntityContent>> {
  const { source } = reader;
  const wanted = new Map(entities.map((e) => [e.key, e]));
  const found = new Map<Hex, EntityContent>();
  const keep = (entity: ChainEntity | undefined) => {
    const tracked = entity && wanted.get(entity.key.toLowerCase() as Hex);
    const read = tracked && toTracked(entity, reader.wanted);
    if (!tracked || !read?.content) return;
    if (read.lastModifiedAtBlock !== tracked.lastModifiedAtBlock)
      throw new Error(`entity ${read.key} changed at block ${block} while it was read again; retrying`);
    found.set(read.key, read.content);
  };
  const started = Date.now();
  if (entities.length <= REREAD_ONE_BY_ONE_MAX) {
    for (let i = 0; i < entities.length; i += REREAD_CONCURRENCY)
      for (const entity of await Promise.all(
        entities.slice(i, i + REREAD_CONCURRENCY).map((e) => source.entityAt(e.key, block)),
      ))
        keep(entity);
  } else {
    const names = [...new Set(entities.map((e) => e.collection))];
    for (const name of names)
      await source.forEachEntityPage(
        { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: name } },
        block,
        (page) => {
          for (const entity of page) keep(entity);
        },
        reader.paged,
      );
  }
  if (hash !== undefined) {
    const [header] = await source.headers([block]);
    if (header?.hash !== hash) throw new Error(`block ${block} changed while entities were read again; retrying`);
  }
  const missing = entities.find((e) => !found.has(e.key));
  if (missing) throw new Error(`entity ${missing.key} is not live at block ${block} with the content indexed`);
  reader.logger.debug({ block, entities: entities.length, ms: Date.now() - started }, 'entities read again');
  return found;
}

/**
 * The vectors of these names at `block` (one query per NAMES_PER_QUERY names), checked to come from the
 * block being applied.
 */
export async function loadVectors(
  reader: EntityReader,
  names: readonly string[],
  block: number,
  hash: Hex,
): Promise<TrackedEntity[]> {
  const out: TrackedEntity[] = [];
  for (let i = 0; i < names.length; i += NAMES_PER_QUERY)
    await reader.source.forEachEntityPage(
      { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: names.slice(i, i + NAMES_PER_QUERY) } },
      block,
      (page) => {
        for (const entity of page) {
          const tracked = toTracked(entity, reader.wanted);
          if (tracked) out.push(tracked);
        }
      },
      reader.paged,
    );
  const [header] = await reader.source.headers([block]);
  if (header?.hash !== hash)
    throw new Error(`block ${block} changed while loading ${names.length} collections' vectors; retrying`);
  return out;
}
