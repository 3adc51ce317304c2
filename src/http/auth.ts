// Access control of the HTTP surface (docs/access.md): bearer tokens with `read`/`write` scopes, public
// reads, and the trust-local mode of a loopback bind without tokens. createHttpApp calls `authorize` on
// every guarded route; `arkivector serve` calls `loadAccessPolicy` and `assertSafeExposure` before it listens.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { ArkivectorError } from '../errors.ts';

export type Scope = 'read' | 'write';

export interface TokenEntry {
  readonly name: string;
  /** SHA-256 of the secret; the secret itself is never kept. */
  readonly digest: Buffer;
  readonly scopes: ReadonlySet<Scope>;
}

export interface AccessPolicy {
  readonly tokens: readonly TokenEntry[];
  readonly publicRead: boolean;
  /** The address the server binds to. */
  readonly host: string;
  /** Whether `host` is a loopback address. */
  readonly loopback: boolean;
}

/** Who a request acts as, and what it may do. */
export interface Grant {
  readonly principal: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** The request headers access decisions read. */
export interface AccessRequest {
  authorization?: string | null;
  origin?: string | null;
  host?: string | null;
  /** `X-Forwarded-Host`: the host a proxy was asked for, which the page's Origin then names. */
  forwardedHost?: string | null;
  /**
   * Whether the request carries any of PROXY_HEADERS: it came through a proxy, so the loopback peer
   * address says nothing about the real caller.
   */
  forwarded?: boolean;
}

/**
 * Headers that only a proxy (or a caller posing as one) adds. Any of them marks a request as proxied: a
 * proxy that sets just `X-Real-IP` or `Via` would otherwise pass every remote caller off as local.
 */
export const PROXY_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-real-ip',
  'via',
] as const;

/**
 * The access-relevant headers of a request.
 * @param header reads one request header by lower-case name
 * @example accessRequest((name) => c.req.header(name))
 */
export function accessRequest(header: (name: string) => string | undefined): AccessRequest {
  return {
    authorization: header('authorization'),
    origin: header('origin'),
    host: header('host'),
    forwardedHost: header('x-forwarded-host'),
    forwarded: PROXY_HEADERS.some((name) => header(name) !== undefined),
  };
}

/**
 * Whether an `Origin` names the node it was sent to: the same host and port as the `Host` the request
 * was sent with (or the `X-Forwarded-Host` a proxy passed on). The scheme is not compared: a proxy that
 * terminates TLS turns https into http.
 */
function sameOrigin(origin: string, host: string | null | undefined): boolean {
  if (host == null) return false;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    // Parsing the Host with the Origin's scheme drops the same default port from both.
    const target = new URL(`${url.protocol}//${(host.split(',')[0] ?? '').trim()}`);
    return target.host === url.host && target.pathname === '/' && target.username === '';
  } catch {
    // `null` (sandboxed frames, file://) and garbage are nobody's own origin.
    return false;
  }
}

/**
 * unauthorized / forbidden, with the `WWW-Authenticate` challenge the HTTP layer sends alongside
 * (kept out of `meta` so it never becomes part of the problem body).
 */
export class AccessError extends ArkivectorError {
  override name = 'AccessError';
  readonly challenge: string | undefined;
  constructor(code: 'unauthorized' | 'forbidden', message: string, challenge?: string) {
    super(code, message);
    this.challenge = challenge;
  }
}

const ALL_SCOPES: ReadonlySet<Scope> = new Set<Scope>(['read', 'write']);
const READ_ONLY: ReadonlySet<Scope> = new Set<Scope>(['read']);
const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** Hex SHA-256 of a token secret, the form `--tokens FILE` stores. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Whether a host (bind address, `Host` header host or URL hostname) is loopback: `localhost`,
 * 127.0.0.0/8, `::1` (bracketed or not) and the IPv4-mapped form of 127.0.0.0/8.
 * @example isLoopbackHost('[::1]') // true
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) {
    if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped?.[1]?.startsWith('127.') === true;
  }
  return false;
}

/** The host part of a `Host` header value (`127.0.0.1:8787`, `[::1]:8787`, `localhost`). */
function hostOfHeader(value: string): string {
  const v = value.trim();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end < 0 ? v : v.slice(0, end + 1);
  }
  const colon = v.indexOf(':');
  // More than one colon without brackets is not a valid Host header; keep it whole so it fails the check.
  return colon >= 0 && v.indexOf(':', colon + 1) < 0 ? v.slice(0, colon) : v;
}

