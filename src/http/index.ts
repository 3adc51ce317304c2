// Public surface of src/http/ (REST, MCP streamable HTTP, access, metrics, the docs): `arkivector serve`
// (src/gateway.ts) and the HTTP tests import from here only.
import { mountConsole } from '../console/index.ts';
import { createHttpApp as createApp, type HttpApp, type HttpAppDeps } from './app.ts';

/**
 * Builds the Hono app of a node (app.ts). Without `mounts`, the console is mounted: what a node served
 * before its assembly chose the mounts itself.
 * @example createHttpApp({ ctx, access, metrics, logger, mcp, mounts: [mountConsole, docsMount()] })
 */
export function createHttpApp(deps: HttpAppDeps): HttpApp {
  return createApp({ ...deps, mounts: deps.mounts ?? [mountConsole] });
}
export type { HttpApp, HttpAppDeps };
export { docsMount } from './docs.ts';
export type { HttpLogger, MountDeps, RouteMount } from './types.ts';
export {
  AccessError,
  assertSafeExposure,
  authorize,
  hashSecret,
  isLoopbackHost,
  loadAccessPolicy,
  parseTokensEnv,
  parseTokensFile,
  type AccessPolicy,
  type AccessRequest,
  type Grant,
  type Scope,
  type TokenEntry,
} from './auth.ts';
export { createMetrics, type HttpSample, type Metrics } from './metrics.ts';
export { serveHttp, type HttpServer } from './server.ts';
