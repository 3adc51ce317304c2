// The service's context for this node (its indexer, its chain, its embedder and signer), and the write
// daemon's care of its own collection definitions.
import type { Logger } from 'pino';
import type { ChainSource } from '../chain/index.ts';
import type { ServeConfig } from '../config.ts';
import { chooseEmbedder } from '../embedder/index.ts';
import { redactUrl } from '../redactUrl.ts';
import { keepDefinitionsAlive, withHeadEstimate, type ServiceContext } from '../service/index.ts';
import type { NodeChain } from './chain.ts';
import type { Closers } from './closers.ts';

/** How often a write daemon checks that its collection definitions outlive the keep-alive horizon. */
const KEEPALIVE_INTERVAL_MS = 3_600_000;

export function serviceContext(
  config: ServeConfig,
  chain: NodeChain,
  indexer: ServiceContext['indexer'],
  logger: Logger,
  closers: Closers,
): ServiceContext {
  const text = chooseEmbedder(
    {
      endpoint: config.embedder,
      apiKey: config.embedderKey,
      local: config.localEmbedder,
      modelHub: config.modelHub,
      modelCache: config.modelCache,
    },
    logger,
  );
  if (text.close) closers.push(text.close);
  return {
    indexer: withHeadEstimate(indexer, chain.heads, config),
    chain: {
      chainId: chain.chainId,
      rpc: redactUrl(chain.rpc),
      protocol: chain.protocol,
      rateLimited: chain.rateLimited,
      callsPerHour: chain.callBudget?.callsPerHour,
      callBudget: chain.callBudget,
    },
    minBlockTimeoutMs: config.minBlockTimeoutMs,
    // A stdio node is the user's own, so its chain is one they trust to check other nodes' answers.
    verifyRpc: config.verifyRpc
      ? { url: config.verifyRpc }
      : config.stdio
        ? { url: chain.rpc, ...(config.rpcKey ? { headers: { 'X-API-KEY': config.rpcKey } } : {}) }
        : undefined,
    writer: chain.writer,
    blockTimestamp: blockTimestamps(chain.source),
    embedder: text.embedder,
  };
}

/** A write daemon keeps its own collection definitions alive (checked after the first sync, then hourly). */
export function keepOwnDefinitionsAlive(ctx: ServiceContext, logger: Logger, closers: Closers): void {
  const keepAlive = () =>
    keepDefinitionsAlive(ctx)
      .then(({ extended }) => extended.length && logger.info({ extended }, 'collection definitions extended'))
      .catch((error: Error) =>
        logger.warn({ error: error.message }, 'keeping definitions alive failed; retrying later'),
      );
  const firstSync = ctx.indexer.waitForBlock(0, 60_000).then(keepAlive);
  const timer = setInterval(keepAlive, KEEPALIVE_INTERVAL_MS);
  timer.unref();
  closers.push(async () => {
    clearInterval(timer);
    await firstSync;
  });
}

/** Block times for answers that show dates; blocks never change time once final, so they are cached. */
function blockTimestamps(source: ChainSource): (block: number) => Promise<number> {
  const cache = new Map<number, number>();
  return async (block) => {
    const known = cache.get(block);
    if (known !== undefined) return known;
    const [header] = await source.headers([block]);
    if (!header) throw new Error(`block ${block} is not available`);
    if (cache.size > 10_000) cache.clear();
    cache.set(block, header.timestamp);
    return header.timestamp;
  };
}
