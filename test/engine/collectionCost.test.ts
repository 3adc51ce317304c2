// What a collection costs as soon as it holds a vector: its graph is sized to its content (from
// HNSW_INITIAL_CAPACITY elements, grown with it), and the native index keeps no fixed per-index tables
// (hnswlib's 65,536 label locks), so many collections of one small vector each cost a few KiB apiece, as
// the README's limits state (COLLECTION_SMALL_BYTES_MAX). Bytes are counted, not timed: the C heap by the
// addon's own accounting (glibc's mallinfo2), the JS heap in heap snapshots (live objects only), each
// averaged over many collections.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { heapByGroup, heapNodes } from '../helpers/heapSnapshot.ts';
import { nativeAddon } from '../../src/engine/hnsw/nativeAddon.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { COLLECTION_SMALL_BYTES_MAX } from '../../src/engine/limits.ts';
import { definition, makeRecord } from './helpers.ts';

const COLLECTIONS = 200;

const heapBytes = async () => {
  let bytes = 0;
  for (const group of heapByGroup(await heapNodes()).values()) bytes += group.bytes;
  return bytes;
};

describe('collection cost (native engine)', () => {
  test('a collection of one small vector costs at most COLLECTION_SMALL_BYTES_MAX, whatever its dim', async (t) => {
    const addon = nativeAddon();
    const cHeap = () => {
      const m = addon.mallocStats();
      return m.inUse + m.mmapped;
    };
    if (addon.mallocStats().heap === 0) {
      t.skip('this C library does not report its heap (mallinfo2)');
      return;
    }
    for (const dim of [1, 16]) {
      const kept: CollectionStore[] = [];
      const make = async (i: number) => {
        const store = new CollectionStore(`c${dim}-${i}`, definition(dim));
        await store.apply({
          remove: [],
          upsert: [
            makeRecord(
              0,
              Array.from({ length: dim }, (_, j) => j + i + 1),
            ),
          ],
        });
        // The store holds a block's incoming records until the next block (staging.ts).
        await store.apply({ remove: [], upsert: [] });
        kept.push(store);
      };
      await make(-1); // the first store loads the addon and compiles the code paths
      const jsBefore = await heapBytes();
      const cBefore = cHeap();
      for (let i = 0; i < COLLECTIONS; i++) await make(i);
      const c = (cHeap() - cBefore) / COLLECTIONS;
      const js = ((await heapBytes()) - jsBefore) / COLLECTIONS;
      t.diagnostic(`dim ${dim}: ${Math.round(c)} B of C heap, ${Math.round(js)} B of JS heap a collection`);
      assert.equal(kept.length, COLLECTIONS + 1);
      assert.ok(
        c + js <= COLLECTION_SMALL_BYTES_MAX,
        `dim ${dim}: ${Math.round(c)} B of C heap and ${Math.round(js)} B of JS heap a collection`,
      );
      for (const store of kept) await store.close();
    }
  });
});
