// The verifier's only source of truth: one Arkiv JSON-RPC endpoint, through viem's HTTP transport. Calls
// made together are sent as one JSON-RPC batch (viem batches the calls of one tick), and every call and
// HTTP request is counted so a report can say what checking cost.
import { createClient, http, numberToHex, type Hex } from 'viem';
import { REGISTRY_ADDRESS } from '../chain/dbchain/abi.ts';
import { entityNonceCall } from '../chain/dbchain/keys.ts';
import { FULL_SELECT, QUERY_PAGE_LIMIT, toChainEntity, type EntityData } from '../chain/dbchain/reads.ts';
import type { ChainEntity } from '../chain/source.ts';
import { VERIFY_BATCH_MAX, VERIFY_PAGES_MAX, VERIFY_RPC_TIMEOUT_MS } from './limits.ts';

/** The node cannot answer for that block (past its retention window, or not reached): reference §4.4. */
export const BLOCK_UNAVAILABLE = -32006;

export interface VerifierRpc {
  /** Calls and HTTP requests so far (a batch is one request). */
  readonly cost: { calls: number; requests: number };
  request<T>(method: string, params: unknown[]): Promise<T>;
}

type RawRequest = (args: { method: string; params: unknown[] }) => Promise<unknown>;

/**
 * A counted JSON-RPC client of `url` (credentials in the URL or `headers` stay there: nothing here prints
 * them).
 */
export function verifierRpc(url: string, headers?: Record<string, string>): VerifierRpc {
  const cost = { calls: 0, requests: 0 };
  const client = createClient({
    transport: http(url, {
      batch: { batchSize: VERIFY_BATCH_MAX },
      retryCount: 1,
      timeout: VERIFY_RPC_TIMEOUT_MS,
      ...(headers ? { fetchOptions: { headers } } : {}),
      onFetchRequest: () => {
        cost.requests++;
      },
    }),
  });
  const raw = client.request as unknown as RawRequest;
  return {
    cost,
    request<T>(method: string, params: unknown[]) {
      cost.calls++;
      return raw({ method, params }) as Promise<T>;
    },
  };
}

/** The JSON-RPC error code behind an error viem raised (it wraps the node's error in its own). */
export function rpcErrorCode(error: unknown): number | undefined {
  for (let e = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

export interface BlockHeader {
  number: number;
  hash: Hex;
}

export async function blockAt(rpc: VerifierRpc, block: number): Promise<BlockHeader | null> {
  const header = await rpc.request<{ number: Hex; hash: Hex } | null>('eth_getBlockByNumber', [
    numberToHex(block),
    false,
  ]);
  return header ? { number: Number(BigInt(header.number)), hash: header.hash.toLowerCase() as Hex } : null;
}

export async function headNumber(rpc: VerifierRpc): Promise<number> {
  return Number(BigInt(await rpc.request<Hex>('eth_blockNumber', [])));
}

/** Whether the endpoint speaks the DB-chain (its registry answers the entity-nonce view call). */
export async function isDbChain(rpc: VerifierRpc): Promise<boolean> {
  try {
    const answer = await rpc.request<Hex>('eth_call', [
      { to: REGISTRY_ADDRESS, data: entityNonceCall('0x0000000000000000000000000000000000000000') },
      'latest',
    ]);
    return /^0x[0-9a-fA-F]{64}$/.test(answer);
  } catch (error) {
    if (rpcErrorCode(error) !== undefined) return false;
    throw error;
  }
}

/** One entity of a query answer, with its index in the node's newest-first order. */
export interface Row {
  entity: ChainEntity;
  /** Position in the answer: a larger one was created earlier within the same block. */
  index: number;
}

/** Every entity matching `query` at `block`, page by page (at most VERIFY_PAGES_MAX pages). */
export async function queryAll(rpc: VerifierRpc, query: string, block: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < VERIFY_PAGES_MAX; page++) {
    const answer = await rpc.request<{ data: EntityData[]; cursor?: string }>('arkiv_query', [
      query,
      { atBlock: numberToHex(block), select: FULL_SELECT, limit: QUERY_PAGE_LIMIT, ...(cursor ? { cursor } : {}) },
    ]);
    for (const data of answer.data) rows.push({ entity: toChainEntity(data), index: rows.length });
    if (!answer.cursor) return rows;
    cursor = answer.cursor;
  }
  throw new Error(`the query answered more than ${VERIFY_PAGES_MAX} pages`);
}

/** How many entities match `query` at `block` (arkiv_getEntityCount takes the block as a JSON number). */
export async function countAt(rpc: VerifierRpc, query: string, block: number): Promise<number> {
  return Number(await rpc.request<number | Hex>('arkiv_getEntityCount', [{ query, block }]));
}
