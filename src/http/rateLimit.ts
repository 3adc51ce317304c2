// Per-caller rate limits (README, "Errors": `rate_limited`): a token bucket per token name, or per client IP
// for anonymous and local callers, refilled continuously. Off by default on loopback, where the only
// callers are the machine's own.
import { isIPv4, isIPv6 } from 'node:net';
import { ArkivectorError } from '../errors.ts';

/** Requests per minute per caller on a non-loopback bind unless `--rate-limit` says otherwise. */
export const RATE_LIMIT_DEFAULT_PER_MINUTE = 600;

/**
 * The limit when `--rate-limit` is not given: off on a loopback bind (one local user), else the default.
 * @example defaultRateLimit({ loopback: true }) // 0
 */
export const defaultRateLimit = (access: { loopback: boolean }): number =>
  access.loopback ? 0 : RATE_LIMIT_DEFAULT_PER_MINUTE;
/** Callers tracked at once; the least recently seen is forgotten beyond it (memory stays bounded). */
export const RATE_LIMIT_MAX_CALLERS = 10_000;

export class RateLimitedError extends ArkivectorError {
  override name = 'RateLimitedError';
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, limitPerMinute: number, what = 'requests') {
    super('rate_limited', `more than ${limitPerMinute} ${what} per minute; retry in ${retryAfterSeconds} s`, {
      meta: { retry_after: retryAfterSeconds, limit_per_minute: limitPerMinute },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Who a failed authentication counts against: an IPv4 address itself (an IPv4-mapped IPv6 one, as a
 * dual-stack socket reports it, as that IPv4 address), and an IPv6 address's /64, the block one subscriber
 * is given: counting per IPv6 address would let a guesser take a new one for every 10 tries.
 * @param address the peer address of the connection
 * @example authFailureKey('2001:db8::1') // '2001:db8:0:0::/64'
 * @example authFailureKey('::ffff:192.0.2.7') // '192.0.2.7'
 */
export function authFailureKey(address: string): string {
  const bare = address.split('%')[0] ?? address;
  if (isIPv4(bare) || !isIPv6(bare)) return bare;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string | undefined) =>
    part === undefined || part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const front = groups(head);
  const back = groups(tail);
  const hextets = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    const [hi = 0, lo = 0] = hextets.slice(6);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/**
 * Failed authentications (a bearer token presented and refused) one client address (an IPv6 /64,
 * authFailureKey) may make per minute; past it every request of that address carrying a token is `rate_limited` until the minute since its
 * first failure is over, whatever `--rate-limit` says. Guessing tokens then costs a minute per 10 tries.
 */
export const AUTH_FAILURES_PER_MINUTE = 10;
const AUTH_FAILURE_WINDOW_MS = 60_000;

export interface AuthFailureLimiter {
  /** @throws RateLimitedError while `address` is over its failures */
  check(address: string): void;
  /** Counts one failed authentication of `address`. */
  fail(address: string): void;
}

/**
 * @param now clock in milliseconds (tests pass their own)
 */
export function createAuthFailureLimiter(now: () => number = Date.now): AuthFailureLimiter {
  const windows = new Map<string, { failures: number; since: number }>();
  const current = (key: string) => {
    const window = windows.get(key);
    if (window && now() - window.since >= AUTH_FAILURE_WINDOW_MS) {
      windows.delete(key);
      return undefined;
    }
    return window;
  };
  return {
    check(address) {
      const window = current(authFailureKey(address));
      if (window && window.failures >= AUTH_FAILURES_PER_MINUTE) {
        const retry = Math.max(1, Math.ceil((window.since + AUTH_FAILURE_WINDOW_MS - now()) / 1000));
        throw new RateLimitedError(retry, AUTH_FAILURES_PER_MINUTE, 'failed authentications');
      }
    },
    fail(address) {
      const key = authFailureKey(address);
      const window = current(key) ?? { failures: 0, since: now() };
      window.failures++;
      // Re-inserted on every failure, so Map order is least recently failed first.
      windows.delete(key);
      windows.set(key, window);
      if (windows.size > RATE_LIMIT_MAX_CALLERS) windows.delete(windows.keys().next().value as string);
    },
  };
}

export interface RateLimiter {
  /** Takes one request from `caller`'s bucket. @throws RateLimitedError when it is empty */
  take(caller: string): void;
}

/**
 * @param perMinute requests per minute per caller (also the burst); 0 turns limiting off
 * @param now clock in milliseconds (tests pass their own)
 */
export function createRateLimiter(perMinute: number, now: () => number = Date.now): RateLimiter {
  if (perMinute <= 0) return { take() {} };
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(caller) {
      const t = now();
      const bucket = buckets.get(caller) ?? { tokens: perMinute, at: t };
      // Re-inserted on every request, so Map order is least recently seen first.
      buckets.delete(caller);
      bucket.tokens = Math.min(perMinute, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      buckets.set(caller, bucket);
      if (buckets.size > RATE_LIMIT_MAX_CALLERS) buckets.delete(buckets.keys().next().value as string);
      if (bucket.tokens < 1)
        throw new RateLimitedError(Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)), perMinute);
      bucket.tokens -= 1;
    },
  };
}
