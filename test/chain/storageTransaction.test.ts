// The writer compresses its calldata (brotli quality 9, as the SDK does) off the event loop: a large upsert
// used to hold every search on the node back for as long as the compression took.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  decodeStorageTransaction,
  emptyStorageOps,
  encodeStorageTransaction,
  encodeStorageTransactionOffThread,
  type StorageOps,
} from '../../src/chain/v1/index.ts';

/** 200 creates of 384 binary16 values each: ~150 KB that does not compress, like real vectors. */
function largeBatch(): StorageOps {
  const ops = emptyStorageOps();
  for (let i = 0; i < 200; i++)
    ops.creates.push({
      btl: 1000n,
      contentType: 'application/octet-stream',
      payload: new Uint8Array(randomBytes(768)),
      stringAttributes: [{ key: 'arkivector_id', value: `v${i}` }],
      numericAttributes: [{ key: 'rank', value: BigInt(i) }],
    });
  return ops;
}

test('storage transaction: the off-thread encoder gives the same bytes as the synchronous one', async () => {
  const ops = largeBatch();
  const offThread = await encodeStorageTransactionOffThread(ops);
  assert.deepEqual(Buffer.from(offThread), Buffer.from(encodeStorageTransaction(ops)));
  assert.deepEqual(decodeStorageTransaction(offThread).creates.length, 200);
});

test('storage transaction: the event loop keeps turning while a large batch is compressed', async () => {
  const ops = largeBatch();
  // Compressed on the event loop, the encoder would finish before any immediate could run.
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await encodeStorageTransactionOffThread(ops);
  done = true;
  assert.ok(turns > 0, 'no event-loop turn ran during the compression');
});
