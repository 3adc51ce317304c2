// The bounds on one registry transaction a DB-chain follower decodes (TX_CALLDATA_MAX_BYTES,
// TX_OPERATIONS_MAX). They are read from the transaction alone, so a transaction the chain really holds over
// either is skipped and counted the same on every node, never decoded; an RPC that pads a transaction past a
// bound is caught by the transaction's hash and refused (the read is retried), never skipped. Our writer
// refuses what followers would skip before signing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  ChainDataError,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
} from '../../../src/chain/index.ts';
import { emptyBatch } from '../../../src/chain/operations.ts';
import { encodeExecute } from '../../../src/chain/dbchain/calldata.ts';
import { REGISTRY_ADDRESS } from '../../../src/chain/dbchain/abi.ts';
import { overBounds } from '../../../src/chain/dbchain/txBounds.ts';
import { transactionHashMatches } from '../../../src/chain/dbchain/txHash.ts';
import { InvalidArgumentError, TX_CALLDATA_MAX_BYTES, TX_OPERATIONS_MAX } from '../../../src/collections/index.ts';
import type { Devnet } from '../../../src/devnet/index.ts';
import { defined } from '../../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../../helpers/devnet.ts';
import { execute, nextSalt, op } from '../../helpers/dbchainRawWriter.ts';
import { devnetProxy, type RpcProxy } from '../../helpers/rpcProxy.ts';

const KEY = `0x${'11'.repeat(32)}` as Hex;
const deletes = (n: number) =>
  encodeExecute(Array.from({ length: n }, () => ({ op: 'delete' as const, entityKey: KEY })));

test('a bound is met at its value and broken one past it, read without decoding', () => {
  assert.equal(overBounds(deletes(TX_OPERATIONS_MAX)), undefined);
  assert.match(overBounds(deletes(TX_OPERATIONS_MAX + 1)) ?? '', /TX_OPERATIONS_MAX/);
  const calldata = (bytes: number) => `0x${'00'.repeat(bytes)}` as Hex;
  assert.equal(overBounds(calldata(TX_CALLDATA_MAX_BYTES)), undefined);
  assert.match(overBounds(calldata(TX_CALLDATA_MAX_BYTES + 1)) ?? '', /TX_CALLDATA_MAX_BYTES/);
  // A count that only a non-canonical layout declares is left to the decoder, which refuses the layout.
  const shifted = `${deletes(1).slice(0, 10)}${(0x40).toString(16).padStart(64, '0')}${'f'.repeat(64)}` as Hex;
  assert.equal(overBounds(shifted), undefined);
});

