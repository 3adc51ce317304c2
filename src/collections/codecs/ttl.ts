// TTL of schema v1 (ARCHITECTURE.md §8.2): `{seconds|minutes|hours|days|blocks: n}` → blocks-to-live.
// Used by the definition codec (`default_ttl`) and by upsert/extend to compute an entity's lifetime.

import { InvalidArgumentError } from '../errors.ts';
import { BLOCK_TIME_SECONDS } from '../limits.ts';

/** The units a TTL may be written in. */
export const TTL_UNITS = ['seconds', 'minutes', 'hours', 'days', 'blocks'] as const;
export type TtlUnit = (typeof TTL_UNITS)[number];

/** A TTL: exactly one unit with a positive integer. */
export type Ttl = { seconds: number } | { minutes: number } | { hours: number } | { days: number } | { blocks: number };

const SECONDS_PER: Record<Exclude<TtlUnit, 'blocks'>, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };

/**
 * Converts a TTL into a number of blocks: `ceil(seconds / blockTime)`, at least 1; `blocks` passes through.
 * @param ttl one-key object, positive integer value
 * @param blockTimeSeconds the chain's block time (2 on Arkiv v1)
 * @returns blocks-to-live, a positive safe integer
 * @throws InvalidArgumentError for zero, negative, fractional, several or unknown units, or a result past 2^53−1
 * @example ttlToBlocks({ minutes: 1 }) // 30
 */
export function ttlToBlocks(ttl: Ttl, blockTimeSeconds: number = BLOCK_TIME_SECONDS): number {
  if (!(typeof blockTimeSeconds === 'number' && Number.isFinite(blockTimeSeconds) && blockTimeSeconds > 0)) {
    throw new InvalidArgumentError(`block time must be a positive number of seconds, not ${blockTimeSeconds}`);
  }
  if (typeof ttl !== 'object' || ttl === null) throw new InvalidArgumentError('ttl must be an object');
  const keys = Object.keys(ttl);
  if (keys.length !== 1)
    throw new InvalidArgumentError(`ttl must have exactly one of ${TTL_UNITS.join(', ')}, not ${keys.length} keys`);
  const unit = keys[0] as TtlUnit;
  if (!(TTL_UNITS as readonly string[]).includes(unit))
    throw new InvalidArgumentError(`unknown ttl unit ${JSON.stringify(unit)}`);
  const n = (ttl as Record<string, unknown>)[unit];
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError(`ttl ${unit} must be a positive integer, not ${String(n)}`);
  }
  if (unit === 'blocks') return n;
  const seconds = n * SECONDS_PER[unit];
  if (!Number.isSafeInteger(seconds)) throw new InvalidArgumentError(`ttl of ${n} ${unit} is too long`);
  const blocks = Math.max(1, Math.ceil(seconds / blockTimeSeconds));
  if (!Number.isSafeInteger(blocks)) throw new InvalidArgumentError(`ttl of ${n} ${unit} is too long`);
  return blocks;
}
