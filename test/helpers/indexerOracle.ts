// The reference the indexer is checked against: what a collection should hold at block B, computed
// straight from the devnet's own arkiv_query answer at B with the rules of ARCHITECTURE.md §8, written
// independently of the indexer (no journal, no incremental state, no tail decoding). Either generation:
// the devnet's protocol picks the query dialect and the row shape, the rules after that are one.
import assert from 'node:assert/strict';
import { hexToBytes, numberToHex, type Hex } from 'viem';
import {
  COLLECTION_NAME_REGEX,
  decodeVectorEntity,
  ENTITY_DECODED_MAX_BYTES,
  isWriterAllowed,
  parseCollectionDefinition,
  type CollectionDefinition,
  type RawEntity,
} from '../../src/collections/index.ts';
import type { ChainIndexer } from '../../indexer/index.ts';
import { FULL_SELECT, QUERY_PAGE_LIMIT } from '../../src/chain/dbchain/reads.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { rpcResult } from './devnet.ts';

// What the oracle needs of an entity at a block, the same on both generations (keys and blocks apart).
interface Row {
  key: Hex;
  raw: RawEntity;
  createdAtBlock: number;
  lastModifiedAtBlock: number;
  /** Creation position inside its block, ascending with age (v1: transaction, operation; DB-chain: id). */
  position: number;
}

export interface ExpectedRecord {
  key: string;
  document: string;
  attributes: Record<string, unknown>;
  expiresAt: string;
  owner: string;
}
export interface ExpectedCollection {
  definitionKey: string;
  dim: number;
  records: Record<string, ExpectedRecord>;
  rejected: number;
  shadowed: number;
}

// v1 (arkiv_query with includeData, ARCHITECTURE.md §7): string and numeric attributes as they are.
interface V1Row {
  key: Hex;
  value?: Hex;
  contentType?: string;
  expiresAt: number;
  owner: string;
  creator: string;
  createdAtBlock: number;
  lastModifiedAtBlock: number;
  transactionIndexInBlock: number;
  operationIndexInTransaction: number;
  stringAttributes?: { key: string; value: string }[];
  numericAttributes?: { key: string; value: number }[];
}

async function v1RowsAt(devnet: Devnet, query: string, block: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await rpcResult<{ data: V1Row[]; cursor?: string }>(devnet, 'arkiv_query', [
      query,
      {
        atBlock: numberToHex(block),
        cursor,
        includeData: {
          key: true,
          attributes: true,
          payload: true,
          contentType: true,
          expiration: true,
          owner: true,
          creator: true,
          createdAtBlock: true,
          lastModifiedAtBlock: true,
          transactionIndexInBlock: true,
          operationIndexInTransaction: true,
        },
      },
    ]);
    for (const row of result.data)
      rows.push({
        key: row.key,
        raw: {
          key: row.key,
          owner: row.owner,
          creator: row.creator,
          contentType: row.contentType,
          payload: row.value ? hexToBytes(row.value) : new Uint8Array(),
          stringAttributes: new Map((row.stringAttributes ?? []).map((a) => [a.key, a.value])),
          numericAttributes: new Map((row.numericAttributes ?? []).map((a) => [a.key, BigInt(a.value)])),
          expiresAt: BigInt(row.expiresAt),
        },
        createdAtBlock: row.createdAtBlock,
        lastModifiedAtBlock: row.lastModifiedAtBlock,
        position: row.transactionIndexInBlock * 65_536 + row.operationIndexInTransaction,
      });
    if (!result.cursor) return rows;
    cursor = result.cursor;
  }
  throw new Error('too many pages');
}

// DB-chain (arkiv-gen-d.md §4.1): typed cells read back as the schema's v1 forms (ARCHITECTURE.md §8.3),
// written here from the table rather than taken from the driver (the request's select is the wire's, the
// driver's own); answers come newest-first by entity id.
interface DbChainRow {
  key: Hex;
  owner: string;
  creator: string;
  createdAt: Hex;
  updatedAt: Hex;
  expiresAt: Hex;
  contentType?: string;
  payload?: Hex;
  attributes?: { name: string; type: string; value: unknown }[];
}

