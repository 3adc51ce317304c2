// The public surface of indexer/ is chosen by hand: adding or removing an export must change this list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as indexer from '../../indexer/index.ts';

test('indexer exports', () => {
  assert.deepEqual(Object.keys(indexer).sort(), [
    'ChainIndexer',
    'INDEXER_DEFAULTS',
    'SYNC_STATES',
    'clearProgressLine',
    'logProgress',
    'silentProgress',
    'ttyProgress',
  ]);
});
