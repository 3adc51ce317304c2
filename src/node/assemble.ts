// `arkivector serve`: assembles the node from its configuration, one named step at a time: the chain (an
// --rpc URL, or the embedded devnet seeded with demo data), the indexer with engine stores, the service
// context, and the transports (MCP over stdio; REST + MCP streamable HTTP on one HTTP server).
import type { Logger } from 'pino';
import type { ServeConfig } from '../config.ts';
import { lockNodeData } from '../dataLock.ts';
import { stdioFacts } from '../stdioSnippet.ts';
import { connectChain } from './chain.ts';
import { Closers } from './closers.ts';
import { startEmbeddedChain } from './devnet.ts';
import { announceEngine, startIndexer } from './indexer.ts';
import { createLogger } from './logger.ts';
import { keepOwnDefinitionsAlive, serviceContext } from './service.ts';
import { checkHttpAccess, serveHttpListener, serveStdioTransport } from './transports.ts';
import type { Gateway } from './types.ts';

export async function startGateway(
  config: ServeConfig,
  logger: Logger = createLogger(config.logLevel),
): Promise<Gateway> {
  const access = await checkHttpAccess(config);
  announceEngine(config, logger);
  const closers = new Closers();
  try {
    await lockData(config, logger, closers);
    const embedded = config.rpc ? undefined : await startEmbeddedChain(config, logger, closers);
    const chain = await connectChain(config, embedded?.devnet, logger, closers);
    const indexer = await startIndexer(config, chain, logger, closers);
    const ctx = serviceContext(config, chain, indexer, logger, closers);
    // Reads right after start should see the demo data: wait (bounded) for the first sync.
    if (embedded) await indexer.waitForBlock(await chain.source.head(), 30_000);
    if (chain.writer) keepOwnDefinitionsAlive(ctx, logger, closers);
    const stdio = stdioFacts(config, chain.rpc, chain.writer !== undefined, Boolean(config.embedderKey));
    const httpUrl =
      config.http && access
        ? await serveHttpListener(config.http, config, access, ctx, stdio, logger, closers)
        : undefined;
    if (config.stdio) await serveStdioTransport(config, ctx, logger, closers);
    return {
      rpc: chain.rpc,
      protocol: chain.protocol,
      protocolSource: chain.protocolSource,
      chainId: chain.chainId,
      httpUrl,
      devnet: embedded?.devnet,
      devnetState: embedded?.stateFile,
      seededDemo: embedded?.seededDemo ?? false,
      demo: embedded?.demo ?? false,
      tokens: access !== undefined && access.tokens.length > 0,
      indexer,
      ctx,
      stdio,
      close: () => closers.closeAll(logger),
    };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}

/** One process per data folder and devnet chain, taken before anything is started or written. */
async function lockData(config: ServeConfig, logger: Logger, closers: Closers): Promise<void> {
  const locks = await lockNodeData(
    { dataDir: config.dataDir, devnetState: config.rpc ? undefined : config.devnetState },
    (lock) =>
      logger.warn({ lock: lock.path, pid: lock.recoveredFrom }, 'took over the lock of a process no longer running'),
  );
  for (const lock of locks) closers.push(() => lock.release());
}
