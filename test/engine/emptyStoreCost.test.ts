// An empty collection (a definition with no vectors yet) holds no buffer sized by its dimension: anyone can
// write definitions of 4,000 dims, and each one followed costs every node a store. What a store needs per
// search (the query, the answers) is made at its first search.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DIM_MAX } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { definition } from './helpers.ts';

test('empty stores of the largest dimension hold no buffer that grows with it', () => {
  const def = definition(DIM_MAX, { topic: 'str' });
  new CollectionStore('warm', def);
  const count = 200;
  const before = process.memoryUsage().arrayBuffers;
  const stores = Array.from({ length: count }, (_, i) => new CollectionStore(`c${i}`, def));
  const perStore = (process.memoryUsage().arrayBuffers - before) / count;
  // A Float32Array of DIM_MAX is 16,000 bytes: a store holding any dim-sized buffer is far above this.
  assert.ok(perStore < 1024, `${perStore.toFixed(0)} bytes of buffers per empty store`);
  assert.equal(stores.length, count);
});
