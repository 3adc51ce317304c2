// arkiv_query, arkiv_getEntityCount: the node's query store semantics over the devnet's versioned state
// (pebble-bitmap-store: descending row ids, 200 per page, cursor = last id returned, historical atBlock).
import { numberToHex, type Hex } from 'viem';
import { QUERY_PAGE_LIMIT } from '../chain/v1/index.ts';
import { QuerySyntaxError, compileArkivQuery, parseQuery } from '../query/index.ts';
import { RpcError } from './transactions.ts';
import { visibleAt, type EntityState, type EntityVersion } from './state.ts';

/**
 * A page stops filling once its entities' serialized size passes this (the node does the same at 512 MiB).
 * Payloads are cheap to write compressed and double as hex: 200 entities of 15 MiB each would be a 6 GiB
 * answer, more than a JavaScript string holds; the devnet died of it. The cursor then carries on. A page
 * still holds at least one entity (at most 40 MiB of hex under the 20 MiB decompression bound).
 */
export const QUERY_PAGE_MAX_BYTES = 32 * 1024 * 1024;

const INCLUDE_FLAGS = [
  'key',
  'attributes',
  'syntheticAttributes',
  'payload',
  'contentType',
  'expiration',
  'creator',
  'owner',
  'createdAtBlock',
  'lastModifiedAtBlock',
  'transactionIndexInBlock',
  'operationIndexInTransaction',
] as const;
type IncludeFlag = (typeof INCLUDE_FLAGS)[number];
type Include = Record<IncludeFlag, boolean>;

const DEFAULT_INCLUDE: Include = {
  key: true,
  attributes: true,
  syntheticAttributes: false,
  payload: true,
  contentType: true,
  expiration: true,
  creator: true,
  owner: true,
  createdAtBlock: false,
  lastModifiedAtBlock: false,
  transactionIndexInBlock: false,
  operationIndexInTransaction: false,
};

export interface QueryOptions {
  include: Include;
  atBlock?: number;
  resultsPerPage: number;
  cursor?: number;
}

/** Reads a uint64 option the way the node accepts it: a 0x hex string, or (older SDKs) a JSON number. */
function readQuantity(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(value)) return Number(BigInt(value));
  throw new RpcError(-32602, `invalid argument 1: ${name}: expected a 0x-prefixed hex quantity`);
}

/** Parses the options object of arkiv_query (missing or null means defaults). */
export function readQueryOptions(raw: unknown): QueryOptions {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new RpcError(-32602, 'invalid argument 1: options must be an object');
  }
  const options = (raw ?? {}) as Record<string, unknown>;
  let include = DEFAULT_INCLUDE;
  if (options.includeData !== undefined && options.includeData !== null) {
    const flags = options.includeData as Record<string, unknown>;
    include = Object.fromEntries(INCLUDE_FLAGS.map((flag) => [flag, flags[flag] === true])) as Include;
  }
  const resultsPerPage = readQuantity(options.resultsPerPage, 'resultsPerPage') ?? QUERY_PAGE_LIMIT;
  if (resultsPerPage === 0) throw new RpcError(-32602, 'invalid argument 1: resultsPerPage must be at least 1');
  let cursor: number | undefined;
  if (options.cursor !== undefined && options.cursor !== null && options.cursor !== '') {
    cursor = readQuantity(options.cursor, 'cursor');
  }
  const atBlock = readQuantity(options.atBlock, 'atBlock');
  return {
    include,
    atBlock: atBlock === 0 ? undefined : atBlock,
    resultsPerPage: Math.min(resultsPerPage, QUERY_PAGE_LIMIT),
    cursor,
  };
}

export function compileQueryText(text: unknown): (entity: EntityVersion) => boolean {
  if (typeof text !== 'string') throw new RpcError(-32602, 'invalid argument 0: query must be a string');
  try {
    return compileArkivQuery(parseQuery(text, { dialect: 'arkiv' }));
  } catch (error) {
    if (error instanceof QuerySyntaxError) {
      throw new RpcError(-32000, `error executing query: error parsing query: ${error.message}`);
    }
    throw error;
  }
}

