// A gateway that rate-limits (`--rate-limit`, on by default off loopback) answers rate_limited with
// Retry-After; an ingest of many files is exactly the caller it is meant to slow down, not to fail.
import { setTimeout as delay } from 'node:timers/promises';
import { GatewayProblemError } from '../client/restClient.ts';

/** Attempts of one request refused with rate_limited before the refusal stands. */
export const INGEST_RATE_LIMIT_ATTEMPTS = 6;
/** Longest Retry-After honoured; a longer one fails the request at once. */
const MAX_RETRY_AFTER_S = 60;

export async function politely<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof GatewayProblemError) || error.problem.code !== 'rate_limited') throw error;
      const after = Number((error.problem as { retry_after?: unknown }).retry_after ?? 1);
      if (attempt >= INGEST_RATE_LIMIT_ATTEMPTS || !(after >= 0) || after > MAX_RETRY_AFTER_S) throw error;
      await delay(Math.max(after, 0.1) * 1000);
    }
  }
}
