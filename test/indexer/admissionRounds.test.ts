// The shares of the definition caps: within both caps, no creator squats the places a newcomer's first
// definition needs, and the prediction for a creator's next definition (checked before signing) agrees
// with the admission that follows once it is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Address, Hex } from 'viem';
import { admitDefinitions, refusalOfNext, type Contender } from '../../indexer/admissionRounds.ts';

const creator = (i: number) => `0x${i.toString(16).padStart(40, '0')}` as Address;
const key = (i: number) => `0x${i.toString(16).padStart(64, '0')}` as Hex;
const contenders = fc
  .array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 })
  .map((creators) => creators.map((c, i): Contender => ({ key: key(i), creator: creator(c) })));
const caps = fc.record({ perCreator: fc.integer({ min: 1, max: 6 }), total: fc.integer({ min: 1, max: 20 }) });

test('admission: within both caps, and a creator with fewer admitted is never refused for the total while one with more is in', () => {
  fc.assert(
    fc.property(contenders, caps, (list, cap) => {
      const { admitted, refused } = admitDefinitions(list, cap);
      assert.ok(admitted.size <= cap.total);
      assert.equal(admitted.size + refused.size, list.length);
      const per = new Map<Address, number>();
      for (const c of list) if (admitted.has(c.key)) per.set(c.creator, (per.get(c.creator) ?? 0) + 1);
      for (const n of per.values()) assert.ok(n <= cap.perCreator);
      const most = Math.max(0, ...per.values());
      for (const c of list)
        if (refused.get(c.key)?.reason === 'total_cap')
          assert.ok((per.get(c.creator) ?? 0) >= most - 1, 'refused for the total only once shares are level');
    }),
  );
});

test("admission: the prediction for a creator's next definition matches its admission once written", () => {
  fc.assert(
    fc.property(contenders, caps, fc.integer({ min: 0, max: 6 }), (list, cap, who) => {
      const { created } = admitDefinitions(list, cap);
      const next: Contender = { key: key(10_000), creator: creator(who) };
      const after = admitDefinitions([...list, next], cap);
      assert.deepEqual(refusalOfNext(created, next.creator, cap), after.refused.get(next.key));
    }),
  );
});

test('admission: one key filling the total gives way to a newcomer', () => {
  const squatter = Array.from({ length: 5 }, (_, i): Contender => ({ key: key(i), creator: creator(1) }));
  const newcomer: Contender = { key: key(99), creator: creator(2) };
  const { admitted } = admitDefinitions([...squatter, newcomer], { perCreator: 5, total: 5 });
  assert.ok(admitted.has(newcomer.key));
  assert.ok(!admitted.has(key(4)), "the squatter's latest gives way");
});
