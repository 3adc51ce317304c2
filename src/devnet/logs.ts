// Logs as JSON-RPC asks for them: block tags and hex arguments read from params, log criteria and their
// match, the logs of a block range, and the polling filters (eth_newFilter, eth_newBlockFilter) with what
// a reorg takes back from them.
import { numberToHex, type Address, type Hex } from 'viem';
import type { DevnetChain } from './chain.ts';
import { formatLog } from './format.ts';
import { RpcError, type ChainBlock, type ChainLog } from './transactions.ts';

/** The most blocks one eth_getLogs may span. */
export const MAX_LOG_RANGE = 1000;

export interface LogCriteria {
  addresses?: Address[];
  topics: (Hex[] | null)[];
}

interface LogFilter {
  kind: 'logs';
  criteria: LogCriteria;
  nextBlock: number;
  toBlock?: number;
  removed: ChainLog[];
}
interface BlockFilter {
  kind: 'blocks';
  nextBlock: number;
}

export function readBlockTag(value: unknown, head: number): number {
  if (
    value === undefined ||
    value === null ||
    value === 'latest' ||
    value === 'pending' ||
    value === 'safe' ||
    value === 'finalized'
  ) {
    return head;
  }
  if (value === 'earliest') return 0;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return Number(BigInt(value));
  if (typeof value === 'object' && value !== null && 'blockNumber' in value) {
    return readBlockTag((value as { blockNumber: unknown }).blockNumber, head);
  }
  throw new RpcError(-32602, `invalid block number or tag: ${JSON.stringify(value)}`);
}

export function readHexArg(value: unknown, name: string): Hex {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]*$/.test(value))
    throw new RpcError(-32602, `invalid argument: ${name} must be 0x hex`);
  return value.toLowerCase() as Hex;
}

export function readLogCriteria(raw: unknown): LogCriteria {
  const filter = (raw ?? {}) as { address?: unknown; topics?: unknown };
  const addresses =
    filter.address === undefined || filter.address === null
      ? undefined
      : (Array.isArray(filter.address) ? filter.address : [filter.address]).map(
          (a) => readHexArg(a, 'address') as Address,
        );
  const topics = Array.isArray(filter.topics)
    ? filter.topics.map((t) =>
        t === null || t === undefined ? null : (Array.isArray(t) ? t : [t]).map((x) => readHexArg(x, 'topic')),
      )
    : [];
  return { addresses, topics };
}

export function logMatches(log: ChainLog, criteria: LogCriteria): boolean {
  if (criteria.addresses && !criteria.addresses.includes(log.address)) return false;
  return criteria.topics.every((alternatives, i) => {
    if (alternatives === null || alternatives.length === 0) return true;
    const topic = log.topics[i];
    return topic !== undefined && alternatives.includes(topic);
  });
}

/** The logs of blocks `from` to `to` (clipped to the chain) that match `criteria`. */
export function logsInRange(chain: DevnetChain, from: number, to: number, criteria: LogCriteria): ChainLog[] {
  const logs: ChainLog[] = [];
  for (let n = Math.max(from, 0); n <= Math.min(to, chain.head.number); n++) {
    for (const receipt of chain.block(n).receipts) {
      for (const log of receipt.logs) if (logMatches(log, criteria)) logs.push(log);
    }
  }
  return logs;
}

/** The node's polling filters, by id. */
export class LogFilters {
  #filters = new Map<string, LogFilter | BlockFilter>();
  #nextId = 1;

  constructor(readonly chain: DevnetChain) {}

  /** eth_newFilter: logs matching the params' criteria from its fromBlock (default: the next block). */
  newLogFilter(param: unknown): Hex {
    const head = this.chain.head.number;
    const raw = (param ?? {}) as { fromBlock?: unknown; toBlock?: unknown };
    const id = numberToHex(this.#nextId++);
    const from =
      raw.fromBlock === undefined || raw.fromBlock === 'latest' ? head + 1 : readBlockTag(raw.fromBlock, head);
    const to = raw.toBlock === undefined || raw.toBlock === 'latest' ? undefined : readBlockTag(raw.toBlock, head);
    this.#filters.set(id, {
      kind: 'logs',
      criteria: readLogCriteria(param),
      nextBlock: from,
      toBlock: to,
      removed: [],
    });
    return id;
  }

  /** eth_newBlockFilter: the hashes of the blocks after the head. */
  newBlockFilter(): Hex {
    const id = numberToHex(this.#nextId++);
    this.#filters.set(id, { kind: 'blocks', nextBlock: this.chain.head.number + 1 });
    return id;
  }

  uninstall(id: unknown): boolean {
    return this.#filters.delete(String(id));
  }

  /** What the filter saw since its last poll (eth_getFilterChanges, `consume`) or in all (eth_getFilterLogs). */
  changes(id: unknown, consume: boolean): unknown[] {
    const filter = this.#filters.get(String(id));
    if (!filter) throw new RpcError(-32000, 'filter not found');
    const head = this.chain.head.number;
    if (filter.kind === 'blocks') {
      const hashes = this.chain.blocks.slice(filter.nextBlock, head + 1).map((b) => b.hash);
      if (consume) filter.nextBlock = head + 1;
      return hashes;
    }
    const to = Math.min(head, filter.toBlock ?? head);
    const logs = [
      ...filter.removed.map((log) => formatLog(log, true)),
      ...logsInRange(this.chain, filter.nextBlock, to, filter.criteria).map((log) => formatLog(log)),
    ];
    if (consume) {
      filter.removed = [];
      filter.nextBlock = Math.max(filter.nextBlock, to + 1);
    }
    return logs;
  }

  /** A reorg dropped `removed` after `commonAncestor`: log filters report their logs as removed. */
  reorged(removed: readonly ChainBlock[], commonAncestor: number): void {
    for (const filter of this.#filters.values()) {
      if (filter.nextBlock > commonAncestor + 1) {
        if (filter.kind === 'logs') {
          filter.removed.push(
            ...removed
              .filter((b) => b.number < filter.nextBlock)
              .flatMap((b) => b.receipts.flatMap((r) => r.logs))
              .filter((log) => logMatches(log, filter.criteria)),
          );
        }
        filter.nextBlock = commonAncestor + 1;
      }
    }
  }
}
