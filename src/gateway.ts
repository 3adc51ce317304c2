// `arkivector serve`: assembles the node from its configuration: the chain (an --rpc URL, or the
// embedded devnet seeded with demo data), the indexer with engine stores, the service context, and the
// transports (MCP over stdio; REST + MCP streamable HTTP on one HTTP server).
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import pino, { type Logger } from 'pino';
import type { Hex } from 'viem';
import {
  createArkivV1Source,
  budgetedTransport,
  createArkivV1Writer,
  createCallBudget,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
  redactUrl,
  type ChainProtocol,
  type ChainSource,
  type ChainWriter,
  type RpcTransport,
} from './chain/index.ts';
import { offlineFirstHead, pastStarting, startChainId, startDeadline, detectOrRemember } from './chainStart.ts';
import { CHAINS, type ServeConfig } from './config.ts';
import { seedDemo } from './devnet/demo.ts';
import { startDevnet, type Devnet } from './devnet/index.ts';
import { chooseEmbedder } from './embedder/index.ts';
import { BIN_PATH } from './packageInfo.ts';
import { type StdioFacts, stdioFacts, stdioServerEntry } from './stdioSnippet.ts';
import { assertPortFree } from './portCheck.ts';
import { lockNodeData } from './dataLock.ts';
import {
  type CollectionStore,
  ENGINE_ENV,
  engineStoresWith,
  nativeAddon,
  selectedEngine,
  stopGraphRebuilds,
} from './engine/index.ts';
import { endpointUrl, writeEndpointFile } from './kuradbEndpoint.ts';
import { assertSafeExposure, createHttpApp, createMetrics, loadAccessPolicy, serveHttp } from './http/index.ts';
import { defaultRateLimit } from './http/rateLimit.ts';
import { keepDefinitionsAlive, type ServiceContext } from './service/index.ts';
import { ChainIndexer, clearProgressLine, INDEXER_DEFAULTS, logProgress, ttyProgress } from '../indexer/index.ts';
import { serveStdio } from '../tools/index.ts';

export interface Gateway {
  readonly rpc: string;
  /** The generation followed, and how it was chosen. */
  readonly protocol: ChainProtocol;
  readonly protocolSource: 'flag' | 'preset' | 'detected' | 'remembered' | 'devnet';
  readonly chainId: number;
  readonly httpUrl?: string;
  readonly devnet?: Devnet;
  /** The embedded devnet's state file, when its chain is kept across restarts. */
  readonly devnetState?: string;
  /** Whether the demo collections were written at this start (only into a new chain). */
  readonly seededDemo: boolean;
  /** The embedded devnet holds the demo collections (seeded into it when its chain was new). */
  readonly demo: boolean;
  /** HTTP callers need bearer tokens (--tokens / ARKIVECTOR_TOKENS). */
  readonly tokens: boolean;
  readonly indexer: ChainIndexer<CollectionStore>;
  readonly ctx: ServiceContext;
  /** What a stdio node against the same chain needs (the banner's and the console's snippets). */
  readonly stdio: StdioFacts;
  close(): Promise<void>;
}

