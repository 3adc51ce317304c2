// The Arkiv v1 ChainSource: reads over the shared RpcTransport, blocks decoded into entity operations
// (expiries come from the chain's own Expired logs), selectors rendered into arkiv_query's language, and
// the optional newHeads WebSocket.
import { headReads } from '../headReads.ts';
import { watchHeads, type HeadWatcherLogger } from '../headWatcher.ts';
import type { ChainEntity, ChainSource, EntitySelector } from '../source.ts';
import type { RpcTransport } from '../transport.ts';
import { decodeBlock } from './blockOps.ts';
import { ATTRIBUTE_NAME_PATTERN } from './protocol.ts';
import { forEachEntityPage, getBlocksWithReceipts } from './reads.ts';

export interface ArkivV1SourceOptions {
  /** eth_subscribe endpoint for newHeads (`--ws`); without it, watchHeads is absent and polling alone follows. */
  wsUrl?: string;
  logger?: HeadWatcherLogger;
}

/**
 * The selector in arkiv_query's language, or undefined when it can match nothing (an empty list of values).
 * @example v1Query({ strings: { arkivector_type: 'vector', arkivector_collection: ['a', 'b'] } })
 *   // 'arkivector_type = "vector" && arkivector_collection IN ("a" "b")'
 */
export function v1Query(selector: EntitySelector): string | undefined {
  const terms: string[] = [];
  for (const [name, value] of Object.entries(selector.strings)) {
    // Names are ours (arkivector_*), never from the chain or a caller: a bad one is a bug.
    if (!ATTRIBUTE_NAME_PATTERN.test(name)) throw new RangeError(`not an attribute name: ${JSON.stringify(name)}`);
    if (typeof value === 'string') terms.push(`${name} = ${JSON.stringify(value)}`);
    else if (value.length === 0) return undefined;
    else terms.push(`${name} IN (${value.map((v) => JSON.stringify(v)).join(' ')})`);
  }
  return terms.join(' && ');
}

/**
 * @param transport the node's one JSON-RPC stack (retries, rate limits, credentials), shared with the writer
 * @example const source = createArkivV1Source(createHttpTransport({ url }), { wsUrl })
 */
export function createArkivV1Source(transport: RpcTransport, options: ArkivV1SourceOptions = {}): ChainSource {
  const { wsUrl, logger } = options;
  return {
    ...headReads(transport),
    async blocks(from, to) {
      return (await getBlocksWithReceipts(transport, from, to)).map((block) => {
        const { transactions: _decoded, ...header } = block;
        return { ...header, ...decodeBlock(block) };
      });
    },
    async forEachEntityPage(selector, atBlock, visit, pageOptions) {
      const query = v1Query(selector);
      if (query === undefined) return;
      await forEachEntityPage(transport, query, atBlock, visit, pageOptions);
    },
    async entityAt(key, atBlock) {
      let found: ChainEntity | undefined;
      await forEachEntityPage(transport, `$key = ${key}`, atBlock, (page) => (found ??= page[0]), {
        pageSize: 1,
        maxPages: 1,
      });
      return found;
    },
    ...(wsUrl ? { watchHeads: (onHead: (block: number) => void) => watchHeads(wsUrl, onHead, { logger }) } : {}),
  };
}