/**
 * @param secretNearby the value sits next to a secret (`ARKIVECTOR_TOKENS`' `scope:secret`, where a reversed
 *   entry puts the secret in the scope's place): an unknown scope is then never quoted, not even in part
 */
function parseScopes(value: unknown, where: string, secretNearby = false): Set<Scope> {
  const list = typeof value === 'string' ? value.split('+') : value;
  if (!Array.isArray(list) || list.length === 0)
    throw new Error(`${where}: scopes must be a non-empty list of "read" and "write"`);
  const scopes = new Set<Scope>();
  for (const s of list) {
    if (s !== 'read' && s !== 'write') {
      // Security: the file's scopes are plain words; the environment's may be a misplaced secret.
      const shown = secretNearby ? '' : ` ${JSON.stringify(String(s).slice(0, 20))}`;
      throw new Error(
        `${where}: unknown scope${shown} (use "read" or "write"${secretNearby ? '; expected scope:secret' : ''})`,
      );
    }
    scopes.add(s);
  }
  // write implies read: a writer reads its own writes back (min_block).
  if (scopes.has('write')) scopes.add('read');
  return scopes;
}

/**
 * Parses the JSON of `--tokens FILE`: a list of `{name, sha256, scopes}`.
 * @throws Error naming the entry (never its digest) when the file is malformed
 */
export function parseTokensFile(text: string, source = 'tokens file'): TokenEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`${source}: not valid JSON`);
  }
  if (!Array.isArray(data)) throw new Error(`${source}: expected a JSON list of {name, sha256, scopes}`);
  return data.map((entry: unknown, i) => {
    const where = `${source}: entry ${i}`;
    if (typeof entry !== 'object' || entry === null)
      throw new Error(`${where}: expected an object {name, sha256, scopes}`);
    const { name, sha256, scopes } = entry as Record<string, unknown>;
    if (typeof name !== 'string' || name.length === 0) throw new Error(`${where}: name must be a non-empty string`);
    if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256))
      throw new Error(`${where} (${name}): sha256 must be 64 hex characters, the SHA-256 of the secret`);
    return { name, digest: Buffer.from(sha256, 'hex'), scopes: parseScopes(scopes, `${where} (${name})`) };
  });
}

/**
 * Parses `ARKIVECTOR_TOKENS=scope:secret,scope:secret` (scope `read`, `write` or `read+write`).
 * Entries are named `env-0`, `env-1`, … so logs can tell callers apart without the secret.
 * @throws Error naming the entry by position only
 */
export function parseTokensEnv(value: string): TokenEntry[] {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return entries.map((entry, i) => {
    const where = `ARKIVECTOR_TOKENS: entry ${i}`;
    const colon = entry.indexOf(':');
    // Security: the message never quotes the entry, which holds a secret.
    if (colon <= 0 || colon === entry.length - 1) throw new Error(`${where}: expected scope:secret`);
    const secret = entry.slice(colon + 1);
    return {
      name: `env-${i}`,
      digest: createHash('sha256').update(secret, 'utf8').digest(),
      scopes: parseScopes(entry.slice(0, colon), where, true),
    };
  });
}

/**
 * Builds the access policy from `--tokens FILE`, `ARKIVECTOR_TOKENS`, `--public-read` and the bind host.
 * @param options.tokensFile path of the JSON token list
 * @param options.tokensEnv value of ARKIVECTOR_TOKENS
 * @param options.publicRead open reads without a token
 * @param options.host the address the server binds to
 * @returns the policy createHttpApp enforces
 * @example const access = await loadAccessPolicy({ tokensFile: 'tokens.json', publicRead: false, host: '0.0.0.0' })
 */
export async function loadAccessPolicy(options: {
  tokensFile?: string;
  tokensEnv?: string;
  publicRead: boolean;
  host: string;
}): Promise<AccessPolicy> {
  const tokens: TokenEntry[] = [];
  if (options.tokensFile !== undefined)
    tokens.push(...parseTokensFile(await readFile(options.tokensFile, 'utf8'), options.tokensFile));
  if (options.tokensEnv !== undefined) tokens.push(...parseTokensEnv(options.tokensEnv));
  const seen = new Set<string>();
  for (const t of tokens) {
    const hex = t.digest.toString('hex');
    if (seen.has(hex)) throw new Error(`token ${t.name}: the same secret is configured twice`);
    seen.add(hex);
  }
  return { tokens, publicRead: options.publicRead, host: options.host, loopback: isLoopbackHost(options.host) };
}