async function dbchainRowsAt(devnet: Devnet, query: string, block: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await rpcResult<{ data: DbChainRow[]; cursor?: string }>(devnet, 'arkiv_query', [
      query,
      { atBlock: numberToHex(block), select: FULL_SELECT, limit: QUERY_PAGE_LIMIT, ...(cursor ? { cursor } : {}) },
    ]);
    for (const row of result.data) {
      const strings = new Map<string, string>();
      const numbers = new Map<string, bigint>();
      for (const a of row.attributes ?? []) {
        if (a.type === 'str') strings.set(a.name, a.value as string);
        else if (a.type === 'i32') numbers.set(a.name, BigInt(a.value as number) + 2n ** 31n);
        else if (a.type === 'bool') numbers.set(a.name, a.value ? 1n : 0n);
        else if (a.type === 'u64') numbers.set(a.name, BigInt(a.value as string));
      }
      rows.push({
        key: row.key,
        raw: {
          key: row.key,
          owner: row.owner.toLowerCase(),
          creator: row.creator.toLowerCase(),
          contentType: row.contentType,
          payload: row.payload ? hexToBytes(row.payload) : new Uint8Array(),
          stringAttributes: strings,
          numericAttributes: numbers,
          expiresAt: BigInt(row.expiresAt),
        },
        createdAtBlock: Number(BigInt(row.createdAt)),
        lastModifiedAtBlock: Number(BigInt(row.updatedAt)),
        position: -rows.length,
      });
    }
    if (!result.cursor) return rows;
    cursor = result.cursor;
  }
  throw new Error('too many pages');
}

/** Every live entity whose arkivector_type is `type` (or whose key is `key`) at `block`, on either generation. */
async function allAt(devnet: Devnet, match: { type: string } | { key: Hex }, block: number): Promise<Row[]> {
  if (devnet.protocol === 'dbchain')
    return dbchainRowsAt(
      devnet,
      'type' in match ? `arkivector_type = str('${match.type}')` : `$key = key(${match.key})`,
      block,
    );
  return v1RowsAt(devnet, 'type' in match ? `arkivector_type = "${match.type}"` : `$key = ${match.key}`, block);
}

/**
 * The entity `key` as the devnet's arkiv_query answers it at `block`, in the shape the codecs decode.
 * @returns undefined when it is not live there
 */
export async function rawEntityAt(devnet: Devnet, key: Hex, block: number): Promise<RawEntity | undefined> {
  const [row] = await allAt(devnet, { key }, block);
  return row?.raw;
}

const attr = (row: Row, key: string) => row.raw.stringAttributes.get(key);

// Decoded bytes as DESIGN counts them: payload, content type, attribute names and values (numbers 8 bytes).
const decodedBytes = ({ raw }: Row) =>
  (raw.payload?.length ?? 0) +
  Buffer.byteLength(raw.contentType ?? '') +
  [...raw.stringAttributes].reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0) +
  [...raw.numericAttributes.keys()].reduce((n, k) => n + Buffer.byteLength(k) + 8, 0);

// §4.2: closed collections take entities a permitted writer created and a permitted writer owns.
const permitted = (definition: CollectionDefinition, definitionOwner: string, row: Row) =>
  definition.open ||
  (isWriterAllowed(definition, definitionOwner, row.raw.creator ?? '') &&
    isWriterAllowed(definition, definitionOwner, row.raw.owner));

