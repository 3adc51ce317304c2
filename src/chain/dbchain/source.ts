// The DB-chain ChainSource: blocks from the registry's logs over a whole range (one eth_getLogs, the
// headers, then only the transactions that logged), decoded into entity operations; `span` skips the
// blocks that logged nothing (3 calls per empty range of up to 1,000 blocks); patches completed by
// reading the entity at its block; selectors rendered into the typed query dialect. No call per block for
// expiry: the indexer ends entities at their expiry block from what it tracks (ARCHITECTURE.md §7).
import type { Address, Hex } from 'viem';
import { watchHeads, type HeadWatcherLogger } from '../headWatcher.ts';
import type { CreateOp, EntityOp } from '../operations.ts';
import { defined } from '../../defined.ts';
import {
  ChainDataError,
  type BlockHeader,
  type ChainEntity,
  type ChainSource,
  type EntitySelector,
  type SourceBlock,
  type SourceSpan,
} from '../source.ts';
import { RpcAnswerTooLargeError, RpcResponseError, type RpcTransport } from '../transport.ts';
import { getHeaders, headReads } from '../headReads.ts';
import { readInHalves } from '../pageWalk.ts';
import { USER_NAME_PATTERN } from './attributes.ts';
import { decodeRegistryTransactions, groupBy, type DecodedOp } from './blockOps.ts';
import { txVerdicts } from './decodeThread.ts';
import {
  LOG_RANGE_MAX,
  forEachEntityPage,
  getEntity,
  getTransactions,
  logsCall,
  toChainEntity,
  toRegistryLogs,
  type EntityData,
  type RegistryLog,
} from './reads.ts';

