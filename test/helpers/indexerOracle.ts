// The reference the indexer is checked against: what a collection should hold at block B, computed
// straight from the devnet's own arkiv_query answer at B with the rules of ARCHITECTURE.md §8, written
// independently of the indexer (no journal, no incremental state, no tail decoding).
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
import type { Devnet } from '../../src/devnet/index.ts';
import { rpcResult } from './devnet.ts';

interface Row {
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

async function allAt(devnet: Devnet, query: string, block: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await rpcResult<{ data: Row[]; cursor?: string }>(devnet, 'arkiv_query', [
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
    rows.push(...result.data);
    if (!result.cursor) return rows;
    cursor = result.cursor;
  }
  throw new Error('too many pages');
}

/**
 * The entity `key` as the devnet's arkiv_query answers it at `block`, in the shape the codecs decode.
 * @returns undefined when it is not live there
 */
export async function rawEntityAt(devnet: Devnet, key: Hex, block: number): Promise<RawEntity | undefined> {
  const [row] = await allAt(devnet, `$key = ${key}`, block);
  return row && toRaw(row);
}

const attr = (row: Row, key: string) => row.stringAttributes?.find((a) => a.key === key)?.value;
const toRaw = (row: Row): RawEntity => ({
  key: row.key,
  owner: row.owner,
  creator: row.creator,
  contentType: row.contentType,
  payload: row.value ? hexToBytes(row.value) : new Uint8Array(),
  stringAttributes: new Map((row.stringAttributes ?? []).map((a) => [a.key, a.value])),
  numericAttributes: new Map((row.numericAttributes ?? []).map((a) => [a.key, BigInt(a.value)])),
  expiresAt: BigInt(row.expiresAt),
});

// Decoded bytes as DESIGN counts them: payload, content type, attribute names and values (numbers 8 bytes).
const decodedBytes = (row: Row) =>
  (row.value ? (row.value.length - 2) / 2 : 0) +
  Buffer.byteLength(row.contentType ?? '') +
  (row.stringAttributes ?? []).reduce((n, a) => n + Buffer.byteLength(a.key) + Buffer.byteLength(a.value), 0) +
  (row.numericAttributes ?? []).reduce((n, a) => n + Buffer.byteLength(a.key) + 8, 0);

// §4.2: closed collections take entities a permitted writer created and a permitted writer owns.
const permitted = (definition: CollectionDefinition, definitionOwner: string, row: Row) =>
  definition.open ||
  (isWriterAllowed(definition, definitionOwner, row.creator) &&
    isWriterAllowed(definition, definitionOwner, row.owner));

/** What every collection must hold at `block`, by the rules, from the node's answer at that block. */
export async function expectedCollections(
  devnet: Devnet,
  block: number,
  only?: (name: string) => boolean,
): Promise<Record<string, ExpectedCollection>> {
  const definitions = await allAt(devnet, 'arkivector_type = "collection"', block);
  const vectors = await allAt(devnet, 'arkivector_type = "vector"', block);
  const names = [
    ...new Set(definitions.map((d) => attr(d, 'arkivector_collection')).filter((n): n is string => n !== undefined)),
  ].filter((n) => COLLECTION_NAME_REGEX.test(n) && (!only || only(n)));
  const out: Record<string, ExpectedCollection> = {};
  for (const name of names) {
    const candidates = definitions
      .filter((d) => attr(d, 'arkivector_collection') === name)
      .sort(
        (a, b) =>
          a.createdAtBlock - b.createdAtBlock ||
          a.transactionIndexInBlock - b.transactionIndexInBlock ||
          a.operationIndexInTransaction - b.operationIndexInTransaction ||
          (a.key < b.key ? -1 : 1),
      );
    let winner: { row: Row; definition: CollectionDefinition } | undefined;
    for (const row of candidates) {
      if (decodedBytes(row) > ENTITY_DECODED_MAX_BYTES) continue;
      try {
        winner = { row, definition: parseCollectionDefinition(row.value ? hexToBytes(row.value) : new Uint8Array()) };
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
      if (!permitted(winner.definition, winner.row.owner, row)) continue;
      if (decodedBytes(row) > ENTITY_DECODED_MAX_BYTES) {
        rejected++;
        continue;
      }
      const decoded = decodeVectorEntity(toRaw(row), { name, definition: winner.definition });
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
      const decoded = decodeVectorEntity(toRaw(newest), { name, definition: winner.definition });
      if (!decoded.ok) throw new Error('unreachable');
      records[id] = {
        key: newest.key,
        document: decoded.record.document,
        attributes: { ...decoded.record.attributes },
        expiresAt: String(newest.expiresAt),
        owner: newest.owner,
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
