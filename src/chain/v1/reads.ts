// Arkiv v1 chain reads as plain functions over an RpcTransport (viem's action style): block headers,
// whole blocks with receipts in JSON-RPC batches, and pages of arkiv_query. `source.ts` composes them
// into the ChainSource the indexer sees.
import { hexToNumber, numberToHex, type Address, type Hex } from 'viem';
import { readInHalves, walkQuery } from '../pageWalk.ts';
import { toHeader, type RawHeader } from '../headReads.ts';
import { ChainDataError, type BlockHeader, type ChainEntity, type PageOptions } from '../source.ts';
import { RpcResponseError, type RpcTransport } from '../transport.ts';
import { QUERY_PAGE_LIMIT } from './protocol.ts';

export interface ChainLogData {
  address: Address;
  topics: Hex[];
  data: Hex;
  logIndex: number;
}

export interface BlockTransaction {
  hash: Hex;
  index: number;
  from: Address;
  to: Address | null;
  input: Hex;
  /** From the receipt: 1 success, 0 reverted. */
  status: 0 | 1;
  logs: ChainLogData[];
}

export interface BlockWithReceipts extends BlockHeader {
  transactions: BlockTransaction[];
}

interface RawTx {
  hash: Hex;
  transactionIndex: Hex;
  from: Address;
  to: Address | null;
  input: Hex;
}
interface RawReceipt {
  transactionHash: Hex;
  transactionIndex: Hex;
  status: Hex;
  logs: { address: Address; topics: Hex[]; data: Hex; logIndex: Hex }[];
}

/**
 * Blocks `from..to` with full transactions and receipts, in one JSON-RPC batch
 * (eth_getBlockByNumber + eth_getBlockReceipts per block, as the Arkiv rpciterator does); a batch whose
 * answer is over the transport's size limit is fetched again as two halves, down to one block.
 * Throws ChainDataError if a block is missing or its receipts do not line up with its transactions.
 */
export async function getBlocksWithReceipts(
  transport: RpcTransport,
  from: number,
  to: number,
): Promise<BlockWithReceipts[]> {
  const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return readInHalves(numbers, (part) => blocksBatch(transport, part));
}

async function blocksBatch(transport: RpcTransport, numbers: readonly number[]): Promise<BlockWithReceipts[]> {
  const answers = await transport.batch(
    numbers.flatMap((n) => [
      { method: 'eth_getBlockByNumber', params: [numberToHex(n), true] },
      { method: 'eth_getBlockReceipts', params: [numberToHex(n)] },
    ]),
  );
  return numbers.map((n, i) => {
    const block = answers[2 * i];
    const receipts = answers[2 * i + 1];
    if (block instanceof RpcResponseError) throw block;
    if (receipts instanceof RpcResponseError) throw receipts;
    if (!block || !Array.isArray(receipts)) throw new ChainDataError(`block ${n} is not available`);
    const raw = block as RawHeader & { transactions: RawTx[] };
    const header = toHeader(raw);
    const byHash = new Map((receipts as RawReceipt[]).map((r) => [r.transactionHash.toLowerCase(), r]));
    const transactions = raw.transactions.map((tx): BlockTransaction => {
      const receipt = byHash.get(tx.hash.toLowerCase());
      if (!receipt) throw new ChainDataError(`block ${n}: no receipt for transaction ${tx.hash}`);
      return {
        hash: tx.hash.toLowerCase() as Hex,
        index: hexToNumber(tx.transactionIndex),
        from: tx.from.toLowerCase() as Address,
        to: tx.to ? (tx.to.toLowerCase() as Address) : null,
        input: tx.input,
        status: receipt.status === '0x1' ? 1 : 0,
        logs: receipt.logs.map((log) => ({
          address: log.address.toLowerCase() as Address,
          topics: log.topics.map((t) => t.toLowerCase() as Hex),
          data: log.data,
          logIndex: hexToNumber(log.logIndex),
        })),
      };
    });
    if (header.number !== n) throw new ChainDataError(`asked for block ${n}, got ${header.number}`);
    return { ...header, transactions };
  });
}

/** One entity as arkiv_query returns it with every field requested: the ChainSource shape as is. */
export type QueriedEntity = ChainEntity;

const FULL_INCLUDE = {
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
};

/**
 * Visits every entity matching `query` as of block `atBlock`, page by page (≤ 200 each), following cursors,
 * so a caller can drop what it does not keep before the next page arrives (the walk, its bounds and its
 * halving of pages over the answer size limit are walkPages').
 */
export async function forEachEntityPage(
  transport: RpcTransport,
  query: string,
  atBlock: number,
  visit: (page: QueriedEntity[]) => void,
  options: PageOptions = {},
): Promise<void> {
  const page = (size: number) => ({
    includeData: FULL_INCLUDE,
    atBlock: numberToHex(atBlock),
    resultsPerPage: numberToHex(size),
  });
  await walkQuery(transport, query, QUERY_PAGE_LIMIT, page, visit, options);
}
