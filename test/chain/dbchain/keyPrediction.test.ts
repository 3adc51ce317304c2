// DB-chain keys at send time are a prediction (entity nonce + salt): two writers of one signer, each unaware
// of the other's transaction in the pool, predict the same nonce, and the one mined second gets the next.
// The receipt's EntityCreated logs say which keys the node minted; the writer and the service's wait
// modes answer those, not the prediction.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { createDbChainWriter, emptyBatch, type ChainWriter, type EntityBatch } from '../../../src/chain/index.ts';
import type { Devnet } from '../../../src/devnet/index.ts';
import { submit } from '../../../src/service/submit.ts';
import { defined } from '../../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../../helpers/devnet.ts';
import { startGeneration } from '../../helpers/generations.ts';

const create = (text: string): EntityBatch => ({
  ...emptyBatch(),
  creates: [
    {
      btl: 1000n,
      contentType: 'text/plain',
      payload: new TextEncoder().encode(text),
      stringAttributes: [{ key: 'note', value: text }],
      numericAttributes: [],
    },
  ],
});

describe('DB-chain writer: predicted keys against the logged ones', () => {
  let devnet: Devnet;
  let here: ChainWriter;
  let elsewhere: ChainWriter;
  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    const privateKey = defined(devnet.accounts[0], 'dev account').privateKey;
    // Two processes signing with one key: neither knows what the other sent.
    here = createDbChainWriter({ rpcUrl: devnet.url, chainId: devnet.chainId, privateKey });
    elsewhere = createDbChainWriter({ rpcUrl: devnet.url, chainId: devnet.chainId, privateKey });
  });
  after(() => devnet.stop());

  test('a create in flight elsewhere takes the predicted nonce: the receipt gives the key the node minted', async () => {
    await rpcResult(devnet, 'devnet_setAutomine', [false]);
    const first = await elsewhere.send(create('elsewhere'));
    const second = await here.send(create('here'));
    devnet.mine();
    await rpcResult(devnet, 'devnet_setAutomine', [true]);
    const [firstOutcome, secondOutcome] = await Promise.all([
      elsewhere.waitForReceipt(first.hash, 10_000),
      here.waitForReceipt(second.hash, 10_000),
    ]);
    assert.equal(firstOutcome.status, 'success');
    assert.equal(secondOutcome.status, 'success');
    const minted = defined(secondOutcome.keys?.[0], 'logged key') as Hex;
    assert.notEqual(minted, second.keys[0], 'the prediction was wrong: both writers read the same nonce');
    assert.deepEqual(firstOutcome.keys, first.keys, 'the one mined first got its prediction');
    const entity = await rpcResult<{ key: Hex; payload: Hex } | null>(devnet, 'arkiv_getEntity', [minted]);
    assert.equal(entity?.key.toLowerCase(), minted);
    assert.equal(Buffer.from(defined(entity?.payload, 'payload').slice(2), 'hex').toString(), 'here');
    assert.equal(await rpcResult(devnet, 'arkiv_getEntity', [defined(second.keys[0], 'predicted')]), null);
  });
});

test('the service: wait "receipt" answers the key the node minted, not the prediction', async () => {
  const generation = await startGeneration('dbchain');
  try {
    const { devnet, ctx } = generation;
    const privateKey = defined(devnet.accounts[0], 'dev account').privateKey;
    const elsewhere = createDbChainWriter({ rpcUrl: devnet.url, chainId: devnet.chainId, privateKey });
    await rpcResult(devnet, 'devnet_setAutomine', [false]);
    const first = await elsewhere.send(create('elsewhere'));
    let accepted!: () => void;
    const sent = new Promise<void>((resolve) => (accepted = resolve));
    const pending = submit(ctx, create('here'), 'receipt', (step) => step === 'sent' && accepted());
    await sent;
    devnet.mine();
    await rpcResult(devnet, 'devnet_setAutomine', [true]);
    const answered = await pending;
    const minted = defined((await elsewhere.waitForReceipt(first.hash, 10_000)).keys?.[0], 'first key');
    assert.equal(
      await rpcResult(devnet, 'arkiv_getEntity', [minted]).then((e) => (e as { key: Hex }).key.toLowerCase()),
      minted,
    );
    const key = defined(answered.keys[0], 'answered key');
    const entity = await rpcResult<{ payload: Hex } | null>(devnet, 'arkiv_getEntity', [key]);
    assert.equal(Buffer.from(defined(entity?.payload, 'payload').slice(2), 'hex').toString(), 'here');
  } finally {
    await generation.close();
  }
});
