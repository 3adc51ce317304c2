// Public surface of src/http/ (REST, MCP streamable HTTP, access, metrics): `arkivector serve`
// (src/gateway.ts) and the HTTP tests import from here only.
export { createHttpApp, type HttpAppDeps, type HttpLogger } from './app.ts';
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
