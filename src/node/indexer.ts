// The node's indexer: the graph engine checked before anything starts, then the follower over the
// chain's source, with engine stores, started on its snapshot when the RPC did not answer in time.
import type { Logger } from 'pino';
import type { ServeConfig } from '../config.ts';
import {
  type CollectionStore,
  engineSettingWarning,
  engineStoresWith,
  nativeAddon,
  stopGraphRebuilds,
} from '../engine/index.ts';
import { ChainIndexer, logProgress, ttyProgress } from '../../indexer/index.ts';
import type { NodeChain } from './chain.ts';
import { offlineFirstHead, pastStarting } from './chainStart.ts';
import type { Closers } from './closers.ts';

/**
 * The graph engine, checked before anything starts: a native addon that was not built stops the node at
 * once. The retired ARKIVECTOR_ENGINE setting only earns a warning.
 */
export function announceEngine(config: ServeConfig, logger: Logger): void {
  const warning = engineSettingWarning(config.engineSetting);
  if (warning !== undefined) logger.warn(warning);
  logger.info({ kernel: nativeAddon().cpu().default }, 'graph engine: native (binary16 inside the graph)');
}

export async function startIndexer(
  config: ServeConfig,
  chain: NodeChain,
  logger: Logger,
  closers: Closers,
): Promise<ChainIndexer<CollectionStore>> {
  const indexer = new ChainIndexer({
    source: chain.offline ? offlineFirstHead(chain.source) : chain.source,
    stores: engineStoresWith({ rebuild: { logger } }),
    chainId: chain.chainId,
    confirmations: config.confirmations,
    liveLag: config.liveLag,
    blockTimeSeconds: config.chainBlockTime,
    collections: config.collections,
    pinnedOwners: config.collectionOwners,
    startBlock: config.startBlock,
    dataDir: config.dataDir,
    callBudget: chain.callBudget,
    logger,
    // One updating line on a terminal; log lines otherwise (stdio: the terminal belongs to the MCP host).
    progress: process.stderr.isTTY && !config.stdio ? ttyProgress() : logProgress(logger),
  });
  indexer.start();
  // The first answer of a node started without its RPC serves the snapshot as `stalled`, never `starting`.
  if (chain.offline) await pastStarting(indexer, 60_000);
  // Runs after indexer.stop (closers run in reverse): no block can start another rebuild then.
  closers.push(stopGraphRebuilds);
  closers.push(() => indexer.stop());
  const watcher = chain.source.watchHeads?.(() => indexer.poke());
  if (watcher) closers.push(async () => watcher.close());
  return indexer;
}