describe('DB-chain source: registry transactions over the decoding bounds', () => {
  let devnet: Devnet;
  let proxy: RpcProxy;
  let pad = false;
  let entity: Hex;
  const transport = () => createHttpTransport({ url: proxy.url, attempts: 1 });

  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    [entity] = (await execute(devnet, 0, [op.create(nextSalt(), 'text/plain', new Uint8Array([1]), [])])) as [Hex];
    proxy = await devnetProxy(devnet.url, async (_req, res, _body, forward) => {
      if (!pad) return false;
      const { status, text } = await forward();
      const answers = JSON.parse(text) as { result?: { input?: Hex } | null }[] | { result?: unknown };
      for (const answer of Array.isArray(answers) ? answers : [answers]) {
        const tx = answer.result as { input?: Hex } | null | undefined;
        if (tx?.input) tx.input = `${tx.input}${'00'.repeat(TX_CALLDATA_MAX_BYTES)}` as Hex;
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
      return true;
    });
  });

  after(async () => {
    await proxy?.close();
    await devnet?.stop();
  });

  async function readBlock(block: number) {
    const t = transport();
    try {
      return defined((await createDbChainSource(t).blocks(block, block))[0], `block ${block}`);
    } finally {
      await t.close();
    }
  }

  test('a transaction of TX_OPERATIONS_MAX + 1 operations the chain holds is skipped and counted', async () => {
    // Extends of one entity to one expiry: each succeeds and logs, at the schedule's cheapest cost.
    const extend = op.extend(entity, 0n, 2_000_000n);
    await execute(
      devnet,
      0,
      Array.from({ length: TX_OPERATIONS_MAX + 1 }, () => extend),
      55_000_000n,
    );
    const block = await readBlock(devnet.headNumber);
    assert.deepEqual(block.ops, []);
    assert.equal(block.anomalies.length, 1);
    assert.match(
      defined(block.anomalies[0], 'anomaly'),
      /skipped: it declares 4097 operations, over TX_OPERATIONS_MAX/,
    );
  });

  test('a transaction over TX_CALLDATA_MAX_BYTES the chain holds is skipped and counted', async () => {
    const payload = new Uint8Array(128 * 1024 - 1024);
    const creates = Array.from({ length: 9 }, () => op.create(nextSalt(), 'text/plain', payload, []));
    await execute(devnet, 0, creates, 55_000_000n);
    const block = await readBlock(devnet.headNumber);
    assert.deepEqual(block.ops, []);
    assert.match(
      defined(block.anomalies[0], 'anomaly'),
      /skipped: its calldata is \d+ bytes, over TX_CALLDATA_MAX_BYTES/,
    );
  });

  test('an RPC that pads a transaction past a bound is refused by its hash, not skipped', async () => {
    await execute(devnet, 0, [op.extend(entity, 0n, 3_000_000n)]);
    const block = devnet.headNumber;
    assert.equal((await readBlock(block)).ops.length, 1, 'answered honestly, the extend is read');
    pad = true;
    try {
      await assert.rejects(readBlock(block), (error: Error) => {
        assert.ok(error instanceof ChainDataError, String(error));
        assert.match(error.message, /not the transaction its hash names/);
        return true;
      });
    } finally {
      pad = false;
    }
  });

  test('a genuine answer of each envelope type hashes to its hash; a changed one does not', async () => {
    const account = privateKeyToAccount(defined(devnet.accounts[1], 'dev account 1').privateKey);
    const data = encodeExecute([{ op: 'delete', entityKey: KEY }]);
    const fees = { legacy: { gasPrice: 3_000_000_000n }, eip2930: { gasPrice: 3_000_000_000n, accessList: [] } };
    const eip1559 = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
    for (const type of ['legacy', 'eip2930', 'eip1559'] as const) {
      const nonce = await rpcResult<Hex>(devnet, 'eth_getTransactionCount', [account.address, 'pending']);
      const raw = await account.signTransaction({
        type,
        chainId: devnet.chainId,
        nonce: Number(BigInt(nonce)),
        to: REGISTRY_ADDRESS,
        data,
        gas: 1_000_000n,
        ...(type === 'eip1559' ? eip1559 : fees[type]),
      } as never);
      const hash = await rpcResult<Hex>(devnet, 'eth_sendRawTransaction', [raw]);
      const answer = await rpcResult<Record<string, unknown>>(devnet, 'eth_getTransactionByHash', [hash]);
      assert.equal(transactionHashMatches(answer, hash), true, type);
      assert.equal(transactionHashMatches({ ...answer, input: `${answer.input}00` }, hash), false, type);
    }
  });

  test('our writer refuses a batch followers would skip, before signing', async () => {
    const account = defined(devnet.accounts[0], 'dev account 0');
    const nonce = () => rpcResult<Hex>(devnet, 'eth_getTransactionCount', [account.address, 'pending']);
    const sentBefore = await nonce();
    const t = createHttpTransport({ url: devnet.url });
    try {
      const writer = createDbChainWriter({
        rpcUrl: devnet.url,
        chainId: devnet.chainId,
        privateKey: account.privateKey,
        transport: t,
      });
      const batch = { ...emptyBatch(), deletes: Array.from({ length: TX_OPERATIONS_MAX + 1 }, () => KEY) };
      await assert.rejects(writer.send(batch), (error: Error) => {
        assert.ok(error instanceof InvalidArgumentError, String(error));
        assert.match(error.message, /TX_OPERATIONS_MAX/);
        return true;
      });
    } finally {
      await t.close();
    }
    assert.equal(await nonce(), sentBefore, 'nothing was sent');
  });
});