/** Blocks with registry logs one span reads at most (the catch-up batch of a block-by-block source). */
const SPAN_LOGGED_BLOCKS_MAX = 50;

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

  /**
   * The given blocks (ascending, within one log range) decoded from their registry logs, each checked to
   * be the block the headers name (logs carry their block's hash), with patches completed by reading the
   * entity at its block.
   */
  async function decodeBlocks(
    numbers: readonly number[],
    logs: readonly RegistryLog[],
    headers: readonly (BlockHeader | undefined)[],
  ): Promise<SourceBlock[]> {
    const at = new Map(numbers.map((n, i) => [n, headers[i]]));
    numbers.forEach((n) => {
      if (!at.get(n)) throw new ChainDataError(`block ${n} is not available`);
    });
    // Logs and headers from two requests: a reorg between them shows as a hash that differs.
    for (const log of logs)
      if (log.blockHash !== at.get(log.blockNumber)?.hash)
        throw new ChainDataError(`block ${log.blockNumber} changed while it was read`);
    const transactions = await getTransactions(transport, [...new Set(logs.map((l) => l.transactionHash))]);
    // Grouped once: a range may hold thousands of logs, and filtering them per block would be quadratic.
    const logsOf = groupBy(logs, (l) => l.blockNumber);
    const byHash = new Map(transactions.map((t) => [t.hash, t]));
    const verdicts = await txVerdicts(transactions);
    const decoded = numbers.map((n) => {
      const blockLogs = logsOf.get(n) ?? [];
      const hashes = [...new Set(blockLogs.map((l) => l.transactionHash))];
      return decodeRegistryTransactions(
        n,
        hashes.flatMap((h) => byHash.get(h) ?? []),
        blockLogs,
        verdicts,
      );
    });
    const patched = decoded.flatMap((d, i) =>
      d.ops.flatMap((op) =>
        op.type === 'patched' ? [{ key: op.key, owner: op.owner, block: numbers[i] as number }] : [],
      ),
    );
    // Each answer is a whole entity (up to its 128 KiB payload): a batch over the answer bound goes in halves.
    const reads = patched.length
      ? await readInHalves(patched, (part) =>
          transport.batch(part.map((p) => ({ method: 'arkiv_getEntity', params: [p.key, p.block] }))),
        )
      : [];
    const content = new Map<string, ChainEntity | undefined>();
    reads.forEach((answer, i) => {
      if (answer instanceof RpcResponseError) throw answer;
      const p = patched[i];
      if (!p) return;
      const entity = answer ? toChainEntity(answer as EntityData) : undefined;
      // The answer becomes the entity's content: an RPC that answers another entity (or another owner's)
      // must not write it into this one's collection.
      if (entity && (entity.key !== p.key.toLowerCase() || entity.owner.toLowerCase() !== p.owner.toLowerCase()))
        throw new ChainDataError(`the node answered arkiv_getEntity(${p.key}, ${p.block}) with another entity`);
      content.set(`${p.block}:${p.key}`, entity);
    });
    return decoded.map((d, i) => {
      const n = numbers[i] as number;
      const header = defined(at.get(n), `header of block ${n}`);
      const ops: EntityOp[] = [];
      d.ops.forEach((op: DecodedOp, j) => {
        if (op.type !== 'patched') {
          ops.push(op);
          return;
        }
        const entity = content.get(`${n}:${op.key}`);
        // Not live at the end of its block after a patch: a later op of the block deleted it, or the RPC is wrong.
        if (!entity) {
          if (!d.ops.slice(j + 1).some((later) => later.type === 'delete' && later.key === op.key))
            throw new ChainDataError(
              `block ${n}: entity ${op.key} was patched but the RPC answers it is not live at the block; retrying`,
            );
          return;
        }
        ops.push({ type: 'update', key: op.key, ...contentOf(entity, n), txIndex: op.txIndex, opIndex: op.opIndex });
      });
      return { ...header, ops, anomalies: d.anomalies };
    });
  }

  async function range(from: number, to: number): Promise<SourceBlock[]> {
    const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const [logAnswer, headers] = await Promise.all([
      transport.batch([logsCall(from, to)]).then(([answer]) => answer),
      getHeaders(transport, numbers),
    ]);
    return decodeBlocks(numbers, toRegistryLogs(logAnswer), headers);
  }

  /**
   * The registry's logs of `from..to`; an answer over the transport's bound is asked again over the first
   * half of the range, down to one block (the caller covers the rest at its next step).
   */
  async function logsUpTo(from: number, to: number): Promise<{ logs: RegistryLog[]; to: number }> {
    for (let end = to; ; end = from + Math.floor((end - from) / 2)) {
      try {
        const [answer] = await transport.batch([logsCall(from, end)]);
        return { logs: toRegistryLogs(answer), to: end };
      } catch (error) {
        if (!(error instanceof RpcAnswerTooLargeError) || end === from) throw error;
      }
    }
  }

  /**
   * Blocks after `after` up to `to` (at most LOG_RANGE_MAX), reading only the blocks that logged: the
   * end's header first, then the logs, then the logged blocks' headers with `after`'s again. The end's
   * hash is read before the logs, so a reorg after it shows at the indexer's next check of the end; `after`
   * read again after the logs shows one before it. An empty range costs 3 calls, whatever its length.
   */
  async function span(after: { number: number; hash: Hex }, to: number): Promise<SourceSpan> {
    const from = after.number + 1;
    const [endHeader] = await getHeaders(transport, [Math.min(to, after.number + LOG_RANGE_MAX)]);
    if (!endHeader) throw new ChainDataError(`block ${Math.min(to, after.number + LOG_RANGE_MAX)} is not available`);
    const answered = await logsUpTo(from, endHeader.number);
    let { logs, to: covered } = answered;
    let numbers = [...new Set(logs.map((l) => l.blockNumber))];
    // A busy range is taken SPAN_LOGGED_BLOCKS_MAX logged blocks at a time (their transactions come in one batch).
    if (numbers.length > SPAN_LOGGED_BLOCKS_MAX) {
      numbers = numbers.slice(0, SPAN_LOGGED_BLOCKS_MAX);
      covered = defined(numbers.at(-1), 'last logged block');
      logs = logs.filter((l) => l.blockNumber <= covered);
    }
    // Halved: the new end's header is read with the logged ones (after the logs, as the first end's was before).
    const halved = covered !== endHeader.number && !numbers.includes(covered);
    const headers = await getHeaders(transport, [after.number, ...(halved ? [covered] : []), ...numbers]);
    if (headers[0]?.hash !== after.hash)
      throw new ChainDataError(`block ${after.number} changed while the blocks after it were read`);
    const blocks = await decodeBlocks(numbers, logs, headers.slice(halved ? 2 : 1));
    const read = new Map(blocks.map((block) => [block.number, block as BlockHeader]));
    if (halved && headers[1]) read.set(covered, headers[1]);
    const end = covered === endHeader.number ? endHeader : read.get(covered);
    if (!end) throw new ChainDataError(`block ${covered} is not available`);
    if (read.has(end.number) && read.get(end.number)?.hash !== end.hash)
      throw new ChainDataError(`block ${end.number} changed while it was read`);
    return {
      blocks,
      end: { number: end.number, hash: end.hash, parentHash: end.parentHash, timestamp: end.timestamp },
    };
  }

  return {
    ...headReads(transport),
    span,
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
