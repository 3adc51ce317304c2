// The manual's bounds on a DB-chain registry transaction are the ones the code declares.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DECODE_INLINE_MAX_BYTES } from '../../src/chain/dbchain/decodeThread.ts';
import { TX_CALLDATA_MAX_BYTES, TX_OPERATIONS_MAX } from '../../src/collections/index.ts';
import { MANUAL } from '../helpers/readme.ts';

/** The limit cell of the limits-table row naming `constant`. */
const limitOf = (constant: string) =>
  MANUAL.split('\n')
    .find((line) => line.startsWith('|') && line.includes(`(\`${constant}\`)`))
    ?.split('|')[2]
    ?.trim();

test('the manual: the DB-chain transaction bounds it states are the declared ones', () => {
  assert.equal(limitOf('TX_CALLDATA_MAX_BYTES'), `${TX_CALLDATA_MAX_BYTES / 1024 / 1024} MiB`);
  assert.equal(limitOf('TX_OPERATIONS_MAX'), TX_OPERATIONS_MAX.toLocaleString('en-US'));
  assert.match(
    MANUAL,
    new RegExp(`over ${DECODE_INLINE_MAX_BYTES / 1024} KiB of calldata \\(\`DECODE_INLINE_MAX_BYTES\`\\)`),
  );
});
