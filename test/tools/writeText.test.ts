// The text block of a write's answer says what happened: with wait "none" the transaction is only sent
// (block_number null), so nothing may read as written, created or deleted yet; once mined it names the block.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renderCreateCollection, renderDelete, renderUpsert } from '../../tools/index.ts';

const key = `0x${'1'.repeat(64)}`;
const tx = `0x${'2'.repeat(64)}`;

describe('write answers as text', () => {
  test('upsert: sent (not "written sent") before it is mined, written in block N after', () => {
    const results = [{ id: 'a', key, op: 'create' as const, expires_at_block: null }];
    const sent = renderUpsert({ results, tx_hashes: [tx], block_number: null });
    assert.equal(sent.split('\n')[0], `1 entity sent, not yet mined (tx ${tx})`);
    assert.doesNotMatch(sent, /written|min_block/);
    const mined = renderUpsert({
      results: [
        { id: 'a', key, op: 'create', expires_at_block: 'never' },
        { id: 'b', key, op: 'update', expires_at_block: 907 },
      ],
      tx_hashes: [tx],
      block_number: 7,
    });
    assert.equal(mined.split('\n')[0], `2 entities written in block 7 (tx ${tx})`);
    assert.match(mined, /min_block 7/);
    assert.match(
      mined,
      new RegExp(`- a: create ${key}, kept until deleted\n- b: update ${key}, expires at block 907\n`),
    );
    assert.match(sent, new RegExp(`- a: create ${key}$`));
  });

  test('create_collection and delete: sent, not yet mined, without claiming the effect', () => {
    const base = { name: 'notes', key, created: true, dim: 4, tx_hashes: [tx] };
    assert.equal(
      renderCreateCollection({ ...base, block_number: null }),
      `Sent collection notes (dim 4), not yet mined (tx ${tx}, key ${key}).`,
    );
    assert.match(
      renderCreateCollection({ ...base, block_number: 3 }),
      /^Created collection notes \(dim 4\) in block 3 /,
    );
    const deleted = {
      dry_run: false,
      results: [{ id: 'a', key, op: 'delete' as const }],
      tx_hashes: [tx],
      transactions: 1,
    };
    assert.equal(
      renderDelete({ ...deleted, block_number: null }),
      `delete of 1 entity sent in 1 transaction, not yet mined\n- a ${key}`,
    );
    assert.match(renderDelete({ ...deleted, block_number: 9 }), /^1 entity deleted in 1 transaction, last in block 9/);
  });
});
