// DB-chain reads as plain functions over an RpcTransport: the registry's logs over a block range with the
// transactions that emitted them, typed `arkiv_query` pages pinned to a block, `arkiv_getEntity`, and the
// entity nonce. Entity answers (reference/arkiv-gen-d.md §4.1) become the ChainSource's ChainEntity.
import { hexToNumber, numberToHex, type Address, type Hex } from 'viem';
import { readInHalves, walkQuery } from '../pageWalk.ts';
import { ChainDataError, type ChainEntity, type PageOptions } from '../source.ts';
import { RpcResponseError, type RpcTransport } from '../transport.ts';
import { REGISTRY_ADDRESS } from './abi.ts';
import { decodeEntityNonce, entityNonceCall } from './keys.ts';
import type { EventLog } from './events.ts';

/** `arkiv_query` never returns more than this many entities per page (and refuses a larger limit). */
export const QUERY_PAGE_LIMIT = 200;
/** Tiramisu refuses `eth_getLogs` over wider ranges (arkiv-node.md §6.5). */
export const LOG_RANGE_MAX = 1000;

/** Every field the indexer keeps (the node's default select is the key alone). */
export const FULL_SELECT = {
  key: true,
  owner: true,
  creator: true,
  createdAt: true,
  updatedAt: true,
  expiresAt: true,
  contentType: true,
  payload: true,
  attributes: true,
} as const;

/** One entity as the node answers (only the selected fields are present). */
export interface EntityData {
  key: Hex;
  owner?: Address;
  creator?: Address;
  createdAt?: Hex;
  updatedAt?: Hex;
  expiresAt?: Hex;
  contentType?: string;
  payload?: Hex;
  attributes?: { name: string; type: string; value: unknown }[];
}

export interface RegistryLog extends EventLog {
  blockNumber: number;
  blockHash: Hex;
  transactionHash: Hex;
  transactionIndex: number;
  logIndex: number;
}

export interface LoggedTransaction {
  hash: Hex;
  index: number;
  from: Address;
  to: Address | null;
  input: Hex;
  /** The RPC's whole answer, to check that it hashes to `hash` (txHash.ts). */
  envelope?: Record<string, unknown>;
}

const I32_OFFSET = 1n << 31n;
const U64_END = 1n << 64n;
/** A hex quantity, tolerating leading zeros (a node that answers a u64 as a zero-padded word). */
const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const HEX = /^0x(?:[0-9a-fA-F]{2})*$/;

/** A field of a node's answer that must be hex: anything else is the node's fault, said as such. */
function hexField(value: unknown, field: string): Hex {
  if (typeof value !== 'string' || !(HEX.test(value) || HEX_QUANTITY.test(value)))
    throw new ChainDataError(`the node answered ${field} that is not hex`);
  return value as Hex;
}

/**
 * The node's entity as the ChainSource's shape: typed attributes in schema v1's two lists (str → string;
 * i32 → v + 2^31, bool → 0/1, u64 as is; other types are never ours and are left out).
 */
export function toChainEntity(data: EntityData): ChainEntity {
  const stringAttributes: { key: string; value: string }[] = [];
  const numericAttributes: { key: string; value: string }[] = [];
  for (const a of data.attributes ?? []) {
    if (a.type === 'str' && typeof a.value === 'string') stringAttributes.push({ key: a.name, value: a.value });
    else if (a.type === 'i32' && Number.isInteger(a.value))
      numericAttributes.push({ key: a.name, value: (BigInt(a.value as number) + I32_OFFSET).toString() });
    else if (a.type === 'bool' && typeof a.value === 'boolean')
      numericAttributes.push({ key: a.name, value: a.value ? '1' : '0' });
    else if (a.type === 'u64' && typeof a.value === 'string' && HEX_QUANTITY.test(a.value) && BigInt(a.value) < U64_END)
      numericAttributes.push({ key: a.name, value: BigInt(a.value).toString() });
  }
  const block = (v: unknown, field: string) => (v === undefined ? undefined : hexToNumber(hexField(v, field)));
  return {
    key: hexField(data.key, 'entity key').toLowerCase() as Hex,
    value: data.payload === undefined ? '0x' : hexField(data.payload, 'payload'),
    contentType: data.contentType ?? '',
    expiresAt: data.expiresAt ? BigInt(hexField(data.expiresAt, 'expiresAt')).toString() : '0',
    owner: (data.owner === undefined ? '0x' : hexField(data.owner, 'owner')).toLowerCase() as Address,
    creator: data.creator === undefined ? undefined : (hexField(data.creator, 'creator').toLowerCase() as Address),
    createdAtBlock: block(data.createdAt, 'createdAt'),
    lastModifiedAtBlock: block(data.updatedAt, 'updatedAt'),
    stringAttributes,
    numericAttributes,
  };
}

