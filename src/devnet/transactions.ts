// The devnet's transactions: the shapes of transactions, logs, receipts and blocks, and what is decided
// from a signed transaction alone (decoding and sender recovery, calldata, intrinsic gas, the price paid).
// The chain that executes them is in chain.ts.
import { hexToBytes, keccak256, parseTransaction, recoverTransactionAddress, type Address, type Hex } from 'viem';
import {
  ARKIV_ADDRESS,
  StorageTxDecodeError,
  decodeStorageTransaction,
  validateStorageOps,
  type StorageOps,
} from '../chain/v1/index.ts';

export const BASE_FEE_PER_GAS = 1_000_000_000n;
export const PRIORITY_FEE_PER_GAS = 1_000_000_000n;
export const BLOCK_GAS_LIMIT = 60_000_000n;

/** A JSON-RPC level refusal; `code` -32000 is geth's generic server error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface ChainTx {
  readonly hash: Hex;
  /** Signed RLP; null for the synthetic system (deposit) transaction. */
  readonly raw: Hex | null;
  readonly type: 'legacy' | 'eip2930' | 'eip1559' | 'deposit';
  readonly from: Address;
  readonly to: Address | null;
  readonly nonce: bigint;
  readonly value: bigint;
  readonly gas: bigint;
  readonly gasPrice?: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly input: Hex;
  readonly chainId?: number;
  readonly v?: bigint;
  readonly r?: Hex;
  readonly s?: Hex;
  readonly yParity?: number;
  readonly accessList?: readonly unknown[];
  /** Decoded Arkiv operations when `to` is the processor and the calldata decoded. */
  readonly ops?: StorageOps;
}

export interface ChainLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: number;
  blockHash: Hex;
  transactionHash: Hex;
  transactionIndex: number;
  logIndex: number;
}

export interface ChainReceipt {
  transactionHash: Hex;
  transactionIndex: number;
  status: 0 | 1;
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  effectiveGasPrice: bigint;
  logs: ChainLog[];
  logsBloom: Hex;
  /** Why an Arkiv transaction reverted (devnet extra, mirrors the eth_call error). */
  revertReason?: string;
}

export interface ChainBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: number;
  /** Distinguishes blocks of a forced reorg from the ones they replace. */
  readonly salt: number;
  readonly transactions: ChainTx[];
  readonly receipts: ChainReceipt[];
  readonly gasUsed: bigint;
  readonly logsBloom: Hex;
}

/** What a block is made of; the rest is derived by executing it. */
export interface BlockSpec {
  timestamp: number;
  salt: number;
  transactions: ChainTx[];
}

export interface ChainOptions {
  chainId: number;
  genesisTimestamp: number;
  fundedAccounts: readonly Address[];
  initialBalance: bigint;
  /** Another generation's registry (the DB-chain's); without it the chain runs Arkiv v1. */
  registry?: RegistryExecutor;
}

/**
 * Executes the transactions sent to a registry of another Arkiv generation. A chain with one has no v1
 * system transaction; the registry keeps its own state and rebuilds it when the chain replays (reorgs).
 */
export interface RegistryExecutor {
  readonly address: Address;
  /** Forgets all state: the chain is about to replay its blocks from genesis. */
  reset(): void;
  /** Runs a mined transaction to `address`; must change nothing unless it returns status 1. */
  execute(
    tx: ChainTx,
    block: number,
  ): { status: 0 | 1; gasUsed: bigint; logs: { topics: Hex[]; data: Hex }[]; revertReason?: string };
}

/** A failed Arkiv execution; the message is what eth_call / eth_estimateGas report. */
export function intrinsicGas(data: Hex): bigint {
  let gas = 21_000n;
  for (const byte of hexToBytes(data)) gas += byte === 0 ? 4n : 16n;
  return gas;
}

/**
 * Bytes as a flat 0x hex string. viem's bytesToHex appends two characters at a time, and V8 keeps such a
 * string as a rope of one node per byte until something flattens it: the devnet keeps every block's and
 * receipt's bloom and every payload for the chain's life, where a rope costs many times its text.
 */
