// DB-chain devnet lifecycle: a --state file reloads the same chain and entity state (the registry's state
// is rebuilt by replaying the blocks), a file of the other generation is refused instead of replayed under
// the wrong rules, and a forced reorg rolls the registry back with the blocks.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Hex } from 'viem';
import { body, cell, createEntity, dbchainClients, entityNonce } from '../helpers/dbchainDevnet.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';

describe('DB-chain devnet: state file and reorgs', () => {
  test('--state: the chain, entities and entity nonces come back; a v1 devnet refuses the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-dbchain-'));
    const stateFile = join(dir, 'chain.json');
    try {
      const first = await startTestDevnet({ protocol: 'dbchain', stateFile });
      const alice = dbchainClients(first);
      const { key } = await createEntity(first, alice, { attributes: body('kept', cell.i32('n', 7)) });
      first.mine(2);
      const head = await rpcResult<{ hash: Hex }>(first, 'eth_getBlockByNumber', ['latest', false]);
      const entity = await rpcResult(first, 'arkiv_getEntity', [key]);
      await first.stop();

      await assert.rejects(startTestDevnet({ stateFile }), /holds a dbchain chain, not a v1 one/);
      const second = await startTestDevnet({ protocol: 'dbchain', stateFile });
      try {
        assert.equal(
          (await rpcResult<{ hash: Hex }>(second, 'eth_getBlockByNumber', ['latest', false])).hash,
          head.hash,
        );
        assert.deepEqual(await rpcResult(second, 'arkiv_getEntity', [key]), entity);
        const owner = dbchainClients(second).account.address;
        assert.equal(await entityNonce(second, owner), 1n);
        await createEntity(second, dbchainClients(second), { attributes: body('more') });
        assert.equal(await rpcResult(second, 'arkiv_getEntityCount', []), 2);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a reorg drops the registry writes of the removed blocks; replayed, they come back', async () => {
    const devnet = await startTestDevnet({ protocol: 'dbchain' });
    try {
      const alice = dbchainClients(devnet);
      const kept = await createEntity(devnet, alice, { attributes: body('kept') });
      const dropped = await createEntity(devnet, alice, { attributes: body('dropped') });
      devnet.reorg(1);
      assert.notEqual(await rpcResult(devnet, 'arkiv_getEntity', [kept.key]), null);
      assert.equal(await rpcResult(devnet, 'arkiv_getEntity', [dropped.key]), null);
      assert.equal(await entityNonce(devnet, alice.account.address), 1n, 'the dropped create gave its nonce back');
      const again = await createEntity(devnet, alice, { attributes: body('again') });
      const replayed = devnet.reorg(1, { replay: true });
      assert.equal(replayed.replayed, 1);
      assert.notEqual(await rpcResult(devnet, 'arkiv_getEntity', [again.key]), null);
    } finally {
      await devnet.stop();
    }
  });
});
