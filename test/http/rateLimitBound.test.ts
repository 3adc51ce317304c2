// README "Access": "At most 10,000 callers are tracked at once (the least recently seen is forgotten
// first)", for both the per-caller limit and the failed-authentication limit: memory stays bounded, a
// caller seen recently keeps its count however many others come, and only the least recently seen goes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AUTH_FAILURES_PER_MINUTE,
  createAuthFailureLimiter,
  createRateLimiter,
  RATE_LIMIT_MAX_CALLERS,
  RateLimitedError,
} from '../../src/http/rateLimit.ts';
import { readmeSection } from '../helpers/readme.ts';

test('README Access: the number of tracked callers is the declared bound', () => {
  assert.match(
    readmeSection('Access'),
    new RegExp(`At most ${RATE_LIMIT_MAX_CALLERS.toLocaleString('en-US')} callers are tracked at once`),
  );
});

test('rate limiter: past RATE_LIMIT_MAX_CALLERS the least recently seen caller is forgotten, a recent one is not', () => {
  const now = 0; // a still clock: no refill, so only forgetting can give a caller its burst back
  const limiter = createRateLimiter(1, () => now);
  const refused = (caller: string) => assert.throws(() => limiter.take(caller), RateLimitedError);
  limiter.take('old');
  limiter.take('recent');
  refused('old');
  refused('recent');
  // `old` was seen before `recent`; then enough new callers to push exactly one out.
  for (let i = 0; i < RATE_LIMIT_MAX_CALLERS - 2; i++) limiter.take(`c${i}`);
  refused('recent'); // seen again: now the most recent, so it stays tracked
  limiter.take('new'); // one past the bound
  limiter.take('old'); // forgotten: a full bucket again
  refused('recent');
});

test('failed authentications: past RATE_LIMIT_MAX_CALLERS the least recently failed address is forgotten first', () => {
  const now = 0;
  const limiter = createAuthFailureLimiter(() => now);
  for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) limiter.fail('guesser');
  assert.throws(() => limiter.check('guesser'), RateLimitedError);
  for (let i = 0; i < RATE_LIMIT_MAX_CALLERS - 1; i++) limiter.fail(`a${i}`);
  assert.throws(() => limiter.check('guesser'), RateLimitedError, 'still tracked at the bound');
  limiter.fail('one-more');
  assert.doesNotThrow(() => limiter.check('guesser'), 'the least recently failed address went first');
});
