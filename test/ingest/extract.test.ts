// Text extraction per format: a hand-written PDF through pdfjs-dist, HTML through html-to-text (headings
// kept as Markdown headings so the chunker splits there), and the skips: binaries, invalid UTF-8, broken
// PDFs, unknown extensions and unreadable files, each with a one-line reason.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extractBytes, extractFile, formatOf } from '../../src/ingest/extract.ts';
import { minimalPdf } from './minimalPdf.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('extract', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-extract-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a PDF yields the text of its content stream, one line per text line', async () => {
    const result = await extractBytes(minimalPdf(['Photosynthesis turns light into sugar.', 'Second (line).']), 'pdf');
    assert.deepEqual(result, {
      ok: true,
      format: 'pdf',
      text: 'Photosynthesis turns light into sugar.\nSecond (line).',
    });
  });

  test('HTML: text without markup, scripts, styles or link targets; headings become # lines', async () => {
    const html =
      '<html><head><style>p{color:red}</style><script>alert(1)</script></head><body>' +
      '<h2>Ferns</h2><p>Ferns reproduce by <a href="https://x.example/spores">spores</a>.</p><img src="a.png"></body></html>';
    const result = await extractBytes(utf8(html), 'html');
    assert.equal(result.ok, true);
    const text = (result as { text: string }).text;
    assert.equal(text, '## Ferns\n\nFerns reproduce by spores.');
  });

  test('Markdown and text pass through; a UTF-8 BOM is dropped', async () => {
    assert.deepEqual(await extractBytes(utf8('\uFEFF# T\n\nbody'), 'markdown'), {
      ok: true,
      format: 'markdown',
      text: '# T\n\nbody',
    });
  });

  test('skips binaries, invalid UTF-8, broken PDFs, unknown kinds and unreadable files with a reason', async () => {
    const binary = await extractBytes(new Uint8Array([0x68, 0x69, 0, 0x01]), 'text');
    assert.deepEqual(binary, { ok: false, reason: 'binary or not UTF-8' });
    assert.deepEqual(await extractBytes(new Uint8Array([0xc3, 0x28]), 'markdown'), {
      ok: false,
      reason: 'binary or not UTF-8',
    });
    const broken = await extractBytes(utf8('%PDF-1.4 nothing else'), 'pdf');
    assert.equal(broken.ok, false);
    assert.match((broken as { reason: string }).reason, /^cannot read as pdf: .+/);
    assert.doesNotMatch((broken as { reason: string }).reason, /\n/);

    await writeFile(join(dir, 'photo.png'), new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    const png = await extractFile(join(dir, 'photo.png'));
    assert.deepEqual(png, { ok: false, reason: 'not a text, Markdown, HTML or PDF file (.png)' });
    assert.equal(formatOf('A/B.HTM'), 'html');

    if (process.getuid?.() !== 0) {
      await writeFile(join(dir, 'secret.md'), 'x');
      await chmod(join(dir, 'secret.md'), 0o000);
      assert.deepEqual(await extractFile(join(dir, 'secret.md')), { ok: false, reason: 'unreadable (EACCES)' });
    }
    assert.deepEqual(await extractFile(join(dir, 'gone.md')), { ok: false, reason: 'unreadable (ENOENT)' });
  });
});
