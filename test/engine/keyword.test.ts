// Tests src/engine/keyword.ts (tokenizer, BM25 index, RRF) and CollectionStore.keywordSearch /
// hybridSearch: English, Chinese and Japanese text, filters, and fusion.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CollectionStore, rrf, RRF_K, tokenize } from '../../src/engine/index.ts';
import { KeywordIndex } from '../../src/engine/keyword.ts';
import { indexScores, referenceScores } from '../helpers/keywordReference.ts';
import { definition, makeRecord } from './helpers.ts';

const DIM = 4;

describe('tokenize', () => {
  test('default: words lowercased and NFKC-normalised', () => {
    assert.deepEqual(tokenize('Cats purr, DOGS bark! Ｆｕｌｌ-width café'), [
      'cats',
      'purr',
      'dogs',
      'bark',
      'full',
      'width',
      'café',
    ]);
  });
  test('behavior: CJK runs become characters plus bigrams', () => {
    assert.deepEqual(tokenize('東京都'), ['東', '京', '都', '東京', '京都']);
    assert.deepEqual(tokenize('iPhone用ケース'), ['iphone', '用', 'ケ', 'ー', 'ス', '用ケ', 'ケー', 'ース']);
    assert.deepEqual(tokenize('한국어 텍스트'), ['한국어', '텍스트']);
    assert.deepEqual(tokenize('東京都', 'query'), ['東京', '京都']);
    assert.deepEqual(tokenize('猫', 'query'), ['猫']);
  });
});

test('rrf: 1 / (60 + rank) summed over lists', () => {
  const fused = rrf([
    [3, 1],
    [1, 2],
  ]);
  assert.deepEqual(
    fused.map((f) => f.slot),
    [1, 3, 2],
  );
  assert.equal(fused[0]!.score, 1 / (RRF_K + 2) + 1 / (RRF_K + 1));
});

describe('CollectionStore: keyword and hybrid search', async () => {
  const docs = [
    'The quick brown fox jumps over the lazy dog',
    'A lazy afternoon with a lazy cat',
    'Refunds are paid by bank transfer',
    '我喜欢在北京吃烤鸭',
    '北京是中国的首都',
    '東京都に住んでいます',
    '私は猫が好きです',
    '',
  ];
  const store = new CollectionStore('kw', definition(DIM, { lang: 'str' }));
  await store.apply({
    remove: [],
    upsert: docs.map((d, i) =>
      makeRecord(i, [Math.cos(i), Math.sin(i), 1, i / 10], { lang: i >= 3 ? 'cjk' : 'en' }, { document: d }),
    ),
  });

  test('default: BM25 ranks the document with more matching terms first', () => {
    const res = store.keywordSearch({ text: 'lazy', k: 5 }).results;
    assert.deepEqual(
      res.map((r) => r.record.id),
      ['id-1', 'id-0'],
    );
    assert.ok(res[0]!.score > res[1]!.score);
  });

  test('behavior: Chinese and Japanese queries match without spaces', () => {
    assert.deepEqual(
      store
        .keywordSearch({ text: '北京', k: 5 })
        .results.map((r) => r.record.id)
        .sort(),
      ['id-3', 'id-4'],
    );
    assert.equal(store.keywordSearch({ text: '首都', k: 5 }).results[0]!.record.id, 'id-4');
    assert.equal(store.keywordSearch({ text: '東京', k: 5 }).results[0]!.record.id, 'id-5');
    assert.equal(store.keywordSearch({ text: '猫が好き', k: 5 }).results[0]!.record.id, 'id-6');
    assert.deepEqual(
      store.keywordSearch({ text: '猫', k: 5 }).results.map((r) => r.record.id),
      ['id-6'],
    );
  });

  test('args: where / filter restrict keyword results; no match gives none', () => {
    assert.deepEqual(
      store
        .keywordSearch({ text: 'lazy 北京', k: 10, where: 'lang = "cjk"' })
        .results.map((r) => r.record.id)
        .sort(),
      ['id-3', 'id-4'],
    );
    assert.deepEqual(
      store
        .keywordSearch({ text: 'lazy 北京', k: 10, filter: { eq: { lang: 'en' } } })
        .results.map((r) => r.record.id)
        .sort(),
      ['id-0', 'id-1'],
    );
    assert.equal(store.keywordSearch({ text: 'zebra', k: 10 }).results.length, 0);
    assert.throws(() => store.keywordSearch({ text: 'x', k: 1, where: 'colour = "red"' }), { code: 'invalid_filter' });
  });

  test('behavior: removed and replaced documents leave the keyword index', async () => {
    const s = new CollectionStore('kw2', definition(DIM));
    await s.apply({ remove: [], upsert: [makeRecord(1, [1, 0, 0, 0], {}, { document: 'alpha beta' })] });
    await s.apply({ remove: [], upsert: [makeRecord(2, [1, 0, 0, 0], {}, { document: 'gamma', id: 'id-1' })] });
    assert.equal(s.keywordSearch({ text: 'alpha', k: 5 }).results.length, 0);
    assert.equal(s.keywordSearch({ text: 'gamma', k: 5 }).results[0]!.record.id, 'id-1');
  });

  test('default: hybrid fuses vector and keyword ranks (RRF), with the vector distance', () => {
    // Vector nearest to record 2; keyword "lazy" favours 1 and 0.
    const q = [Math.cos(2), Math.sin(2), 1, 0.2];
    const res = store.hybridSearch({ vector: q, text: 'lazy refunds', k: 3 });
    assert.equal(res.results[0]!.record.id, 'id-2');
    assert.equal(res.results.length, 3);
    for (const r of res.results) assert.equal(typeof r.distance, 'number');
    assert.ok(res.results[0]!.score >= res.results[1]!.score);
    assert.equal(res.search_mode, 'exact');
  });
});

describe('KeywordIndex: compact postings', () => {
  // Words shared by many documents, and words only one document has (ids, numbers): the index keeps
  // the latter inline rather than in MiniSearch's two Maps per term.
  const word = fc.oneof(fc.constantFrom('doc', 'cat', 'dog', 'fox'), fc.integer({ min: 0, max: 40 }).map(String));
  const text = fc.array(word, { minLength: 1, maxLength: 5 }).map((w) => w.join(' '));
  const op = fc.record({ slot: fc.integer({ min: 0, max: 12 }), text: fc.option(text, { nil: undefined }) });
  const queries = ['doc', 'cat dog', 'fox 7', '3', '12 doc', '40 39 38'];

  test('property: scores equal a stock MiniSearch over the current documents, bit for bit, after any history and a reload', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const idx = new KeywordIndex();
        const docs = new Map<number, string>();
        for (const { slot, text } of ops) {
          const old = docs.get(slot);
          if (old !== undefined) {
            idx.remove(slot, old);
            docs.delete(slot);
          }
          if (text !== undefined) {
            idx.add(slot, text);
            docs.set(slot, text);
          }
        }
        assert.equal(idx.size, docs.size);
        const loaded = KeywordIndex.fromJSON(JSON.stringify(idx.toJSON()));
        for (const q of queries) {
          const want = docs.size === 0 ? new Map() : referenceScores(docs, q);
          assert.deepEqual(indexScores(idx, q), want, q);
          assert.deepEqual(indexScores(loaded, q), want, `${q} (reloaded)`);
        }
        // The reloaded index keeps taking changes like the live one.
        for (const [slot, t] of docs) {
          loaded.remove(slot, t);
          idx.remove(slot, t);
        }
        for (const q of queries) assert.equal(indexScores(loaded, q).size + indexScores(idx, q).size, 0);
      }),
      { numRuns: 200 },
    );
  });
});