/** What every collection must hold at `block`, by the rules, from the node's answer at that block. */
export async function expectedCollections(
  devnet: Devnet,
  block: number,
  only?: (name: string) => boolean,
): Promise<Record<string, ExpectedCollection>> {
  const definitions = await allAt(devnet, { type: 'collection' }, block);
  const vectors = await allAt(devnet, { type: 'vector' }, block);
  const names = [
    ...new Set(definitions.map((d) => attr(d, 'arkivector_collection')).filter((n): n is string => n !== undefined)),
  ].filter((n) => COLLECTION_NAME_REGEX.test(n) && (!only || only(n)));
  const out: Record<string, ExpectedCollection> = {};
  for (const name of names) {
    const candidates = definitions
      .filter((d) => attr(d, 'arkivector_collection') === name)
      .sort((a, b) => a.createdAtBlock - b.createdAtBlock || a.position - b.position || (a.key < b.key ? -1 : 1));
    let winner: { row: Row; definition: CollectionDefinition } | undefined;
    for (const row of candidates) {
      if (decodedBytes(row) > ENTITY_DECODED_MAX_BYTES) continue;
      try {
        winner = { row, definition: parseCollectionDefinition(row.raw.payload ?? new Uint8Array()) };
        break;
      } catch {
        // an invalid definition never wins
      }
    }
    if (!winner) continue;
    const byId = new Map<string, Row[]>();
    let rejected = 0;
    for (const row of vectors) {
      if (attr(row, 'arkivector_collection') !== name) continue;
      if (!permitted(winner.definition, winner.row.raw.owner, row)) continue;
      if (decodedBytes(row) > ENTITY_DECODED_MAX_BYTES) {
        rejected++;
        continue;
      }
      const decoded = decodeVectorEntity(row.raw, { name, definition: winner.definition });
      if (!decoded.ok) {
        rejected++;
        continue;
      }
      const list = byId.get(decoded.record.id) ?? [];
      list.push(row);
      byId.set(decoded.record.id, list);
    }
    const records: Record<string, ExpectedRecord> = {};
    let shadowed = 0;
    for (const [id, rows] of byId) {
      shadowed += rows.length - 1;
      const newest = rows.reduce((a, b) =>
        b.lastModifiedAtBlock > a.lastModifiedAtBlock ||
        (b.lastModifiedAtBlock === a.lastModifiedAtBlock && b.key > a.key)
          ? b
          : a,
      );
      const decoded = decodeVectorEntity(newest.raw, { name, definition: winner.definition });
      if (!decoded.ok) throw new Error('unreachable');
      records[id] = {
        key: newest.key,
        document: decoded.record.document,
        attributes: { ...decoded.record.attributes },
        expiresAt: String(newest.raw.expiresAt),
        owner: newest.raw.owner,
      };
    }
    out[name] = { definitionKey: winner.row.key, dim: winner.definition.dim, records, rejected, shadowed };
  }
  return out;
}

/** The same shape, read from what the indexer published. */
export function indexedCollections(indexer: ChainIndexer): Record<string, ExpectedCollection> {
  const out: Record<string, ExpectedCollection> = {};
  for (const [name, c] of indexer.collections) {
    const records: Record<string, ExpectedRecord> = {};
    for (const r of c.store.records()) {
      records[r.id] = {
        key: r.key,
        document: r.document,
        attributes: { ...r.attributes },
        expiresAt: String(r.expiresAt),
        owner: r.owner,
      };
    }
    out[name] = {
      definitionKey: c.definitionKey,
      dim: c.definition.dim,
      records,
      rejected: c.stats.rejected,
      shadowed: c.stats.shadowed,
    };
  }
  return out;
}

/**
 * Asserts that `indexer` did not load its snapshot but bootstrapped from the chain, and holds what the
 * chain says at its block.
 */
export async function assertRebuiltFromChain(devnet: Devnet, indexer: ChainIndexer): Promise<void> {
  assert.equal(indexer.counters.snapshotsLoaded, 0);
  assert.equal(indexer.counters.bootstraps, 1);
  assert.deepEqual(indexedCollections(indexer), await expectedCollections(devnet, indexer.asOfBlock!));
}
