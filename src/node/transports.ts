// How the node is reached: REST + MCP streamable HTTP on one listener (access decided before anything
// starts), the KuraDB endpoint file, and MCP over stdio.
import type { Logger } from 'pino';
import type { ServeConfig } from '../config.ts';
import {
  type AccessPolicy,
  assertSafeExposure,
  createHttpApp,
  createMetrics,
  docsMount,
  loadAccessPolicy,
  serveHttp,
} from '../http/index.ts';
import { defaultRateLimit } from '../http/rateLimit.ts';
import { mountConsole } from '../console/index.ts';
import { endpointUrl, writeEndpointFile } from '../kuradbEndpoint.ts';
import { assertPortFree } from '../portCheck.ts';
import type { ServiceContext } from '../service/index.ts';
import type { StdioFacts } from '../stdioSnippet.ts';
import { serveStdio } from '../../tools/index.ts';
import type { Closers } from './closers.ts';

/**
 * The HTTP listener's access policy, decided before anything starts: an exposed node without access
 * control (or with a broken token list) is refused at once, not after connecting to the chain. Undefined
 * without a listener.
 */
export async function checkHttpAccess(config: ServeConfig): Promise<AccessPolicy | undefined> {
  if (!config.http) return undefined;
  const access = await loadAccessPolicy({
    tokensFile: config.tokensFile,
    tokensEnv: config.tokensEnv,
    publicRead: config.publicRead,
    host: config.http.host,
  });
  assertSafeExposure(config.http.host, access);
  await assertPortFree(config.http.host, config.http.port);
  return access;
}

/** The one HTTP listener: REST, /mcp and the console; resolves to its URL. */
export async function serveHttpListener(
  http: NonNullable<ServeConfig['http']>,
  config: ServeConfig,
  access: AccessPolicy,
  ctx: ServiceContext,
  stdio: StdioFacts,
  logger: Logger,
  closers: Closers,
): Promise<string> {
  const metrics = createMetrics(ctx);
  const app = createHttpApp({
    ctx,
    access,
    metrics,
    logger,
    mcp: { ctx, logger, observe: metrics.observeTool, compat: config.compat },
    rateLimitPerMinute: config.rateLimitPerMinute ?? defaultRateLimit(access),
    stdio,
    mounts: [mountConsole, docsMount()],
  });
  const server = await serveHttp({ host: http.host, port: http.port, app });
  closers.push(() => server.close());
  logger.info({ url: server.url }, 'http listening');
  if (config.kuradbEndpointFile !== undefined) {
    const endpoint = writeEndpointFile(config.kuradbEndpointFile, endpointUrl(server.url));
    closers.push(async () => endpoint.remove());
    if (endpoint.replaced !== undefined)
      logger.warn({ file: endpoint.path, previous: endpoint.replaced }, 'kuradb endpoint file replaced');
    logger.info({ file: endpoint.path }, 'kuradb endpoint file written');
  }
  return server.url;
}

/** MCP over this process's stdin and stdout. */
export async function serveStdioTransport(
  config: ServeConfig,
  ctx: ServiceContext,
  logger: Logger,
  closers: Closers,
): Promise<void> {
  const stdio = await serveStdio({ ctx, logger, compat: config.compat });
  closers.push(() => stdio.close());
}
