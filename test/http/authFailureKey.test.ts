// README "Access": failed authentications count per client address, an IPv6 address by its /64 (the block
// one subscriber is given, so a guesser cannot take a fresh address for every 10 tries), an IPv4 address
// (also as the IPv4-mapped IPv6 form a dual-stack socket reports) by itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  AUTH_FAILURES_PER_MINUTE,
  authFailureKey,
  createAuthFailureLimiter,
  RateLimitedError,
} from '../../src/http/rateLimit.ts';
import { readmeSection } from '../helpers/readme.ts';

const hextet = fc.integer({ min: 0, max: 0xffff });
const octet = fc.integer({ min: 0, max: 255 });
/** The address written out in full, and as WHATWG URL writes it (compressed, lower case). */
const spellings = (groups: number[]) => {
  const full = groups.map((g) => g.toString(16).toUpperCase()).join(':');
  return [full, new URL(`http://[${full}]/`).hostname.slice(1, -1)];
};

test('authFailureKey: an IPv6 address is keyed by its /64, however it is written', () => {
  fc.assert(
    fc.property(
      fc.array(hextet, { minLength: 8, maxLength: 8 }),
      fc.array(hextet, { minLength: 4, maxLength: 4 }),
      (a, low) => {
        // Not the IPv4-mapped block, which is keyed as IPv4 (below).
        fc.pre(!(a.slice(0, 5).every((g) => g === 0) && a[5] === 0xffff));
        const sibling = [...a.slice(0, 4), ...low];
        const keys = new Set([...spellings(a), ...spellings(sibling), `${spellings(a)[1]}%eth0`].map(authFailureKey));
        assert.equal(keys.size, 1, [...keys].join(' '));
        const other = [...a];
        other[3] = (a[3]! + 1) & 0xffff;
        assert.notEqual(authFailureKey(spellings(other)[0]!), [...keys][0], 'the next /64 is another caller');
      },
    ),
  );
});

test('authFailureKey: IPv4, and IPv4-mapped IPv6, are keyed per address', () => {
  fc.assert(
    fc.property(
      fc.array(octet, { minLength: 4, maxLength: 4 }),
      fc.array(octet, { minLength: 4, maxLength: 4 }),
      (a, b) => {
        const dotted = a.join('.');
        const mapped = [
          `::ffff:${dotted}`,
          `0:0:0:0:0:FFFF:${dotted}`,
          new URL(`http://[::ffff:${dotted}]/`).hostname.slice(1, -1),
        ];
        for (const address of [dotted, ...mapped]) assert.equal(authFailureKey(address), dotted, address);
        if (b.join('.') !== dotted) assert.notEqual(authFailureKey(`::ffff:${b.join('.')}`), dotted);
      },
    ),
  );
  assert.equal(authFailureKey('unknown'), 'unknown', 'an app called in process has no address');
});

test('failed authentications: a guesser moving through its /64 stays refused; the next /64 and IPv4 do not', () => {
  const now = 0;
  const limiter = createAuthFailureLimiter(() => now);
  for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) limiter.fail(`2001:db8:0:7::${(i + 1).toString(16)}`);
  assert.throws(() => limiter.check('2001:db8:0:7:ffff:1:2:3'), RateLimitedError);
  assert.throws(() => limiter.check('2001:DB8::7:0:0:0:99'), RateLimitedError);
  assert.doesNotThrow(() => limiter.check('2001:db8:0:8::1'));
  for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) limiter.fail('::ffff:192.0.2.1');
  assert.throws(() => limiter.check('192.0.2.1'), RateLimitedError);
  assert.doesNotThrow(() => limiter.check('192.0.2.2'));
  assert.doesNotThrow(() => limiter.check('::ffff:192.0.2.2'));
});

test('README Access: the failed-authentication limit names the IPv6 /64', () => {
  assert.match(readmeSection('Access'), /An IPv6 address counts\s+by its \/64/);
});
