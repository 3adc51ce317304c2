// A store keeps the planner's enumeration of a filter for as long as nothing it holds changes, so a
// filter repeated query after query (or counted, then searched) is enumerated once (plan/enumerations.ts
// AllowedMemo). These tests repeat the same filters, counted and searched, across blocks, staged blocks
// rolled back or still open, removals, slot reuse and a definition update, and check
// every answer against the filter evaluated on the records the store holds at that moment: a memo kept
// one change too long answers the old records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { AttributeValue } from '../../../src/collections/index.ts';
import { CollectionStore } from '../../../src/engine/index.ts';
import { ENUMERATIONS_KEPT } from '../../../src/engine/plan/enumerations.ts';
import { definition, makeRecord, mulberry32 } from '../helpers.ts';

const DIM = 4;
type Attrs = { band: number; topic: string };
/** The filters the steps repeat (a `where`, a JSON `filter` or both), and the same test in plain code. */
const FILTERS: [{ where?: string; filter?: unknown }, (a: Attrs) => boolean][] = [
  [{ where: 'band < 30' }, (a) => a.band < 30],
  [{ where: 'band < 30 && topic = "a"' }, (a) => a.band < 30 && a.topic === 'a'],
  [{ where: 'topic = "a" || band >= 90' }, (a) => a.topic === 'a' || a.band >= 90],
  [{ where: 'band != 5 && topic != "b"' }, (a) => a.band !== 5 && a.topic !== 'b'],
  [{ filter: { and: [{ lt: { band: 50 } }, { in: { topic: ['a', 'c'] } }] } }, (a) => a.band < 50 && a.topic !== 'b'],
  [{ where: 'band >= 20', filter: { not: { eq: { topic: 'c' } } } }, (a) => a.band >= 20 && a.topic !== 'c'],
];

function storeOf(): CollectionStore {
  const def = definition(DIM, { band: 'uint', topic: 'str' });
  return new CollectionStore('memo', { ...def, index: { m: 8, ef_construction: 32, ef_search: 10 } });
}

type Step =
  | { t: 'block'; upsert: { id: number; band: number; topic: string }[]; remove: number[] }
  | { t: 'rolledBack'; upsert: { id: number; band: number; topic: string }[] }
  | { t: 'open'; upsert: { id: number; band: number; topic: string }[] }
  | { t: 'definition' };

const entity = fc.record({
  id: fc.integer({ min: 0, max: 40 }),
  band: fc.integer({ min: 0, max: 99 }),
  topic: fc.constantFrom('a', 'b', 'c'),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('block' as const),
      upsert: fc.array(entity, { maxLength: 12 }),
      remove: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('rolledBack' as const), upsert: fc.array(entity, { maxLength: 6 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('open' as const), upsert: fc.array(entity, { maxLength: 6 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'definition' as const }) },
);

const keyOf = (id: number) => `0x${id.toString(16).padStart(64, '0')}`;

describe('the enumeration memo: a repeated filter answers the records of the moment', () => {
  test('property: every repeated filter, after every kind of change, matches the records held', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (steps, seed) => {
          const rand = mulberry32(seed);
          const store = storeOf();
          /** What the store holds, by id. */
          const held = new Map<number, Attrs>();
          const recordOf = (e: { id: number; band: number; topic: string }) =>
            makeRecord(
              e.id,
              Array.from({ length: DIM }, () => rand() * 2 - 1),
              { band: e.band, topic: e.topic } as Record<string, AttributeValue>,
              { id: String(e.id), key: keyOf(e.id) },
            );
          const check = async (when: string) => {
            for (const [filter, holds] of FILTERS) {
              const want = [...held]
                .filter(([, a]) => holds(a))
                .map(([id]) => String(id))
                .sort();
              // Twice: the second answer comes from the memo the first one left.
              for (let round = 0; round < 2; round++) {
                // A JSON filter parsed afresh each time, as a request's would be.
                const params = {
                  vector: [1, 0, 0, 0],
                  k: Math.max(1, held.size),
                  ...JSON.parse(JSON.stringify(filter)),
                };
                // A count first (round 0: it enumerates into the memo), and after the searches.
                const { vector: _, k: __, ...where } = params;
                assert.equal(store.count(where), want.length, `${when}, ${JSON.stringify(filter)}, count`);
                const got = store
                  .search(params)
                  .results.map((h) => h.record.id)
                  .sort();
                assert.deepEqual(got, want, `${when}, ${JSON.stringify(filter)}, round ${round}`);
                const pinned = await store.searchPinned(params);
                assert.ok(pinned !== undefined, 'nothing changed meanwhile');
                assert.deepEqual(
                  pinned.results.map((h) => h.record.id).sort(),
                  want,
                  `${when}, ${JSON.stringify(filter)}, pinned`,
                );
                assert.equal(store.count(where), want.length, `${when}, ${JSON.stringify(filter)}, count after`);
              }
            }
          };
          await check('empty');
          for (const [i, s] of steps.entries()) {
            if (s.t === 'block') {
              await store.apply({ remove: s.remove.map(keyOf), upsert: s.upsert.map(recordOf) });
              for (const id of s.remove) held.delete(id);
              for (const e of s.upsert) held.set(e.id, { band: e.band, topic: e.topic });
            } else if (s.t === 'rolledBack') {
              await store.prepare({ remove: [], upsert: s.upsert.map(recordOf) });
              await check(`step ${i}: staged`);
              // A newer prepare rolls the open stage back.
              const commit = await store.prepare({ remove: [], upsert: [] });
              commit();
            } else if (s.t === 'open') {
              const commit = await store.prepare({ remove: [], upsert: s.upsert.map(recordOf) });
              await check(`step ${i}: staged`);
              commit();
              for (const e of s.upsert) held.set(e.id, { band: e.band, topic: e.topic });
            } else {
              const def = store.definition;
              store.updateDefinition({ ...def, description: `step ${i}` });
            }
            await check(`step ${i}: ${s.t}`);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  test(`behavior: more filters than the memo keeps (${ENUMERATIONS_KEPT}) are each answered exactly`, async () => {
    const store = storeOf();
    const rand = mulberry32(3);
    const records = Array.from({ length: 30 }, (_, i) =>
      makeRecord(i, [rand(), rand(), rand(), rand()], { band: i, topic: 'a' }, { id: String(i), key: keyOf(i) }),
    );
    await store.apply({ remove: [], upsert: records });
    // Bounds 1 … 2 × kept, twice over: each filter is evicted before it comes round again.
    for (let round = 0; round < 2; round++) {
      for (let bound = 1; bound <= 2 * ENUMERATIONS_KEPT; bound++) {
        const got = store.search({ vector: [1, 0, 0, 0], k: 30, where: `band < ${bound}` }).results;
        assert.deepEqual(
          got.map((h) => Number(h.record.id)).sort((a, b) => a - b),
          Array.from({ length: bound }, (_, i) => i),
        );
      }
    }
  });
});