export const flatHex = (bytes: Uint8Array): Hex =>
  `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;

/** Where the calldata sits in each signed type's RLP list (after nonce, fees, gas, to and value). */
const DATA_FIELD = { legacy: 5, eip2930: 6, eip1559: 7 } as const;

/**
 * The calldata of a signed transaction that parseTransaction accepted, read from its RLP in place: its
 * hex, lowercased as parseTransaction answers it (which costs as much again: it converts and checks every
 * field). Offsets are in bytes; a typed transaction starts with its type byte.
 */
export function calldataOf(raw: Hex, type: keyof typeof DATA_FIELD): Hex {
  const byte = (at: number) => Number.parseInt(raw.slice(2 + 2 * at, 4 + 2 * at), 16);
  const bigEndian = (at: number, bytes: number) => {
    let n = 0;
    for (let i = 0; i < bytes; i++) n = n * 256 + byte(at + i);
    return n;
  };
  /** The content of the item at `at`: [start, end) for a string, the payload's start for a list. */
  const item = (at: number): [number, number] => {
    const b = byte(at);
    if (b < 0x80) return [at, at + 1];
    if (b <= 0xb7) return [at + 1, at + 1 + b - 0x80];
    if (b <= 0xbf) return [at + 1 + b - 0xb7, at + 1 + b - 0xb7 + bigEndian(at + 1, b - 0xb7)];
    if (b <= 0xf7) return [at + 1, at + 1 + b - 0xc0];
    return [at + 1 + b - 0xf7, at + 1 + b - 0xf7 + bigEndian(at + 1, b - 0xf7)];
  };
  let at = item(type === 'legacy' ? 0 : 1)[0];
  for (let i = 0; i < DATA_FIELD[type]; i++) at = item(at)[1];
  const [start, end] = item(at);
  return `0x${raw.slice(2 + 2 * start, 2 + 2 * end).toLowerCase()}`;
}

/** Decodes and recovers a signed transaction as eth_sendRawTransaction receives it. */
export async function decodeRawTransaction(raw: Hex, chainId: number): Promise<ChainTx> {
  let parsed: ReturnType<typeof parseTransaction>;
  let from: Address;
  try {
    parsed = parseTransaction(raw);
    from = (await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase() as Address;
  } catch (error) {
    throw new RpcError(-32000, `rlp: invalid transaction: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed.type !== 'legacy' && parsed.type !== 'eip1559' && parsed.type !== 'eip2930') {
    throw new RpcError(-32000, 'transaction type not supported');
  }
  if (parsed.chainId !== undefined && parsed.chainId !== chainId) {
    throw new RpcError(-32000, `invalid chain id: have ${parsed.chainId}, want ${chainId}`);
  }
  if (parsed.r === undefined || parsed.s === undefined) throw new RpcError(-32000, 'transaction is not signed');
  const { type } = parsed;
  const to = parsed.to ? (parsed.to.toLowerCase() as Address) : null;
  const input = (parsed.data ?? '0x') as Hex;
  let ops: StorageOps | undefined;
  if (to === ARKIV_ADDRESS) {
    try {
      ops = decodeStorageTransaction(hexToBytes(input));
      validateStorageOps(ops);
    } catch (error) {
      if (error instanceof StorageTxDecodeError) {
        throw new RpcError(-32000, `failed to validate arkiv transaction: ${error.message}`);
      }
      throw error;
    }
  }
  return {
    hash: keccak256(raw),
    raw,
    // Read again from the signed bytes when asked (mining, receipts, eth_getTransaction*): the calldata is
    // most of a write's bytes, and a chain kept for `npm start` holds every transaction once, as `raw`.
    get input() {
      return calldataOf(raw, type);
    },
    type,
    from,
    to,
    nonce: BigInt(parsed.nonce ?? 0),
    value: parsed.value ?? 0n,
    gas: parsed.gas ?? 0n,
    gasPrice: parsed.gasPrice,
    maxFeePerGas: parsed.maxFeePerGas,
    maxPriorityFeePerGas: parsed.maxPriorityFeePerGas,
    chainId: parsed.chainId,
    v: parsed.v,
    r: parsed.r,
    s: parsed.s,
    yParity: parsed.yParity,
    accessList: parsed.accessList ?? [],
    ops,
  };
}

export function effectiveGasPrice(tx: Pick<ChainTx, 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>): bigint {
  if (tx.maxFeePerGas !== undefined) {
    const tip = tx.maxPriorityFeePerGas ?? 0n;
    const capped = BASE_FEE_PER_GAS + tip;
    return capped < tx.maxFeePerGas ? capped : tx.maxFeePerGas;
  }
  return tx.gasPrice ?? 0n;
}
