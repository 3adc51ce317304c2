// The DB-chain ChainSource: blocks from the registry's logs over a whole range (one eth_getLogs, the
// headers, then only the transactions that logged), decoded into entity operations; patches completed by
// reading the entity at its block; selectors rendered into the typed query dialect. No call per block for
// expiry: the indexer ends entities at their expiry block from what it tracks (ARCHITECTURE.md §7).
import { hexToNumber, type Address, type Hex } from 'viem';
import { watchHeads, type HeadWatcherLogger } from '../headWatcher.ts';
import type { CreateOp, EntityOp } from '../operations.ts';
import {
  ChainDataError,
  type ChainEntity,
  type ChainSource,
  type EntitySelector,
  type SourceBlock,
} from '../source.ts';
import { RpcResponseError, type RpcTransport } from '../transport.ts';
import { getBlockNumber, getHeadAndHeader, getHeaders } from '../v1/reads.ts';
import { USER_NAME_PATTERN } from './attributes.ts';
import { decodeRegistryTransactions, type DecodedOp } from './blockOps.ts';
import {
  LOG_RANGE_MAX,
  forEachEntityPage,
  getEntity,
  getTransactions,
  logsCall,
  toChainEntity,
  toRegistryLogs,
  type EntityData,
} from './reads.ts';

export interface DbChainSourceOptions {
  /** eth_subscribe endpoint for newHeads (`--ws`). */
  wsUrl?: string;
  logger?: HeadWatcherLogger;
}

/** A string in the typed dialect: single quotes, a quote doubled. */
const str = (value: string) => `str('${value.replaceAll("'", "''")}')`;

/**
 * The selector in the DB-chain's typed query dialect (no IN: a disjunction), or undefined when it can
 * match nothing.
 * @example dbChainQuery({ strings: { arkivector_type: 'vector', arkivector_collection: ['a', 'b'] } })
 *   // "arkivector_type = str('vector') AND (arkivector_collection = str('a') OR arkivector_collection = str('b'))"
 */
export function dbChainQuery(selector: EntitySelector): string | undefined {
  const terms: string[] = [];
  for (const [name, value] of Object.entries(selector.strings)) {
    // Names are ours (arkivector_*), never from the chain or a caller: a bad one is a bug.
    if (!USER_NAME_PATTERN.test(name)) throw new RangeError(`not an attribute name: ${JSON.stringify(name)}`);
    const values = typeof value === 'string' ? [value] : value;
    if (values.length === 0) return undefined;
    const alternatives = values.map((v) => `${name} = ${str(v)}`);
    terms.push(alternatives.length === 1 ? (alternatives[0] as string) : `(${alternatives.join(' OR ')})`);
  }
  return terms.length === 0 ? '*' : terms.join(' AND ');
}

/** An entity answer as the content an update carries. */
function contentOf(entity: ChainEntity, block: number): { owner: Address; expiresAt: bigint; content: CreateOp } {
  const expiresAt = BigInt(entity.expiresAt);
  const payload = entity.value ?? '0x';
  return {
    owner: entity.owner,
    expiresAt,
    content: {
      btl: expiresAt > BigInt(block) ? expiresAt - BigInt(block) : 0n,
      contentType: entity.contentType ?? '',
      payload: new Uint8Array(Buffer.from(payload.slice(2), 'hex')),
      stringAttributes: entity.stringAttributes ?? [],
      numericAttributes: (entity.numericAttributes ?? []).map((a) => ({ key: a.key, value: BigInt(a.value) })),
    },
  };
}

/**
 * @param transport the node's one JSON-RPC stack, shared with the writer
 * @example const source = createDbChainSource(createHttpTransport({ url }), { wsUrl })
 */
export function createDbChainSource(transport: RpcTransport, options: DbChainSourceOptions = {}): ChainSource {
  const { wsUrl, logger } = options;

  async function range(from: number, to: number): Promise<SourceBlock[]> {
    const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const [logAnswer, headers] = await Promise.all([
      transport.batch([logsCall(from, to)]).then(([answer]) => answer),
      getHeaders(transport, numbers),
    ]);
    const logs = toRegistryLogs(logAnswer);
    headers.forEach((header, i) => {
      if (!header) throw new ChainDataError(`block ${numbers[i]} is not available`);
    });
    const hashOf = (n: number) => headers[n - from]?.hash;
    // Logs and headers from two requests: a reorg between them shows as a hash that differs.
    for (const log of logs)
      if (log.blockHash !== hashOf(log.blockNumber))
        throw new ChainDataError(`block ${log.blockNumber} changed while it was read`);
    const transactions = await getTransactions(transport, [...new Set(logs.map((l) => l.transactionHash))]);
    const decoded = numbers.map((n) => {
      const blockLogs = logs.filter((l) => l.blockNumber === n);
      const hashes = new Set(blockLogs.map((l) => l.transactionHash));
      return decodeRegistryTransactions(
        n,
        transactions.filter((t) => hashes.has(t.hash)),
        blockLogs,
      );
    });
    const patched = decoded.flatMap((d, i) =>
      d.ops.filter((op) => op.type === 'patched').map((op) => ({ key: op.key, block: from + i })),
    );
    const reads = patched.length
      ? await transport.batch(patched.map((p) => ({ method: 'arkiv_getEntity', params: [p.key, p.block] })))
      : [];
    const content = new Map<string, ChainEntity | undefined>();
    reads.forEach((answer, i) => {
      if (answer instanceof RpcResponseError) throw answer;
      const p = patched[i];
      if (p) content.set(`${p.block}:${p.key}`, answer ? toChainEntity(answer as EntityData) : undefined);
    });
    return decoded.map((d, i) => {
      const n = from + i;
      const header = headers[i];
      if (!header) throw new ChainDataError(`block ${n} is not available`);
      const ops: EntityOp[] = [];
      d.ops.forEach((op: DecodedOp, j) => {
        if (op.type !== 'patched') {
          ops.push(op);
          return;
        }
        const entity = content.get(`${n}:${op.key}`);
        // Not live at the end of its block after a patch: a later op of the block deleted it.
        if (!entity) {
          if (!d.ops.slice(j + 1).some((later) => later.type === 'delete' && later.key === op.key))
            d.anomalies.push(`block ${n}: entity ${op.key} was patched but is not live at the block`);
          return;
        }
        ops.push({ type: 'update', key: op.key, ...contentOf(entity, n), txIndex: op.txIndex, opIndex: op.opIndex });
      });
      return { ...header, ops, anomalies: d.anomalies };
    });
  }

  return {
    chainId: async () => hexToNumber(await transport.request<Hex>('eth_chainId')),
    head: () => getBlockNumber(transport),
    headers: (numbers) => getHeaders(transport, numbers),
    headAndHeader: (block) => getHeadAndHeader(transport, block),
    async blocks(from, to) {
      const out: SourceBlock[] = [];
      for (let start = from; start <= to; start += LOG_RANGE_MAX)
        out.push(...(await range(start, Math.min(to, start + LOG_RANGE_MAX - 1))));
      return out;
    },
    async forEachEntityPage(selector, atBlock, visit, pageOptions) {
      const query = dbChainQuery(selector);
      if (query === undefined) return;
      await forEachEntityPage(transport, query, atBlock, visit, pageOptions);
    },
    async entityAt(key, atBlock) {
      const data = await getEntity(transport, key, atBlock);
      return data && { ...toChainEntity(data), transactionIndexInBlock: 0, operationIndexInTransaction: 0 };
    },
    ...(wsUrl ? { watchHeads: (onHead: (block: number) => void) => watchHeads(wsUrl, onHead, { logger }) } : {}),
  };
}
