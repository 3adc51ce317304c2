// bench:peers' equal-recall summary: the figure it prints for a system at a target recall is one of the
// points it measured (the fastest at or above the target, with its width, recall and plan), never a value
// drawn between two points, and "not reached" when no point gets there.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Row } from './peers/common.ts';
import { compareAll, formatFull, qpsAtRecall } from './peers/compare.ts';

function point(ef: number | null, recall: number, qps: number, modes?: Record<string, number>): Row {
  return {
    system: 'arkivector-native',
    n: 100,
    dim: 4,
    ef,
    selectivity: 0.01,
    recall_at_10: recall,
    qps,
    p50_ms: 1,
    p99_ms: 2,
    queries: 10,
    timed_searches: 10,
    build_s: 1,
    build_pts_per_s: 100,
    bytes_per_vector: 1,
    ...(modes === undefined ? {} : { search_modes: modes }),
  };
}

/** A sweep as bench:peers measures one: distinct widths, any recall and QPS, each width's plan a mix. */
const sweepArb = fc.uniqueArray(fc.integer({ min: 10, max: 800 }), { minLength: 1, maxLength: 12 }).chain((efs) =>
  fc.tuple(
    ...efs.map((ef) =>
      fc
        .record({
          recall: fc.integer({ min: 0, max: 1000 }).map((r) => r / 1000),
          qps: fc.double({ min: 1, max: 1e5, noNaN: true }),
          exact: fc.integer({ min: 0, max: 10 }),
        })
        .map(({ recall, qps, exact }) =>
          point(
            ef,
            recall,
            qps,
            exact === 0 ? { hnsw: 10 } : exact === 10 ? { exact: 10 } : { hnsw: 10 - exact, exact },
          ),
        ),
    ),
  ),
);
const targetArb = fc.integer({ min: 800, max: 1000 }).map((t) => t / 1000);

describe('bench:peers QPS at a target recall', () => {
  it('reports the fastest measured point at or above the target, or says none reaches it', () => {
    fc.assert(
      fc.property(sweepArb, targetArb, (points, target) => {
        const at = qpsAtRecall(points, target);
        const reaching = points.filter((p) => p.recall_at_10 >= target);
        if (reaching.length === 0) {
          assert.equal(at.qps, null);
          assert.equal(at.kind, 'not_reached');
          return;
        }
        const fastest = Math.max(...reaching.map((p) => p.qps));
        assert.equal(at.kind, 'measured');
        assert.equal(at.qps, fastest);
        const chosen = points.find((p) => p.ef === at.ef)!;
        assert.equal(chosen.qps, at.qps, 'the QPS is the one measured at the width reported');
        assert.equal(at.recall, chosen.recall_at_10);
        assert.ok(at.recall! >= target);
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on the order the points arrive in', () => {
    fc.assert(
      fc.property(sweepArb, targetArb, fc.integer(), (points, target, seed) => {
        const shuffled = [...points].sort((a, b) => ((a.ef! * 7919 + seed) % 97) - ((b.ef! * 7919 + seed) % 97));
        assert.deepEqual(qpsAtRecall(shuffled, target), qpsAtRecall(points, target));
      }),
    );
  });

  it('stands at the measured exact-plan point where the sweep changes plan (random 1 %)', () => {
    const sweep = [
      point(10, 0.827, 5107, { hnsw: 485, exact: 15 }),
      point(16, 0.879, 4042, { hnsw: 485, exact: 15 }),
      point(24, 0.918, 3203, { hnsw: 485, exact: 15 }),
      point(32, 1, 12416, { exact: 500 }),
    ];
    assert.deepEqual(qpsAtRecall(sweep, 0.95), {
      qps: 12416,
      kind: 'measured',
      ef: 32,
      recall: 1,
      plan: 'exact',
    });
  });

  it('takes a wider point when it is faster than the narrowest one above the target (clustered 10 %)', () => {
    const sweep = [
      point(10, 0.935, 1100, { exact: 440, hnsw: 60 }),
      point(16, 0.951, 1190, { exact: 440, hnsw: 60 }),
      point(24, 0.962, 1210, { exact: 440, hnsw: 60 }),
      point(40, 0.99, 1552, { exact: 500 }),
    ];
    const at = qpsAtRecall(sweep, 0.95);
    assert.equal(at.qps, 1552);
    assert.equal(at.ef, 40);
    assert.equal(at.plan, 'exact');
    assert.deepEqual(qpsAtRecall(sweep, 0.995), {
      qps: null,
      kind: 'not_reached',
      ef: null,
      recall: null,
      best_recall: 0.99,
    });
  });

  it('names a mixed plan by its shares, most used first', () => {
    const at = qpsAtRecall([point(16, 0.96, 900, { exact: 15, hnsw: 485 })], 0.95);
    assert.equal(at.plan, 'hnsw 97 % / exact 3 %');
    assert.equal(qpsAtRecall([point(16, 0.96, 900)], 0.95).plan, undefined);
  });

  it('prints every figure of the comparison as a measured point, never a bound', () => {
    fc.assert(
      fc.property(sweepArb, (points) => {
        const full = compareAll(points);
        for (const [t, at] of Object.entries(full.cases.unfiltered!['arkivector-native']!)) {
          if (at.qps === null) continue;
          const p = points.find((r) => r.ef === at.ef)!;
          assert.equal(p.qps, at.qps);
          assert.ok(p.recall_at_10 >= Number(t));
        }
        assert.doesNotMatch(formatFull(full), /≥/);
      }),
      { numRuns: 200 },
    );
  });

  it('stands a one-point scan (no width) at its measured QPS for every target its recall meets', () => {
    const full = compareAll([{ ...point(null, 1, 150), system: 'exact' }]);
    assert.deepEqual(full.cases.unfiltered!.exact!['0.99'], {
      qps: 150,
      kind: 'measured',
      ef: null,
      recall: 1,
    });
    assert.match(formatFull(full), /exact\s+150 \(scan, 1\.000\)/);
  });
});