const byKey = <T extends { key: string }>(a: T, b: T) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** An upper estimate of an entity's JSON size in a page (hex payload, attributes, fixed fields). */
function serializedSize(version: EntityVersion, include: Include): number {
  let size = 512;
  if (include.payload) size += 2 * version.payload.length;
  if (include.attributes) {
    for (const [k, v] of version.stringAttributes) size += 32 + k.length + 6 * v.length;
    for (const k of version.numericAttributes.keys()) size += 64 + k.length;
  }
  return size;
}

function formatEntity(version: EntityVersion, include: Include): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (include.key) out.key = version.key;
  if (include.payload && version.payload.length > 0)
    // Buffer's hex, not viem's bytesToHex, which builds the string two characters at a time.
    out.value = `0x${Buffer.from(version.payload.buffer, version.payload.byteOffset, version.payload.length).toString('hex')}`;
  if (include.contentType) out.contentType = version.contentType;
  if (include.expiration) out.expiresAt = version.expiresAt;
  if (include.creator) out.creator = version.creator;
  if (include.owner) out.owner = version.owner;
  if (include.createdAtBlock) out.createdAtBlock = version.createdAtBlock;
  if (include.lastModifiedAtBlock) out.lastModifiedAtBlock = version.lastModifiedAtBlock;
  if (include.transactionIndexInBlock) out.transactionIndexInBlock = version.transactionIndexInBlock;
  if (include.operationIndexInTransaction) out.operationIndexInTransaction = version.operationIndexInTransaction;
  if (include.attributes || include.syntheticAttributes) {
    const strings = include.attributes ? [...version.stringAttributes].map(([key, value]) => ({ key, value })) : [];
    const numbers: { key: string; value: bigint | number }[] = include.attributes
      ? [...version.numericAttributes].map(([key, value]) => ({ key, value }))
      : [];
    if (include.syntheticAttributes) {
      strings.push(
        { key: '$key', value: version.key },
        { key: '$owner', value: version.owner },
        { key: '$creator', value: version.creator },
      );
      numbers.push(
        { key: '$expiration', value: version.expiresAt },
        { key: '$sequence', value: version.sequence },
        { key: '$createdAtBlock', value: version.createdAtBlock },
        { key: '$lastModifiedAtBlock', value: version.lastModifiedAtBlock },
        { key: '$txIndex', value: version.transactionIndexInBlock },
        { key: '$opIndex', value: version.operationIndexInTransaction },
      );
    }
    if (strings.length) out.stringAttributes = strings.sort(byKey);
    if (numbers.length) out.numericAttributes = numbers.sort(byKey);
  }
  return out;
}

/** Index of the first version with id >= `id` (versions are ascending by id). */
function lowerBound(versions: readonly EntityVersion[], id: number): number {
  let lo = 0;
  let hi = versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const version = versions[mid];
    if (version !== undefined && version.id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One page of arkiv_query at `block` (already resolved and available). */
export function queryPage(
  state: EntityState,
  matches: (entity: EntityVersion) => boolean,
  options: QueryOptions,
  block: number,
): { data: Record<string, unknown>[]; blockNumber: Hex; cursor?: Hex } {
  const versions = state.versions;
  const start = options.cursor === undefined ? versions.length : lowerBound(versions, options.cursor);
  const data: Record<string, unknown>[] = [];
  let lastId = 0;
  let bytes = 0;
  let full = false;
  for (let i = start - 1; i >= 0 && !full; i--) {
    const version = versions[i];
    if (version === undefined || !visibleAt(version, block) || !matches(version)) continue;
    data.push(formatEntity(version, options.include));
    lastId = version.id;
    bytes += serializedSize(version, options.include);
    full = data.length === options.resultsPerPage || bytes >= QUERY_PAGE_MAX_BYTES;
  }
  const page: { data: Record<string, unknown>[]; blockNumber: Hex; cursor?: Hex } = {
    data,
    blockNumber: numberToHex(block),
  };
  // Like the node, a full page carries a cursor even when nothing follows.
  if (full) page.cursor = numberToHex(lastId);
  return page;
}
