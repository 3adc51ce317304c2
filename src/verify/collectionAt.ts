// What a collection holds at a block, derived from the chain's own answer at that block with the rules of
// ARCHITECTURE.md §8 (the indexer's, written here without its incremental state): the name resolves to
// its first-created valid definition; a vector counts when the collection is open, or when a permitted
// writer created it and a permitted writer owns it; entities over the size bound or that do not decode are
// rejected; of one id's counting entities the most recently modified wins, ties to the higher key.
import { hexToBytes } from 'viem';
import {
  countsInCollection,
  decodeVectorEntity,
  DEFINITION_PAYLOAD_MAX_BYTES,
  ENTITY_DECODED_MAX_BYTES,
  parseCollectionDefinition,
  type CollectionDefinition,
  type RawEntity,
  type VectorRecord,
} from '../collections/index.ts';
import type { ChainEntity } from '../chain/source.ts';
import { QUERY_PREDICATES_MAX, QUERY_TEXT_MAX_BYTES } from './limits.ts';
import type { Row } from './rpc.ts';

/** A `str` literal of the DB-chain's query language (single quotes, doubled inside). */
const str = (value: string) => `str('${value.replaceAll("'", "''")}')`;

export const definitionsQuery = (name: string) =>
  `arkivector_type = str('collection') AND arkivector_collection = ${str(name)}`;
export const vectorsQuery = (name: string) =>
  `arkivector_type = str('vector') AND arkivector_collection = ${str(name)}`;

/** Queries selecting the collection's vector entities with these ids, each within the node's query limits. */
export function idQueries(name: string, ids: readonly string[]): string[] {
  const head = vectorsQuery(name);
  const queries: string[] = [];
  let terms: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (terms.length) queries.push(`${head} AND (${terms.join(' OR ')})`);
    terms = [];
    bytes = Buffer.byteLength(head) + 10;
  };
  flush();
  for (const id of [...new Set(ids)]) {
    const term = `arkivector_id = ${str(id)}`;
    const size = Buffer.byteLength(term) + 4;
    if (terms.length + 2 >= QUERY_PREDICATES_MAX || bytes + size > QUERY_TEXT_MAX_BYTES) flush();
    terms.push(term);
    bytes += size;
  }
  flush();
  return queries;
}

/** The entity in the codecs' shape (numeric attributes as bigints, as the indexer hands them over). */
export function rawOf(entity: ChainEntity): RawEntity {
  return {
    key: entity.key,
    owner: entity.owner,
    creator: entity.creator,
    contentType: entity.contentType,
    payload: hexToBytes(entity.value ?? '0x'),
    stringAttributes: new Map((entity.stringAttributes ?? []).map((a) => [a.key, a.value])),
    numericAttributes: new Map((entity.numericAttributes ?? []).map((a) => [a.key, BigInt(a.value)])),
    expiresAt: BigInt(entity.expiresAt),
  };
}

/** Decoded bytes as the indexer bounds them: payload, content type, attribute names and values (numbers 8). */
function decodedSize(raw: RawEntity): number {
  let size = (raw.payload?.length ?? 0) + Buffer.byteLength(raw.contentType ?? '');
  for (const [k, v] of raw.stringAttributes) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  for (const k of raw.numericAttributes.keys()) size += Buffer.byteLength(k) + 8;
  return size;
}

export interface ResolvedDefinition {
  key: string;
  owner: string;
  definition: CollectionDefinition;
}

/**
 * The definition a name resolves to: the first created (block, then the node's creation order, then key)
 * whose payload parses, optionally only among `owner`'s (a node pinning the owner of the name).
 */
export function resolveDefinition(rows: readonly Row[], owner?: string): ResolvedDefinition | undefined {
  const candidates = rows
    .filter((r) => owner === undefined || r.entity.owner === owner.toLowerCase())
    .sort(
      (a, b) =>
        (a.entity.createdAtBlock ?? 0) - (b.entity.createdAtBlock ?? 0) ||
        b.index - a.index ||
        (a.entity.key < b.entity.key ? -1 : 1),
    );
  for (const { entity } of candidates) {
    const raw = rawOf(entity);
    if (decodedSize(raw) > ENTITY_DECODED_MAX_BYTES || (raw.payload?.length ?? 0) > DEFINITION_PAYLOAD_MAX_BYTES)
      continue;
    try {
      return {
        key: entity.key,
        owner: entity.owner,
        definition: parseCollectionDefinition(raw.payload ?? new Uint8Array()),
      };
    } catch {
      // an invalid definition never wins
    }
  }
  return undefined;
}

/** What the rules make of one vector entity. */
export type Judgement =
  | { kind: 'counted'; entity: ChainEntity; record: VectorRecord }
  | { kind: 'not_permitted'; entity: ChainEntity }
  | { kind: 'rejected'; entity: ChainEntity; reason: string };

/** The entity an id resolves to, decoded. */
export interface Winner {
  entity: ChainEntity;
  record: VectorRecord;
}

export interface VectorsAt {
  /** The winner of each id. */
  winners: Map<string, Winner>;
  /** Every entity read, by key, with what the rules made of it. */
  judged: Map<string, Judgement>;
}

/** Applies the collection's rules to its vector entities read at one block. */
export function resolveVectors(rows: readonly Row[], name: string, resolved: ResolvedDefinition): VectorsAt {
  const winners = new Map<string, Winner>();
  const judged = new Map<string, Judgement>();
  const { definition, owner } = resolved;
  for (const { entity } of rows) {
    if (!countsInCollection(definition, owner, { owner: entity.owner, creator: entity.creator })) {
      judged.set(entity.key, { kind: 'not_permitted', entity });
      continue;
    }
    const raw = rawOf(entity);
    const size = decodedSize(raw);
    const decoded =
      size > ENTITY_DECODED_MAX_BYTES
        ? { ok: false as const, reason: `entity is ${size} decoded bytes, more than ${ENTITY_DECODED_MAX_BYTES}` }
        : decodeVectorEntity(raw, { name, definition });
    if (!decoded.ok) {
      judged.set(entity.key, { kind: 'rejected', entity, reason: decoded.reason });
      continue;
    }
    judged.set(entity.key, { kind: 'counted', entity, record: decoded.record });
    const held = winners.get(decoded.record.id);
    if (!held || isNewer(entity, held.entity)) winners.set(decoded.record.id, { entity, record: decoded.record });
  }
  return { winners, judged };
}

const isNewer = (a: ChainEntity, b: ChainEntity) =>
  (a.lastModifiedAtBlock ?? 0) !== (b.lastModifiedAtBlock ?? 0)
    ? (a.lastModifiedAtBlock ?? 0) > (b.lastModifiedAtBlock ?? 0)
    : a.key > b.key;
