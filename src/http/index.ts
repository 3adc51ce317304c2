// Public surface of src/http/ (REST, MCP streamable HTTP, access, metrics, the docs): the node's assembly
// (src/node/) and the HTTP tests import from here only.
export { createHttpApp, type HttpApp, type HttpAppDeps } from './app.ts';
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
