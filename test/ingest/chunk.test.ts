// Chunking: size bound, overlap, whole words, headings, CJK at sentence punctuation, no split surrogate
// pairs; properties over random text with fast-check.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { chunkText, contentSha, INGEST_CHUNK_MAX_CHARS } from '../../src/ingest/chunk.ts';
import { defined } from '../helpers/defined.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const word = fc.stringMatching(/^[A-Za-z]{1,12}$/);
const paragraph = fc.array(word, { minLength: 1, maxLength: 120 }).map((ws) => `${ws.join(' ')}.`);
const latinDoc = fc
  .array(
    fc.oneof(
      paragraph,
      word.map((w) => `## ${w}`),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((ps) => ps.join('\n\n'));

describe('chunkText', () => {
  test('every chunk is within the bound, made of whole words, and every word is kept', () => {
    fc.assert(
      fc.property(latinDoc, fc.integer({ min: 40, max: 400 }), (doc, max) => {
        const chunks = chunkText(doc, { maxChars: max, overlapChars: 30 });
        const inputWords = new Set(doc.split(/\s+/).filter(Boolean));
        const seen = new Set<string>();
        for (const [i, c] of chunks.entries()) {
          assert.equal(c.index, i);
          assert.ok(c.text.length <= max, `chunk of ${c.text.length} > ${max}`);
          assert.equal(c.text, c.text.trim());
          assert.equal(c.sha, contentSha(c.text));
          for (const w of c.text.split(/\s+/).filter(Boolean)) {
            assert.ok(inputWords.has(w), `${JSON.stringify(w)} is not a word of the input`);
            seen.add(w);
          }
        }
        for (const w of inputWords) assert.ok(seen.has(w), `${JSON.stringify(w)} was lost`);
      }),
      { numRuns: 200 },
    );
  });

  test('a heading starts a new chunk; short paragraphs of a section share one', () => {
    const chunks = chunkText('# One\n\nalpha.\n\nbeta.\n\n## Two\n\ngamma.');
    assert.deepEqual(
      chunks.map((c) => c.text),
      ['# One\n\nalpha.\n\nbeta.', '## Two\n\ngamma.'],
    );
    // A # inside a fenced code block is code, not a heading.
    assert.equal(chunkText('# A\n\n```sh\n# comment\n```').length, 1);
  });

  test('a heading directly followed by another is no chunk of its own: no chunk is headings alone', () => {
    // What an HTML page's <h1> followed by an <h2> extracts to.
    assert.deepEqual(
      chunkText('# Guide\n\n## Install\n\nRun it.\n\n## Use\n\nCall it.').map((c) => c.text),
      ['# Guide\n\n## Install\n\nRun it.', '## Use\n\nCall it.'],
    );
    // Headings at the end join the previous section; a document of headings only is still one chunk.
    assert.deepEqual(
      chunkText('Intro.\n\n## End').map((c) => c.text),
      ['Intro.\n\n## End'],
    );
    assert.deepEqual(
      chunkText('# Title').map((c) => c.text),
      ['# Title'],
    );
    const headingOnly = (text: string) => text.split(/\n\n/).every((p) => /^#{1,6} /.test(p));
    // fast-check's counterexample (seed 141378934): headings ending the document that do not fit its last
    // chunk go into a final chunk with the end of the text before them.
    const ending = `${'Lorem ipsum dolor sit amet consectetur. '.repeat(5)}\n\n## aAAaAAAAAAAA\n\n## aaaaAAaAA\n\n## AaaAAA`;
    const ended = chunkText(ending, { maxChars: 230, overlapChars: 30 }).map((c) => c.text);
    assert.ok(ended.length > 1, 'the headings do not fit the first chunk');
    for (const text of ended) {
      assert.ok(!headingOnly(text), `a chunk of headings only: ${JSON.stringify(text)}`);
      assert.ok(text.length <= 230);
    }
    assert.match(ended.at(-1) ?? '', /amet consectetur\.\n\n## aAAaAAAAAAAA\n\n## aaaaAAaAA\n\n## AaaAAA$/);
    fc.assert(
      // From 260 characters up the headings a section can start with (at most 12 of 15) always leave room.
      fc.property(latinDoc, fc.integer({ min: 260, max: 600 }), (doc, max) => {
        if (headingOnly(doc)) return;
        for (const c of chunkText(doc, { maxChars: max, overlapChars: 30 }))
          assert.ok(!headingOnly(c.text), `a chunk of headings only: ${JSON.stringify(c.text)}`);
      }),
      { numRuns: 200 },
    );
  });

  test('consecutive chunks of a long section overlap, starting at a word boundary', () => {
    const doc = Array.from({ length: 60 }, (_, i) => `Sentence ${i} is about ferns.`).join(' ');
    const chunks = chunkText(doc, { maxChars: 200, overlapChars: 40 });
    assert.ok(chunks.length > 3);
    for (let i = 1; i < chunks.length; i++) {
      const head = defined(chunks[i], 'chunks[i]').text.slice(0, 15);
      assert.ok(
        defined(chunks[i - 1], 'chunks[i - 1]').text.includes(head),
        `chunk ${i} does not start with the end of chunk ${i - 1}`,
      );
    }
  });

  test('Chinese and Japanese without spaces split after 。！？ and stay within the bound', () => {
    const zh = '光合作用是植物利用光能把二氧化碳和水变成糖的过程。'.repeat(20);
    const ja = '東京は日本の首都です！今日はとても良い天気ですね？'.repeat(20);
    for (const doc of [zh, ja]) {
      const chunks = chunkText(doc, { maxChars: 120, overlapChars: 0 });
      assert.ok(chunks.length > 3);
      for (const c of chunks) {
        assert.ok(c.text.length <= 120);
        assert.match(c.text, /[。！？]$/, `${c.text} does not end at sentence punctuation`);
      }
      assert.equal(chunks.map((c) => c.text).join(''), doc);
    }
  });

  test('a run with no boundary at all is cut between characters, never inside a surrogate pair', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('𠀋', '字', '😀', 'か'), { minLength: 1, maxLength: 600 }), (chars) => {
        const doc = chars.join('');
        const chunks = chunkText(doc, { maxChars: 50, overlapChars: 10 });
        for (const c of chunks) {
          assert.ok(c.text.length <= 50);
          assert.doesNotMatch(c.text, LONE_SURROGATE, 'a surrogate pair was split');
        }
      }),
      { numRuns: 200 },
    );
  });

  test('the default bound holds on a long real-looking document, and chunking is deterministic', () => {
    const doc = Array.from(
      { length: 300 },
      (_, i) => `Paragraph ${i}: ${'lorem ipsum dolor '.repeat(i % 40)}end.`,
    ).join('\n\n');
    const a = chunkText(doc);
    assert.ok(a.every((c) => c.text.length <= INGEST_CHUNK_MAX_CHARS));
    assert.deepEqual(chunkText(doc), a);
  });
});
