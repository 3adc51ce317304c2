// The head a node expects now, from the heads it read (HeadClock): its own clock, moved by the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { HEAD_SAMPLES_MAX, HeadClock } from '../../src/chain/index.ts';

const clockAt = (fallbackBlockMs: number) => {
  const time = { now: 1_000_000 };
  return { time, clock: new HeadClock(fallbackBlockMs, () => time.now) };
};

test('just read, the estimate is the head; then whole blocks at the preset pace until a pace is measured', () => {
  const { time, clock } = clockAt(2_000);
  clock.see(10);
  assert.equal(clock.estimate(10, time.now), 10);
  time.now += 1_999;
  assert.equal(clock.estimate(10, time.now - 1_999), 10);
  time.now += 4_001;
  assert.equal(clock.estimate(10, time.now - 6_000), 13);
});

test('the pace is measured from the heads read: 100 ms blocks read 5 s apart', () => {
  const { time, clock } = clockAt(2_000);
  for (let i = 0; i < 4; i++) {
    clock.see(100 + 50 * i);
    time.now += 5_000;
  }
  assert.equal(clock.blockMs(), 100);
  // 5 s after the last read (block 250): 50 blocks on.
  assert.equal(clock.estimate(250, time.now - 5_000), 300);
});

test('an idle chain read twice is at least that slow; a lower head starts the measure over', () => {
  const { time, clock } = clockAt(2_000);
  clock.see(7);
  time.now += 30_000;
  clock.see(7);
  assert.equal(clock.blockMs(), 30_000);
  assert.equal(clock.estimate(7, time.now), 7);
  clock.see(5);
  assert.equal(clock.blockMs(), 2_000, 'one read: the preset');
});

test('never below the head given, and never more than the reads kept', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ gap: fc.integer({ min: 0, max: 60_000 }), blocks: fc.integer({ min: -3, max: 40 }) }), {
        minLength: 1,
        maxLength: 40,
      }),
      fc.integer({ min: 0, max: 600_000 }),
      (reads, after) => {
        const { time, clock } = clockAt(2_000);
        let head = 1_000;
        for (const read of reads) {
          time.now += read.gap;
          head = Math.max(0, head + read.blocks);
          clock.see(head);
        }
        const seenAt = time.now;
        time.now += after;
        const estimate = clock.estimate(head, seenAt);
        assert.ok(estimate >= head);
        assert.ok(Number.isInteger(estimate));
        assert.ok(clock.blockMs() > 0);
        assert.ok(reads.length <= HEAD_SAMPLES_MAX || clock.latest?.head === head);
      },
    ),
  );
});