export function createLogger(
  level: ServeConfig['logLevel'],
  format: ServeConfig['logFormat'] = 'json',
  stderr: NodeJS.WriteStream = process.stderr,
): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  // Logs go to stderr: stdout belongs to MCP stdio.
  if (format === 'json' && !stderr.isTTY) return pino(options, pino.destination(2));
  // On a terminal a log line first clears the progress line the indexer may be showing there.
  const render = format === 'json' ? (line: string) => line : prettyLine;
  return pino(options, {
    write: (line: string) => {
      clearProgressLine(stderr);
      stderr.write(render(line));
    },
  });
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as `HH:MM:SS LEVEL message key=value …` for a person at a terminal. */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, ...fields } = record;
  const clock = typeof time === 'string' ? time.slice(11, 19) : '';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${clock} ${(LEVEL_NAMES[level as number] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${rest ? ` ${rest}` : ''}\n`;
}

async function readPrivateKey(config: ServeConfig): Promise<Hex | undefined> {
  const raw = config.privateKey ?? (config.privateKeyFile ? await readFile(config.privateKeyFile, 'utf8') : undefined);
  if (raw === undefined) return undefined;
  const key = raw.trim();
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error('the signer key must be 0x followed by 64 hex digits');
  return key as Hex;
}

export async function startGateway(
  config: ServeConfig,
  logger: Logger = createLogger(config.logLevel),
): Promise<Gateway> {
  let devnet: Devnet | undefined;
  let devnetState: string | undefined;
  let rpc = config.rpc;
  let demo = false;
  let tokens = false;
  const closers: (() => Promise<void>)[] = [];
  let seededDemo = false;
  // Access is decided before anything starts: an exposed node without access control (or with a broken
  // token list) is refused at once, not after connecting to the chain.
  const access = config.http
    ? await loadAccessPolicy({
        tokensFile: config.tokensFile,
        tokensEnv: config.tokensEnv,
        publicRead: config.publicRead,
        host: config.http.host,
      })
    : undefined;
  if (config.http && access) assertSafeExposure(config.http.host, access);
  if (config.http) await assertPortFree(config.http.host, config.http.port);
  // ARKIVECTOR_ENGINE, checked before anything starts: a misspelt engine or a native addon that was not
  // built stops the node at once (never a silent switch to the other engine: replicas would differ).
  if (selectedEngine() === 'native')
    logger.info({ kernel: nativeAddon().cpu().default }, 'graph engine: native (binary16 inside the graph)');
  else logger.info({ env: ENGINE_ENV }, 'graph engine: hnswlib-node (float32 inside the graph)');
  try {
    // One process per data folder and devnet chain, taken before anything is started or written.
    const locks = await lockNodeData(
      { dataDir: config.dataDir, devnetState: rpc ? undefined : config.devnetState },
      (lock) =>
        logger.warn({ lock: lock.path, pid: lock.recoveredFrom }, 'took over the lock of a process no longer running'),
    );
    for (const lock of locks) closers.push(() => lock.release());
    if (!rpc) {
      const { devnet: started, stateFile } = await startEmbeddedDevnet(config, logger);
      devnet = started;
      devnetState = stateFile;
      closers.push(() => started.stop());
      rpc = devnet.url;
      logger.info(
        { rpc, chain_id: devnet.chainId, state: devnetState, head: devnet.headNumber },
        'embedded devnet started',
      );
      // A kept chain already holds what the first start seeded (and whatever agents wrote since).
      if (config.demo && devnet.headNumber === 0) {
        seededDemo = true;
        const [demoAccount] = devnet.accounts;
        if (!demoAccount) throw new Error('the embedded devnet has no funded account to seed the demo with');
        const block = await seedDemo(devnet.url, demoAccount.privateKey, devnet.protocol);
        logger.info({ block: Number(block) }, 'demo collections notes and demo.docs written');
      }
      // Seeded now or at the first start of a kept chain (a chain first started with --no-demo and later
      // without it has no demo data, and shows the demo lines anyway: the searches then find nothing).
      demo = config.demo;
    }
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
    // One driver per generation: the indexer reads and the signer writes through the same transport.
    const preset = config.chainName === undefined ? undefined : CHAINS[config.chainName];
    // One deadline for the whole first contact: a hanging RPC costs a node with a snapshot 3 block times.
    const deadline = startDeadline(devnet ? config.blockTime : INDEXER_DEFAULTS.blockTimeSeconds);
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
    const indexer = new ChainIndexer({
      source: offline ? offlineFirstHead(source) : source,
      stores: engineStoresWith({ rebuild: { logger } }),
      chainId,
      confirmations: config.confirmations,
      liveLag: config.liveLag,
      blockTimeSeconds: devnet ? config.blockTime : (preset?.blockTimeSeconds ?? INDEXER_DEFAULTS.blockTimeSeconds),
      collections: config.collections,
      pinnedOwners: config.collectionOwners,
      startBlock: config.startBlock,
      dataDir: config.dataDir,
      callBudget,
      logger,
      // One updating line on a terminal; log lines otherwise (stdio: the terminal belongs to the MCP host).
      progress: process.stderr.isTTY && !config.stdio ? ttyProgress() : logProgress(logger),
    });
    indexer.start();
    // The first answer of a node started without its RPC serves the snapshot as `stalled`, never `starting`.
    if (offline) await pastStarting(indexer, 60_000);
    // Runs after indexer.stop (closers run in reverse): no block can start another rebuild then.
    closers.push(stopGraphRebuilds);
    closers.push(() => indexer.stop());
    const watcher = source.watchHeads?.(() => indexer.poke());
    if (watcher) closers.push(async () => watcher.close());
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
    const ctx: ServiceContext = {
      indexer,
      chain: {
        chainId,
        rpc: redactUrl(rpc),
        protocol,
        rateLimited: () => Date.now() - rateLimitedAt < RATE_LIMIT_WINDOW_MS,
        callsPerHour: callBudget?.callsPerHour,
      },
      minBlockTimeoutMs: config.minBlockTimeoutMs,
      // A stdio node is the user's own, so its chain is one they trust to check other nodes' answers.
      verifyRpc: config.verifyRpc
        ? { url: config.verifyRpc }
        : config.stdio
          ? { url: rpc, ...(config.rpcKey ? { headers: { 'X-API-KEY': config.rpcKey } } : {}) }
          : undefined,
      writer,
      blockTimestamp: blockTimestamps(source),
      embedder: text.embedder,
    };
    if (devnet) {
      // Reads right after start should see the demo data: wait (bounded) for the first sync.
      await indexer.waitForBlock(await source.head(), 30_000);
    }
    if (writer) {
      // A write daemon keeps its own collection definitions alive (checked at start and hourly).
      const keepAlive = () =>
        keepDefinitionsAlive(ctx)
          .then(({ extended }) => extended.length && logger.info({ extended }, 'collection definitions extended'))
          .catch((error: Error) =>
            logger.warn({ error: error.message }, 'keeping definitions alive failed; retrying later'),
          );
      const firstSync = indexer.waitForBlock(0, 60_000).then(keepAlive);
      const timer = setInterval(keepAlive, 3_600_000);
      timer.unref();
      closers.push(async () => {
        clearInterval(timer);
        await firstSync;
      });
    }
    const stdio = stdioFacts(config, rpc, writer !== undefined, Boolean(config.embedderKey));
    let httpUrl: string | undefined;
    if (config.http && access) {
      tokens = access.tokens.length > 0;
      const metrics = createMetrics(ctx);
      const app = createHttpApp({
        ctx,
        access,
        metrics,
        logger,
        mcp: { ctx, logger, observe: metrics.observeTool, compat: config.compat },
        rateLimitPerMinute: config.rateLimitPerMinute ?? defaultRateLimit(access),
        stdio,
      });
      const server = await serveHttp({ host: config.http.host, port: config.http.port, app });
      closers.push(() => server.close());
      httpUrl = server.url;
      logger.info({ url: httpUrl }, 'http listening');
      if (config.kuradbEndpointFile !== undefined) {
        const endpoint = writeEndpointFile(config.kuradbEndpointFile, endpointUrl(httpUrl));
        closers.push(async () => endpoint.remove());
        if (endpoint.replaced !== undefined)
          logger.warn({ file: endpoint.path, previous: endpoint.replaced }, 'kuradb endpoint file replaced');
        logger.info({ file: endpoint.path }, 'kuradb endpoint file written');
      }
    }
    if (config.stdio) {
      const stdio = await serveStdio({ ctx, logger, compat: config.compat });
      closers.push(() => stdio.close());
    }
    return {
      rpc,
      protocol,
      protocolSource,
      chainId,
      httpUrl,
      devnet,
      devnetState,
      seededDemo,
      demo,
      tokens,
      indexer,
      ctx,
      stdio,
      async close() {
        for (const close of closers.reverse())
          await close().catch((error) => logger.error({ error: (error as Error).message }, 'shutdown step failed'));
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw error;
  }
}

/** How long after the last "rate limited" answer /v1/status still says so. */
const RATE_LIMIT_WINDOW_MS = 60_000;

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

/**
 * The embedded devnet on its stable port, reloading its state file when there is one. A data directory
 * that holds only a v1 chain (kept before the DB-chain became the default) keeps following it: that chain
 * is the user's memory, and a new empty chain beside it would look like a loss.
 */
async function startEmbeddedDevnet(
  config: ServeConfig,
  logger: Logger,
): Promise<{ devnet: Devnet; stateFile?: string }> {
  const keptV1 =
    config.keptV1DevnetState !== undefined &&
    config.devnetState !== undefined &&
    !existsSync(config.devnetState) &&
    existsSync(config.keptV1DevnetState);
  const stateFile = keptV1 ? config.keptV1DevnetState : config.devnetState;
  if (keptV1)
    logger.warn(
      { state: stateFile },
      'following the v1 devnet chain kept in the data directory (pass --protocol dbchain to start a DB-chain devnet beside it)',
    );
  if (stateFile) await mkdir(dirname(stateFile), { recursive: true });
  try {
    const devnet = await startDevnet({
      host: '127.0.0.1',
      port: config.devnetPort,
      blockTime: config.blockTime,
      stateFile,
      protocol: keptV1 || config.protocol === 'v1' ? 'v1' : 'dbchain',
    });
    return { devnet, stateFile };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(
        `the embedded devnet cannot listen on 127.0.0.1:${config.devnetPort}: the port is in use (another arkivector or devnet?); pass --devnet-port N, or 0 for any free port`,
      );
    throw error;
  }
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

const PROTOCOL_NAMES: Record<ChainProtocol, string> = { v1: 'Arkiv v1', dbchain: 'DB-chain' };

/** The banner's line on text: which embedder, and what that means for writes and searches. */
function embedderLine(embedder: ServiceContext['embedder']): string {
  if (!embedder) return 'none (--embedder none): vectors and keyword search only';
  if (embedder.kind !== 'local') return `${embedder.model} through an embeddings endpoint: text writes and text search`;
  const state = embedder.state?.();
  if (state?.state === 'failed')
    return `${embedder.model} in this process, unavailable (text calls answer embedder_unavailable): ${state.error}`;
  const when = state?.state === 'idle' ? `; fetched from the hub at the first text call (${state.source})` : '';
  return `${embedder.model} in this process: text writes and text search${when}`;
}

/** What `npm start` prints: where the gateway is and how to connect an MCP client. */
export function connectionBanner(gateway: Gateway): string {
  const lines = ['arkivector is running.', ''];
  if (gateway.devnet)
    lines.push(
      `Chain:    embedded ${PROTOCOL_NAMES[gateway.protocol]} devnet at ${gateway.devnet.url} (chain id ${gateway.chainId}), head block ${gateway.devnet.headNumber}${gateway.seededDemo ? ', demo collections notes and demo.docs written' : ''}`,
      gateway.devnetState
        ? `Memory:   kept in ${resolve(gateway.devnetState)} (delete it to start from an empty chain)`
        : 'Memory:   forgotten on exit (--no-data-dir; without it the chain is kept in the per-user data directory)',
    );
  else
    lines.push(
      `Chain:    ${redactUrl(gateway.rpc)} (chain id ${gateway.chainId}, ${PROTOCOL_NAMES[gateway.protocol]}${gateway.protocolSource === 'detected' || gateway.protocolSource === 'remembered' ? `, ${gateway.protocolSource}` : ''})`,
    );
  lines.push(`Embedder: ${embedderLine(gateway.ctx.embedder)}`);
  if (gateway.httpUrl) {
    const writes = gateway.stdio.signer;
    // Security: the header names the variable, never a token.
    const auth = gateway.tokens ? ' --header "Authorization: Bearer $ARKIVECTOR_TOKEN"' : '';
    const stdio = stdioServerEntry(gateway.stdio, process.execPath, [BIN_PATH]);
    lines.push(
      `Console:  ${gateway.httpUrl}/`,
      `REST:     ${gateway.httpUrl}/v1/collections`,
      `MCP:      ${gateway.httpUrl}/mcp (streamable HTTP)`,
      '',
      'Claude Code:',
      `  claude mcp add --transport http arkivector ${gateway.httpUrl}/mcp${auth}`,
      '',
      'Claude Desktop (claude_desktop_config.json), over stdio against the same chain:',
      // One line, spaced for reading (newlines inside values are escaped by JSON, so none is removed).
      `  ${JSON.stringify({ mcpServers: { arkivector: stdio.entry } }, null, 1).replace(/\n\s*/g, ' ')}`,
      // Security: placeholders, never the keys. Without one the stdio node would be read-only while this one writes.
      ...(writes
        ? [
            `  (put the signer's key in place of 0x…${gateway.devnet ? `; this devnet's funded account is ${gateway.ctx.writer?.address}` : ''}, or drop "env" for a read-only node)`,
          ]
        : []),
      // Security: URLs may carry credentials (user:password, a key in the path or query); the banner shows
      // the redacted form, and says so when it differs.
      ...(stdio.redacted
        ? ['  (a URL is shown without its credentials or path: put the full URL in the snippet yourself)']
        : []),
    );
    // The demo lines search the demo data: only a node that wrote it has it.
    if (gateway.demo)
      lines.push(
        '',
        'Try it:',
        `  curl -s ${gateway.httpUrl}/v1/collections${gateway.tokens ? ' -H "Authorization: Bearer $ARKIVECTOR_TOKEN"' : ''}`,
        `  curl -s -X POST ${gateway.httpUrl}/v1/collections/notes/search -H 'content-type: application/json'${gateway.tokens ? ' -H "Authorization: Bearer $ARKIVECTOR_TOKEN"' : ''} -d '{"vector":[1,0.05,0,0],"k":2,"where":"topic = \\"pets\\"","include_document":true}'`,
      );
  }
  return lines.join('\n');
}
