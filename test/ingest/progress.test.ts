// The progress line (TTY only) and the summary line of an ingest pass.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { progressLine, progressPrinter, summaryLine } from '../../src/ingest/progress.ts';
import type { PassSummary } from '../../src/ingest/sync.ts';

const progress = { files_total: 40, files_done: 10, chunks: 300, written: 120, deleted: 3, started_ms: 0 };

describe('ingest progress', () => {
  test('the progress line shows files, chunks, written and deleted with rates and an ETA', () => {
    assert.equal(
      progressLine(progress, 5000),
      'ingest: 10/40 files · 300 chunks · 120 written (24.0/s) · 3 deleted · 2.0 files/s · ETA 15s',
    );
  });

  test('it is drawn on a terminal only, and cleared before the summary', () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    let drawn = '';
    tty.on('data', (c: Buffer) => (drawn += c.toString()));
    const printer = progressPrinter(tty);
    printer.update({ ...progress, started_ms: Date.now() });
    printer.clear();
    const erase = '\r\u001b[K';
    assert.ok(drawn.startsWith(`${erase}ingest: 10/40 files `), JSON.stringify(drawn));
    assert.ok(drawn.endsWith(erase) && drawn.indexOf(erase, 1) === drawn.length - erase.length);

    const pipe = new PassThrough();
    let piped = '';
    pipe.on('data', (c: Buffer) => (piped += c.toString()));
    const quiet = progressPrinter(pipe);
    quiet.update(progress);
    quiet.clear();
    assert.equal(piped, '');
  });

  test('the summary line says what was done, or would be in a dry run', () => {
    const summary: PassSummary = {
      dry_run: false,
      collection: 'notes',
      files: 3,
      chunks: 9,
      created: 2,
      updated: 1,
      deleted: 4,
      unchanged: 6,
      transactions: 2,
      skipped: [{ path: '/x/a.png', reason: 'r' }],
      failed: [],
      interrupted: false,
      block_number: 12,
      duration_ms: 1500,
    };
    assert.equal(
      summaryLine(summary),
      'notes: 3 files, 9 chunks: created 2, updated 1, deleted 4, unchanged 6; 2 transactions; 1 skipped, 0 failed (1.5 s)',
    );
    assert.equal(
      summaryLine({ ...summary, dry_run: true, interrupted: true }),
      'notes: 3 files, 9 chunks: would create 2, update 1, delete 4, unchanged 6; ~2 transactions; 1 skipped, 0 failed; interrupted (1.5 s)',
    );
  });
});
