// The web console at `/`: static files (public/) served from memory on the node's own listener, plus one
// guarded JSON document describing how this node is reached. The console holds no privilege of its own:
// its script calls the REST API with whatever token the user typed, and the API keeps enforcing access.
import { readFileSync } from 'node:fs';
import type { Context, Hono } from 'hono';
import type { AccessPolicy, Grant, Scope } from '../http/auth.ts';
import type { HttpEnv } from '../http/types.ts';
import { INSTALL_COMMANDS, VERSION } from '../packageInfo.ts';
import type { ServiceContext } from '../service/index.ts';
import { type StdioFacts, type StdioServerEntry, stdioServerEntry } from '../stdioSnippet.ts';

/**
 * CSP of every console response. Scripts, styles and fetches come from this origin only; no inline
 * script or style, no plugins, no framing: chain data rendered by mistake as markup could not run.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
} as const;

const JS = 'text/javascript; charset=utf-8';

/**
 * Every file the console serves, with its type: a fixed list, so no request can name another path. The
 * script is app.js and the browser modules it imports, each named after what it does.
 */
export const CONSOLE_FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': JS,
  'api.js': JS,
  'attributes.js': JS,
  'collections.js': JS,
  'connect.js': JS,
  'dom.js': JS,
  'overview.js': JS,
  'search.js': JS,
  'state.js': JS,
  'style.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;
const FILES = CONSOLE_FILES;

type FileName = keyof typeof FILES;

/** The directory of the console's static files, beside this module in the sources and in `dist/`. */
export const CONSOLE_DIR = new URL('./public/', import.meta.url);

type ConsoleFile = { body: Uint8Array; type: string };

function loadFiles(): Record<FileName, ConsoleFile> {
  const files = {} as Record<FileName, ConsoleFile>;
  for (const name of Object.keys(FILES) as FileName[])
    files[name] = { body: readFileSync(new URL(name, CONSOLE_DIR)), type: FILES[name] };
  return files;
}

/** What the console learns about the node besides the REST API (GET /console/node.json, `read` scope). */
export interface ConsoleNodeInfo {
  /** Bearer tokens are configured: MCP clients need the Authorization header. */
  tokens: boolean;
  public_read: boolean;
  /** Text searches in modes semantic and hybrid need the node's embedder. */
  embedder: { model: string } | null;
  /** The node can write: the write tools and routes exist (to callers with the write scope). */
  signer: boolean;
  version: string;
  /** The lines that install the `arkivector` command (from a checkout: the package is in no registry). */
  install: readonly string[];
  /** The client entry of a stdio node against the same chain (the banner's, with `arkivector` as command). */
  stdio: StdioServerEntry;
  /** A URL in `stdio` lost its credentials or path: the user must put the full URL in. */
  stdio_redacted: boolean;
}

export interface ConsoleDeps {
  access: AccessPolicy;
  ctx: ServiceContext;
  /** Absent (an app built without a gateway, in tests): the stdio entry follows the context's RPC. */
  stdio?: StdioFacts;
  /** The node's access check for a request (createHttpApp's: Origin, proxies, tokens, failed tries). */
  guard: (c: Context, scope: Scope) => Grant;
}

/**
 * Serves the console at `/` (and its files under `/console/`) on the node's app: a mount of createHttpApp.
 * @param app the node's Hono app (createHttpApp)
 * @param deps the access policy the API enforces, and the service context
 * @example createHttpApp({ ...deps, mounts: [mountConsole] })
 */
export function mountConsole(app: Hono<HttpEnv>, deps: ConsoleDeps): void {
  const files = loadFiles();
  const serve = (c: Context<HttpEnv>, name: FileName) => {
    const file = files[name];
    return c.body(file.body as Uint8Array<ArrayBuffer>, 200, { 'content-type': file.type, ...SECURITY_HEADERS });
  };
  app.get('/', (c) => {
    c.set('route', '/');
    return serve(c, 'index.html');
  });
  app.get('/console/node.json', (c) => {
    c.set('route', '/console/node.json');
    // Security: the same check as the REST reads, so the console learns nothing the API would refuse.
    deps.guard(c, 'read');
    const stdio = stdioServerEntry(
      deps.stdio ?? { rpc: deps.ctx.chain.rpc, signer: deps.ctx.writer !== undefined, embedderKey: false },
      'arkivector',
    );
    const info: ConsoleNodeInfo = {
      tokens: deps.access.tokens.length > 0,
      public_read: deps.access.publicRead,
      embedder: deps.ctx.embedder ? { model: deps.ctx.embedder.model } : null,
      signer: deps.ctx.writer !== undefined,
      version: VERSION,
      install: INSTALL_COMMANDS,
      stdio: stdio.entry,
      stdio_redacted: stdio.redacted,
    };
    return c.json(info, 200, SECURITY_HEADERS);
  });
  app.get('/console/:file', (c, next) => {
    const name = c.req.param('file');
    if (!Object.hasOwn(FILES, name)) return next();
    c.set('route', '/console/:file');
    return serve(c, name as FileName);
  });
}
