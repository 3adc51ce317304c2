// A collection name that passes to another owner (DESIGN §4.1): when the first owner's definition lapses and
// a stranger's later definition takes the name, the change is visible in the Collection object, in
// /v1/status and in a log line; before the lapse the stranger's definition is only a conflict.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { ChainIndexer } from '../helpers/indexerV1.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { status } from '../../src/service/status.ts';
import type { ServiceContext } from '../../src/service/context.ts';
import { describeCollection } from '../../src/service/view.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { definitionArgs, openDefinition } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const def = openDefinition();

describe('indexer: a name passing to another owner', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  let indexer: ChainIndexer;
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];

  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url });
  });
  after(async () => {
    await indexer?.stop();
    await transport.close();
    await devnet.stop();
  });

  test('visible in the collection, in status and in a log line', async () => {
    const alice = walletClient(devnet, 0);
    const mallory = walletClient(devnet, 2);
    // alice's definition lives 10 blocks (expiresIn is in seconds, 2 s per block)
    await alice.createEntity(definitionArgs('shared', def, 20));
    await mallory.createEntity(definitionArgs('shared', { ...def, description: 'mine now' }));
    indexer = new ChainIndexer({
      transport,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
      logger: { info() {}, debug() {}, error() {}, warn: (fields, message) => warnings.push({ fields, message }) },
    });
    indexer.start();
    assert.ok(await indexer.waitForBlock(devnet.headNumber, 30_000));
    const alicesAddress = defined(devnet.accounts[0], 'devnet.accounts[0]').address.toLowerCase();
    const mallorysAddress = defined(devnet.accounts[2], 'devnet.accounts[2]').address.toLowerCase();
    const first = indexer.collections.get('shared')!;
    assert.equal(first.owner, alicesAddress);
    assert.equal(first.conflicts.length, 1);
    assert.equal(first.ownerChange, undefined);

    devnet.mine(12);
    assert.ok(await indexer.waitForBlock(devnet.headNumber, 30_000));
    const taken = indexer.collections.get('shared')!;
    assert.equal(taken.owner, mallorysAddress);
    assert.deepEqual(taken.ownerChange, { previousOwner: alicesAddress, atBlock: taken.ownerChange?.atBlock });
    assert.ok(taken.ownerChange!.atBlock > first.definitionCreatedAtBlock);

    const view = { as_of_block: indexer.asOfBlock!, sync_state: indexer.syncState, collections: indexer.collections };
    const described = describeCollection(view as never, taken as never);
    assert.deepEqual(described.owner_change, { previous_owner: alicesAddress, at_block: taken.ownerChange!.atBlock });
    assert.equal(described.description, 'mine now');

    const ctx = { indexer, chain: { chainId: devnet.chainId, rpc: 'http://127.0.0.1' } } as unknown as ServiceContext;
    const s = await status(ctx);
    assert.deepEqual(s.owner_changes, [
      {
        collection: 'shared',
        previous_owner: alicesAddress,
        owner: mallorysAddress,
        at_block: taken.ownerChange!.atBlock,
      },
    ]);
    assert.ok(
      warnings.some(
        (w) =>
          w.message === 'collection name passed to another owner' &&
          w.fields.previous_owner === alicesAddress &&
          w.fields.owner === mallorysAddress,
      ),
      'a log line names both owners',
    );
  });
});
