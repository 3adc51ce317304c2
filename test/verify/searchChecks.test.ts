// Completeness of a search against the exact ranking of the chain's entities: an exact answer must be the
// exact top k (never under-filled, boundary ties allowed); an HNSW answer's recall is measured and reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Winner } from '../../src/verify/collectionAt.ts';
import { completenessCheck, type ShownResult } from '../../src/verify/searchChecks.ts';

/** n entities on a line at distances 1…n (l2) from the query at the origin, some at the same distance. */
function line(distances: number[]): Winner[] {
  return distances.map((d, i) => {
    const key = `0x${i.toString(16).padStart(64, '0')}`;
    return {
      entity: { key, owner: '0x0', expiresAt: '100' },
      record: { id: `e${i}`, key, vector: Float32Array.of(d, 0) },
    } as unknown as Winner;
  });
}

const shown = (w: Winner, d: number, i: number): ShownResult => ({
  key: w.entity.key,
  id: w.record.id,
  distance: d,
  score: 1 / (1 + d),
  subject: `result ${i + 1}`,
});

const exactTop = (winners: Winner[], k: number) =>
  winners
    .map((w) => ({ w, d: w.record.vector[0] as number }))
    .sort((a, b) => a.d - b.d || (a.w.entity.key < b.w.entity.key ? -1 : 1))
    .slice(0, k);

test('an exact answer that is the top k verifies; one missing a closer entity, or short of k, is refuted', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 30 }),
      fc.integer({ min: 1, max: 10 }),
      fc.nat(),
      (distances, k, pick) => {
        const passing = line(distances);
        const top = exactTop(passing, k);
        const check = (results: ShownResult[], searchMode = 'exact') =>
          completenessCheck({ results, searchMode, k, passing, metric: 'l2', query: [0, 0] });
        const honest = top.map(({ w, d }, i) => shown(w, d, i));
        assert.equal(check(honest).verdict, 'verified');
        // Dropping one result under-fills k.
        const dropped = honest.filter((_, i) => i !== pick % honest.length);
        assert.equal(check(dropped).verdict, 'refuted');
        // Replacing one by an entity outside the top k is refuted unless it ties at the k-th distance.
        const outside = exactTop(passing, passing.length).slice(k);
        const replaced = outside[pick % Math.max(1, outside.length)];
        const victim = top[pick % top.length];
        if (replaced && victim) {
          const swapped = top
            .filter((t) => t !== victim)
            .concat(replaced)
            .map(({ w, d }, i) => shown(w, d, i));
          const kth = top.at(-1)?.d;
          assert.equal(check(swapped).verdict, victim.d === kth ? 'verified' : 'refuted');
          // The same answer from an HNSW walk is its recall, measured.
          const hnsw = check(swapped, 'hnsw');
          assert.equal(hnsw.check, 'recall');
          assert.equal(hnsw.verdict, 'verified');
          assert.equal(hnsw.detail?.recall, victim.d === kth ? 1 : (top.length - 1) / top.length);
        }
      },
    ),
    { numRuns: 200 },
  );
});