/**
 * Refuses an exposed node nobody guards: a non-loopback bind with no tokens and no `--public-read`.
 * @throws Error with the flags that would make the bind safe
 */
export function assertSafeExposure(host: string, policy: AccessPolicy): void {
  // Security: without tokens every caller would get every scope; that is only acceptable on loopback.
  if (!isLoopbackHost(host) && policy.tokens.length === 0 && !policy.publicRead) {
    throw new Error(
      `refusing to serve on ${host} without access control: pass --tokens FILE (or ARKIVECTOR_TOKENS), --public-read, or bind to 127.0.0.1`,
    );
  }
}

/** The token whose digest matches `secret`, comparing against every token so timing says nothing. */
function matchToken(tokens: readonly TokenEntry[], secret: string): TokenEntry | undefined {
  const presented = createHash('sha256').update(secret, 'utf8').digest();
  let match: TokenEntry | undefined;
  for (const token of tokens) {
    // Security: constant-time comparison of equal-length digests; no early exit on a match.
    if (timingSafeEqual(presented, token.digest) && match === undefined) match = token;
  }
  return match;
}

const challenge = (error?: string, scope?: Scope) =>
  `Bearer realm="arkivector"${error ? `, error="${error}"` : ''}${scope ? `, scope="${scope}"` : ''}`;

/**
 * Decides whether a request may use `scope`.
 * @returns the grant (principal and scopes)
 * @throws AccessError `unauthorized` (no or bad token) or `forbidden` (missing scope, non-local Origin/Host)
 * @example authorize(policy, { authorization: 'Bearer s3cret' }, 'write')
 */
export function authorize(policy: AccessPolicy, request: AccessRequest, scope: Scope): Grant {
  // Security: a page of another origin (another port of localhost included) can send simple requests
  // without a preflight; browsers add its Origin, and no page of ours is on another origin. The MCP
  // specification asks the same of its servers (DNS rebinding).
  if (request.origin != null && !sameOrigin(request.origin, request.forwardedHost ?? request.host))
    throw new AccessError('forbidden', "cross-origin requests are refused: the Origin must be this node's own");
  const header = request.authorization ?? undefined;
  if (policy.tokens.length > 0 && header !== undefined) {
    // Security: a presented token is always checked, even on a public route, so a wrong or revoked
    // token fails loudly instead of being downgraded to anonymous access.
    const [, presented] = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header) ?? [];
    if (presented === undefined)
      throw new AccessError(
        'unauthorized',
        'the Authorization header must be "Bearer <token>"',
        challenge('invalid_request'),
      );
    const token = matchToken(policy.tokens, presented);
    if (!token) throw new AccessError('unauthorized', 'the bearer token is not valid', challenge('invalid_token'));
    // Security: scope check after authentication; write implies read (parseScopes added it).
    if (!token.scopes.has(scope))
      throw new AccessError(
        'forbidden',
        `token ${token.name} lacks the ${scope} scope`,
        challenge('insufficient_scope', scope),
      );
    return { principal: token.name, scopes: token.scopes };
  }
  // Security: --public-read opens reads only; writes still need a token or local trust.
  if (scope === 'read' && policy.publicRead) return { principal: 'anonymous', scopes: READ_ONLY };
  // Security: --public-read turns local trust off for writes (docs/access.md), and a proxied request is
  // never local: behind a reverse proxy on loopback every remote caller would otherwise get every scope.
  const localTrust = policy.loopback && policy.tokens.length === 0 && !(scope === 'write' && policy.publicRead);
  if (localTrust && request.forwarded === true)
    throw new AccessError(
      'forbidden',
      'requests through a proxy (Forwarded, X-Forwarded-*, X-Real-IP, Via) get no local trust; configure tokens',
    );
  if (localTrust) {
    // Security: trust-local mode. A loopback bind only accepts local connections, but a browser on this
    // machine can be steered here by DNS rebinding: the Host then names the attacker's domain (and the
    // Origin, checked above, must be the Host's).
    if (request.host != null && !isLoopbackHost(hostOfHeader(request.host))) {
      throw new AccessError('forbidden', 'the Host header must name a loopback address on a loopback-bound node');
    }
    return { principal: 'local', scopes: ALL_SCOPES };
  }
  throw new AccessError('unauthorized', `the ${scope} scope needs a bearer token`, challenge());
}
