// bench:peers' filter cases through arkivector's own store: each case's `where`, and the text that changes
// at every query (`freshWhere`, so that no memo kept per filter text helps), select exactly the ids the
// case's `allows` passes; no two calls share a text.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { benchRecord } from '../helpers/benchRecord.ts';
import { mulberry32 } from '../helpers/generators.ts';
import { FILTER_CASES, freshWhere, parseFilterCases } from './peers/filters.ts';

const definition: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  attributes: { bucket: 'i32', cluster: 'i32' },
  open: true,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
};

describe('bench:peers filter cases', () => {
  it('has random, clustered and far sets at 10 % and 1 %, every one by default', () => {
    assert.deepEqual(parseFilterCases(undefined), [
      'random-10',
      'random-1',
      'clustered-10',
      'clustered-1',
      'far-10',
      'far-1',
    ]);
    const far1 = FILTER_CASES.find((c) => c.name === 'far-1')!;
    const clustered1 = FILTER_CASES.find((c) => c.name === 'clustered-1')!;
    assert.equal(far1.where, clustered1.where);
    assert.equal(clustered1.asks, undefined);
    assert.deepEqual(
      Array.from({ length: 16 }, (_, qc) => far1.asks!(qc)),
      Array.from({ length: 16 }, (_, qc) => qc !== 0),
    );
  });

  it('gives a text of its own to every call, each selecting what the case allows', async () => {
    const n = 40;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ bucket: fc.integer({ min: 0, max: 999 }), cluster: fc.integer({ min: 0, max: 15 }) }), {
          minLength: n,
          maxLength: n,
        }),
        fc.uniqueArray(fc.nat({ max: 1_000_000 }), { minLength: 2, maxLength: 4 }),
        async (attrs, calls) => {
          const store = new CollectionStore('bench', definition);
          const rand = mulberry32(attrs[0]!.bucket);
          const vec = () => Float32Array.from({ length: 4 }, () => rand() - 0.5 + 1e-3);
          await store.apply({ remove: [], upsert: attrs.map((a, i) => benchRecord(i, vec(), a)) });
          for (const c of FILTER_CASES) {
            const want = attrs.flatMap((a, i) => (c.allows(a.bucket, a.cluster) ? [i] : []));
            const texts = calls.map((call) => freshWhere(c, call));
            assert.equal(new Set(texts).size, texts.length, `${c.name}: a text per call`);
            for (const where of [c.where, ...texts]) {
              const got = store.search({ vector: vec(), k: n, where }).results.map((r) => Number(r.record.id));
              assert.deepEqual(
                got.sort((x, y) => x - y),
                want,
                where,
              );
            }
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