/**
 * Visits every entity matching `query` at `atBlock`, page by page (≤ 200), following the node's cursor
 * (bound to the query, block and select). Within one creation block the node answers newest-first by
 * its entity id, the creation position: each entity gets a descending `operationIndexInTransaction` in
 * that order (older = smaller), so first-created ordering needs no `$sequence`. The walk, its bounds and
 * its halving of pages over the answer size limit are walkPages'.
 */
export async function forEachEntityPage(
  transport: RpcTransport,
  query: string,
  atBlock: number,
  visit: (page: ChainEntity[]) => void,
  options: PageOptions = {},
): Promise<void> {
  let group: { block: number | undefined; seen: number } = { block: undefined, seen: 0 };
  const page = (limit: number) => ({ atBlock: numberToHex(atBlock), select: FULL_SELECT, limit });
  await walkQuery<EntityData>(
    transport,
    query,
    QUERY_PAGE_LIMIT,
    page,
    (entities) =>
      visit(
        entities.map((data) => {
          const entity = toChainEntity(data);
          if (entity.createdAtBlock !== group.block) group = { block: entity.createdAtBlock, seen: 0 };
          return { ...entity, transactionIndexInBlock: 0, operationIndexInTransaction: 0xffff - group.seen++ };
        }),
      ),
    options,
  );
}

/** One entity at a block (`arkiv_getEntity` takes the block as a JSON number), or undefined if not live. */
export async function getEntity(transport: RpcTransport, key: Hex, atBlock?: number): Promise<EntityData | undefined> {
  const data = await transport.request<EntityData | null>(
    'arkiv_getEntity',
    atBlock === undefined ? [key] : [key, atBlock],
  );
  return data ?? undefined;
}

/** The owner's entity nonce (the `entityNonce(address)` view call). */
export async function getEntityNonce(transport: RpcTransport, owner: Address): Promise<bigint> {
  return decodeEntityNonce(
    await transport.request<Hex>('eth_call', [{ to: REGISTRY_ADDRESS, data: entityNonceCall(owner) }, 'latest']),
  );
}

interface RawLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  transactionIndex: Hex;
  logIndex: Hex;
}

/** The registry's logs of blocks `from..to` (at most LOG_RANGE_MAX blocks), in chain order. */
export function logsCall(from: number, to: number) {
  return {
    method: 'eth_getLogs',
    params: [{ fromBlock: numberToHex(from), toBlock: numberToHex(to), address: REGISTRY_ADDRESS }],
  };
}

export function toRegistryLogs(answer: unknown): RegistryLog[] {
  if (answer instanceof RpcResponseError) throw answer;
  if (!Array.isArray(answer)) throw new ChainDataError('eth_getLogs answered without a list');
  return (answer as RawLog[])
    .map((log) => {
      if (typeof log !== 'object' || log === null || !Array.isArray(log.topics))
        throw new ChainDataError('eth_getLogs answered a log without topics');
      return {
        address: hexField(log.address, 'a log address').toLowerCase() as Address,
        topics: log.topics.map((t) => hexField(t, 'a log topic').toLowerCase() as Hex),
        data: hexField(log.data, 'log data'),
        blockNumber: hexToNumber(hexField(log.blockNumber, 'a log block number')),
        blockHash: hexField(log.blockHash, 'a log block hash').toLowerCase() as Hex,
        transactionHash: hexField(log.transactionHash, 'a log transaction hash').toLowerCase() as Hex,
        transactionIndex: hexToNumber(hexField(log.transactionIndex, 'a log transaction index')),
        logIndex: hexToNumber(hexField(log.logIndex, 'a log index')),
      };
    })
    .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** The transactions with these hashes, in one batch (in halves while its answer is over the size limit). */
export function getTransactions(transport: RpcTransport, hashes: readonly Hex[]): Promise<LoggedTransaction[]> {
  return readInHalves(hashes, (part) => transactionsBatch(transport, part));
}

async function transactionsBatch(transport: RpcTransport, hashes: readonly Hex[]): Promise<LoggedTransaction[]> {
  const answers = await transport.batch(hashes.map((hash) => ({ method: 'eth_getTransactionByHash', params: [hash] })));
  return answers.map((answer, i) => {
    if (answer instanceof RpcResponseError) throw answer;
    const tx = answer as { hash: Hex; transactionIndex: Hex; from: Address; to: Address | null; input: Hex } | null;
    if (!tx) throw new ChainDataError(`transaction ${hashes[i]} is not available`);
    const hash = hexField(tx.hash, 'a transaction hash').toLowerCase() as Hex;
    if (hash !== hashes[i]?.toLowerCase())
      throw new ChainDataError(`the node answered transaction ${hashes[i]} with another transaction`);
    return {
      hash,
      index: hexToNumber(hexField(tx.transactionIndex, 'a transaction index')),
      from: hexField(tx.from, 'a transaction sender').toLowerCase() as Address,
      to: tx.to ? (hexField(tx.to, 'a transaction recipient').toLowerCase() as Address) : null,
      input: hexField(tx.input, 'a transaction input'),
      envelope: tx as unknown as Record<string, unknown>,
    };
  });
}
