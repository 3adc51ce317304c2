// Per-caller rate limits (README, "Errors": `rate_limited`): a token bucket per token name, or per client IP
// for anonymous and local callers, refilled continuously. Off by default on loopback, where the only
// callers are the machine's own.
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
  constructor(retryAfterSeconds: number, limitPerMinute: number) {
    super('rate_limited', `more than ${limitPerMinute} requests per minute; retry in ${retryAfterSeconds} s`, {
      meta: { retry_after: retryAfterSeconds, limit_per_minute: limitPerMinute },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
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
