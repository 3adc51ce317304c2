// The keyword index's own layout: a document is a length in a column by slot and its terms' postings,
// with nothing per document besides (no document-id maps, no per-term objects for a term one document
// holds). Scores stay MiniSearch's (keyword.test.ts compares them bit for bit); here: what a document
// costs, the postings table against a Map, and snapshots written by the MiniSearch-based index (short ids
// that are not slots) loading with the same answers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { KeywordIndex, SlotCounts } from '../../src/engine/keyword.ts';
import { heapNodes } from '../helpers/heapSnapshot.ts';
import { indexScores, referenceScores } from '../helpers/keywordReference.ts';

const liveBytes = async () => (await heapNodes()).reduce((sum, n) => sum + n.selfSize, 0);

describe('KeywordIndex: layout', () => {
  test('a short document with a term of its own costs at most 200 bytes of heap beyond its text', async () => {
    const n = 4000;
    const texts = Array.from({ length: n }, (_, i) => `entity ${i}`);
    const before = await liveBytes();
    const idx = new KeywordIndex();
    for (let i = 0; i < n; i++) idx.add(i, texts[i]!);
    const after = await liveBytes();
    // The terms' own strings ("123") are part of what the index keeps; the texts were alive before.
    const perDocument = (after - before) / n;
    assert.equal(idx.size, n);
    assert.ok(perDocument <= 200, `${perDocument.toFixed(0)} bytes per document`);
  });

  test('property: SlotCounts answers like a Map of slot to count', () => {
    const op = fc.record({
      slot: fc.integer({ min: 0, max: 40 }),
      kind: fc.constantFrom('inc', 'dec', 'del'),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const counts = new SlotCounts();
        const model = new Map<number, number>();
        for (const { slot, kind } of ops) {
          const had = model.get(slot);
          if (kind === 'inc') {
            counts.add(slot);
            model.set(slot, (had ?? 0) + 1);
          } else if (kind === 'dec' && had !== undefined) {
            counts.take(slot);
            if (had > 1) model.set(slot, had - 1);
            else model.delete(slot);
          } else if (kind === 'del') {
            assert.equal(counts.delete(slot), had !== undefined);
            model.delete(slot);
          }
          assert.equal(counts.size, model.size);
          assert.equal(counts.get(slot), model.get(slot));
        }
        assert.deepEqual(new Map(counts.entries()), model);
        for (let s = 0; s <= 40; s++) assert.equal(counts.get(s), model.get(s));
      }),
      { numRuns: 300 },
    );
  });
});

test('KeywordIndex: adding to a slot that holds a document replaces it', () => {
  const text = fc.array(fc.constantFrom('cat', 'dog', 'fox', '7', '東京都'), { minLength: 1, maxLength: 4 });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), text), { maxLength: 30 }), (adds) => {
      const idx = new KeywordIndex();
      const docs = new Map<number, string>();
      for (const [slot, words] of adds) {
        idx.add(slot, words.join(' '));
        docs.set(slot, words.join(' '));
      }
      assert.equal(idx.size, docs.size);
      for (const q of ['cat', 'dog fox', '7', '東京'])
        assert.deepEqual(indexScores(idx, q), docs.size === 0 ? new Map() : referenceScores(docs, q), q);
    }),
    { numRuns: 100 },
  );
});

describe('KeywordIndex: snapshots of the MiniSearch-based index', () => {
  // Written by the former index after adds, removes and re-adds: its short ids 10–12 stand for slots 1, 4, 11.
  const fixture = JSON.parse(
    readFileSync(new URL('./fixtures/keyword-minisearch-ids.json', import.meta.url), 'utf8'),
  ) as { documents: Record<string, string>; index: unknown };
  const docs = new Map(Object.entries(fixture.documents).map(([slot, text]) => [Number(slot), text]));
  const queries = ['cat', 'doc 13', 'fox', '東京', 'entity 3', 'dog cat fox', 'ケース', 'refund'];

  test('load with the answers a stock MiniSearch gives over the same documents', () => {
    const idx = KeywordIndex.fromJSON(JSON.stringify(fixture.index));
    assert.equal(idx.size, docs.size);
    assert.equal(idx.dirty, false);
    for (const q of queries) assert.deepEqual(indexScores(idx, q), referenceScores(docs, q), q);
  });

  test('keep taking changes after the load, and write a snapshot that loads the same', () => {
    const idx = KeywordIndex.fromJSON(JSON.stringify(fixture.index));
    const live = new Map(docs);
    for (const slot of [1, 11]) {
      idx.remove(slot, live.get(slot)!);
      live.delete(slot);
    }
    idx.add(12, 'cat on a doc');
    live.set(12, 'cat on a doc');
    const again = KeywordIndex.fromJSON(JSON.stringify(idx.toJSON()));
    for (const q of queries) {
      assert.deepEqual(indexScores(idx, q), referenceScores(live, q), q);
      assert.deepEqual(indexScores(again, q), referenceScores(live, q), `${q} (reloaded)`);
    }
  });
});
