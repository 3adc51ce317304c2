// The node's chain: one JSON-RPC transport (rate limits reported, calls spent from the --rpc-budget), the
// generation it speaks, its driver's source and writer, and the chain id, all under one start deadline.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Hex } from 'viem';
import {
  budgetedTransport,
  type CallBudget,
  type ChainProtocol,
  type ChainSource,
  type ChainWriter,
  createArkivV1Source,
  createArkivV1Writer,
  createCallBudget,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  HeadClock,
  observeHeads,
  type RpcTransport,
} from '../chain/index.ts';
import { CHAINS, type ServeConfig } from '../config.ts';
import type { Devnet } from '../devnet/index.ts';
import { startChainId, startDeadline } from './chainStart.ts';
import { detectOrRemember } from './protocolMemo.ts';
import type { Closers } from './closers.ts';

/** How long after the last "rate limited" answer /v1/status still says so. */
const RATE_LIMIT_WINDOW_MS = 60_000;

export interface NodeChain {
  /** The RPC URL followed (the embedded devnet's without --rpc). */
  rpc: string;
  protocol: ChainProtocol;
  protocolSource: 'flag' | 'preset' | 'detected' | 'remembered' | 'devnet';
  chainId: number;
  source: ChainSource;
  /** The RPC did not answer by the start deadline: the node starts on its snapshot. */
  offline: boolean;
  writer?: ChainWriter;
  callBudget?: CallBudget;
  /** Every head the node read, with when: the head it expects now between its reads. */
  heads: HeadClock;
  /** Whether the RPC answered "rate limited" within the last minute. */
  rateLimited(): boolean;
}

/** Each generation's two factories (ARCHITECTURE.md §7): the one place a driver is picked. */
const DRIVERS: Record<
  ChainProtocol,
  {
    source: (transport: RpcTransport, options: { wsUrl?: string; logger?: Logger }) => ChainSource;
    writer: (options: { rpcUrl: string; chainId: number; privateKey: Hex; transport: RpcTransport }) => ChainWriter;
  }
> = {
  v1: { source: createArkivV1Source, writer: createArkivV1Writer },
  dbchain: { source: createDbChainSource, writer: createDbChainWriter },
};

export async function connectChain(
  config: ServeConfig,
  devnet: Devnet | undefined,
  logger: Logger,
  closers: Closers,
): Promise<NodeChain> {
  const rpc = config.rpc ?? devnet?.url;
  if (rpc === undefined) throw new Error('a node follows --rpc or its embedded devnet');
  let rateLimitedAt = -Infinity;
  let transport: RpcTransport = createHttpTransport({
    url: rpc,
    apiKey: config.rpcKey,
    onRetry: ({ attempt, delayMs, reason }) => logger.debug({ attempt, delay_ms: delayMs, reason }, 'rpc retry'),
    onRateLimit: ({ waitMs }) => {
      // Said once a minute at most: a throttled follower waits, it is not down.
      if (Date.now() - rateLimitedAt > RATE_LIMIT_WINDOW_MS)
        logger.warn({ retry_after_ms: waitMs ?? null }, 'rpc rate limited: waiting as the node asks');
      rateLimitedAt = Date.now();
    },
  });
  closers.push(() => transport.close());
  // Every call of the node (reads, writes, status) spends from one budget; the follower paces itself to it.
  const callBudget = config.rpcBudget > 0 ? createCallBudget(config.rpcBudget) : undefined;
  if (callBudget) {
    transport = budgetedTransport(transport, callBudget);
    logger.info({ calls_per_hour: callBudget.callsPerHour }, 'rpc budget: the follower paces its polls to it');
  }
  // Every head any part of the node reads times the chain, so the head expected between polls is known.
  const heads = new HeadClock(config.chainBlockTime * 1000);
  transport = observeHeads(transport, heads);
  // One driver per generation: the indexer reads and the signer writes through the same transport.
  const preset = config.chainName === undefined ? undefined : CHAINS[config.chainName];
  // One deadline for the whole first contact: a hanging RPC costs a node with a snapshot 3 block times.
  const deadline = startDeadline(config.chainBlockTime);
  const { protocol, protocolSource } = devnet
    ? { protocol: devnet.protocol, protocolSource: 'devnet' as const }
    : config.protocol !== 'auto'
      ? { protocol: config.protocol, protocolSource: preset ? ('preset' as const) : ('flag' as const) }
      : await detectOrRemember(transport, config.dataDir, deadline, logger);
  const driver = DRIVERS[protocol];
  const source = driver.source(transport, { wsUrl: config.ws ?? devnet?.wsUrl, logger });
  const { chainId, offline } = await startChainId(source, config.dataDir, deadline, logger);
  if (preset && preset.id !== chainId)
    throw new Error(`--chain ${config.chainName} is chain id ${preset.id}, but the node answers ${chainId}`);
  if (preset?.retired) logger.warn({ chain: config.chainName, retired: preset.retired }, 'this network is retired');
  logger.info({ protocol, chosen_by: protocolSource, chain_id: chainId }, 'following the chain');
  // The embedded devnet signs with its first dev account, so the demo can write too.
  const privateKey = (await readPrivateKey(config)) ?? devnet?.accounts[0]?.privateKey;
  const writer = privateKey ? driver.writer({ rpcUrl: rpc, chainId, privateKey, transport }) : undefined;
  if (writer) logger.info({ signer: writer.address }, 'signer configured: write tools enabled');
  return {
    rpc,
    protocol,
    protocolSource,
    chainId,
    source,
    offline,
    writer,
    callBudget,
    heads,
    rateLimited: () => Date.now() - rateLimitedAt < RATE_LIMIT_WINDOW_MS,
  };
}

async function readPrivateKey(config: ServeConfig): Promise<Hex | undefined> {
  const raw = config.privateKey ?? (config.privateKeyFile ? await readFile(config.privateKeyFile, 'utf8') : undefined);
  if (raw === undefined) return undefined;
  const key = raw.trim();
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error('the signer key must be 0x followed by 64 hex digits');
  return key as Hex;
}
