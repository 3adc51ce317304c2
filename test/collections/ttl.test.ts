// Tests src/collections/codecs/ttl.ts: TTL units to blocks-to-live.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InvalidArgumentError, ttlToBlocks, type Ttl } from '../../src/collections/index.ts';

const invalid = (re: RegExp) => (err: unknown) => err instanceof InvalidArgumentError && re.test(err.message);

describe('ttlToBlocks', () => {
  test('default: block time 2 s', () => {
    assert.equal(ttlToBlocks({ seconds: 1 }), 1);
    assert.equal(ttlToBlocks({ seconds: 2 }), 1);
    assert.equal(ttlToBlocks({ seconds: 3 }), 2);
    assert.equal(ttlToBlocks({ minutes: 1 }), 30);
    assert.equal(ttlToBlocks({ hours: 1 }), 1800);
    assert.equal(ttlToBlocks({ days: 30 }), 1296000);
    assert.equal(ttlToBlocks({ blocks: 7 }), 7);
  });

  test('args: blockTimeSeconds', () => {
    assert.equal(ttlToBlocks({ seconds: 11 }, 5), 3);
    assert.equal(ttlToBlocks({ minutes: 1 }, 12), 5);
    assert.equal(ttlToBlocks({ blocks: 7 }, 12), 7);
    assert.equal(ttlToBlocks({ seconds: 1 }, 0.5), 2);
  });

  test('behavior: the fewest blocks that cover the duration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 9 }), fc.integer({ min: 1, max: 30 }), (s, bt) => {
        const b = ttlToBlocks({ seconds: s }, bt);
        assert.ok(b >= 1);
        assert.ok(b * bt >= s);
        assert.ok((b - 1) * bt < s);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 6 }), (d) => {
        assert.equal(ttlToBlocks({ days: d }), ttlToBlocks({ hours: 24 * d }));
        assert.equal(ttlToBlocks({ hours: d }), ttlToBlocks({ minutes: 60 * d }));
      }),
    );
  });

  test('error: non-positive, non-integer and malformed ttls', () => {
    for (const t of [
      { seconds: 0 },
      { days: -1 },
      { hours: 1.5 },
      { blocks: NaN },
      { minutes: Infinity },
      { days: '1' },
    ]) {
      assert.throws(() => ttlToBlocks(t as unknown as Ttl), invalid(/must be a positive integer/), JSON.stringify(t));
    }
    assert.throws(() => ttlToBlocks({} as Ttl), invalid(/exactly one/));
    assert.throws(() => ttlToBlocks({ days: 1, hours: 1 } as unknown as Ttl), invalid(/exactly one/));
    assert.throws(() => ttlToBlocks({ weeks: 1 } as unknown as Ttl), invalid(/unknown ttl unit "weeks"/));
    assert.throws(() => ttlToBlocks(null as unknown as Ttl), invalid(/object/));
    assert.throws(() => ttlToBlocks({ seconds: 1 }, 0), invalid(/block time/));
    assert.throws(() => ttlToBlocks({ days: 2 ** 50 }), invalid(/too long/));
  });
});
