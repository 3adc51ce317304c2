// Devnet conformance: refusals and failed transactions. Stateless problems are refused at
// eth_sendRawTransaction; stateful ones fail eth_estimateGas and, when forced through, revert (status 0,
// no logs, no state change). Plus JSON-RPC envelope errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EntityMutationError, bytesToHex, type Hex } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { ARKIV_ADDRESS, emptyStorageOps, encodeStorageTransaction, type StorageOps } from '../../src/chain/v1/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { publicClient, rpc, startTestDevnet, text, walletClient } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

describe('devnet: refused and failed transactions', () => {
  let devnet: Devnet;
  let reader: ReturnType<typeof publicClient>;
  let alice: ReturnType<typeof walletClient>;
  let bob: ReturnType<typeof walletClient>;
  let key: Hex;

  before(async () => {
    devnet = await startTestDevnet();
    reader = publicClient(devnet);
    alice = walletClient(devnet, 0);
    bob = walletClient(devnet, 1);
    ({ entityKey: key } = await alice.createEntity({
      payload: text('original'),
      contentType: 'text/plain',
      attributes: [],
      expiresIn: 3600,
    }));
  });
  after(() => devnet.stop());

  /** Signs a transaction from bob with explicit gas and fees, so nothing is checked before sending. */
  async function signRaw(data: Hex, overrides: { nonce?: number; chainId?: number; gas?: bigint } = {}): Promise<Hex> {
    const account = privateKeyToAccount(defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey);
    return account.signTransaction({
      type: 'eip1559',
      chainId: overrides.chainId ?? devnet.chainId,
      nonce: overrides.nonce ?? (await reader.getTransactionCount({ address: account.address, blockTag: 'pending' })),
      to: ARKIV_ADDRESS,
      data,
      gas: overrides.gas ?? 5_000_000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
  }

  const ops = (patch: Partial<StorageOps>) => bytesToHex(encodeStorageTransaction({ ...emptyStorageOps(), ...patch }));
  const create = (patch: Partial<StorageOps['creates'][number]> = {}) => ({
    btl: 10n,
    contentType: 'text/plain',
    payload: text('x'),
    stringAttributes: [],
    numericAttributes: [],
    ...patch,
  });

  async function refusedRaw(data: Hex, pattern: RegExp) {
    const nonce = await reader.getTransactionCount({ address: bob.account.address });
    const answer = await rpc(devnet, 'eth_sendRawTransaction', [await signRaw(data)]);
    assert.equal(answer.error?.code, -32000);
    assert.match(answer.error!.message, pattern);
    assert.equal(
      await reader.getTransactionCount({ address: bob.account.address }),
      nonce,
      'a refused transaction is not mined',
    );
  }

  test('non-owner update: eth_estimateGas reports why, and the SDK throws "Transaction failed"', async () => {
    const data = ops({ updates: [{ entityKey: key, ...create({ payload: text('stolen') }) }] });
    const estimate = await rpc(devnet, 'eth_estimateGas', [{ from: bob.account.address, to: ARKIV_ADDRESS, data }]);
    assert.equal(estimate.error?.code, -32000);
    assert.match(estimate.error!.message, new RegExp(`failed to update entity ${key}: .* is not the owner`));
    await assert.rejects(
      bob.updateEntity({
        entityKey: key,
        payload: text('stolen'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 60,
      }),
      (error: Error) =>
        error instanceof EntityMutationError &&
        /^Transaction failed/.test(error.message) &&
        /not the owner/.test(error.message),
    );
    assert.equal((await reader.getEntity(key)).toText(), 'original');
  });

  test('non-owner update forced through: status 0, no logs, no state change, nonce and gas still spent', async () => {
    const nonce = await reader.getTransactionCount({ address: bob.account.address });
    const balance = await reader.getBalance({ address: bob.account.address });
    await assert.rejects(
      bob.updateEntity(
        { entityKey: key, payload: text('stolen'), contentType: 'text/plain', attributes: [], expiresIn: 60 },
        { gas: 100_000n, nonce, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n },
      ),
      /reverted\. Reason: .*not the owner/s,
    );
    const block = await reader.getBlock({ includeTransactions: true });
    const tx = defined(block.transactions[1], 'the second transaction');
    assert.equal(tx.from, bob.account.address.toLowerCase());
    const receipt = await reader.getTransactionReceipt({ hash: tx.hash });
    assert.equal(receipt.status, 'reverted');
    assert.deepEqual(receipt.logs, []);
    assert.equal((await reader.getEntity(key)).toText(), 'original');
    assert.equal(await reader.getTransactionCount({ address: bob.account.address }), nonce + 1);
    assert.equal(
      await reader.getBalance({ address: bob.account.address }),
      balance - receipt.gasUsed * receipt.effectiveGasPrice,
    );
  });

  test('atomicity: a transaction whose last op fails leaves its earlier creates undone', async () => {
    const before = await reader.getEntityCount();
    const data = ops({ creates: [create({ payload: text('never') })], deletes: [`0x${'ab'.repeat(32)}`] });
    const hash = (await rpc<Hex>(devnet, 'eth_sendRawTransaction', [await signRaw(data)])).result!;
    const receipt = await reader.getTransactionReceipt({ hash });
    assert.equal(receipt.status, 'reverted');
    assert.equal(await reader.getEntityCount(), before);
    const call = await rpc(devnet, 'eth_call', [{ from: bob.account.address, to: ARKIV_ADDRESS, data }, 'latest']);
    assert.match(call.error!.message, /failed to delete entity 0x(ab){32}: entity not found/);
  });

  test('malformed calldata: not brotli, not RLP, wrong list count are refused at send', async () => {
    await refusedRaw('0xdeadbeef', /failed to validate arkiv transaction: .*brotli/);
    await refusedRaw('0x', /failed to validate arkiv transaction: arkiv transaction data is empty/);
    const { brotliCompressSync } = await import('node:zlib');
    await refusedRaw(
      bytesToHex(brotliCompressSync(Buffer.from([0xc4, 0xc0, 0xc0, 0xc0, 0xc0]))),
      /failed to validate arkiv transaction: rlp: too few elements/,
    );
  });

  test('validation: BTL 0, empty or long contentType, bad attribute names, duplicates, > 1000 ops', async () => {
    await refusedRaw(ops({ creates: [create({ btl: 0n })] }), /create\[0\] BTL is 0/);
    await refusedRaw(ops({ creates: [create({ contentType: '' })] }), /create\[0\] contentType is empty/);
    await refusedRaw(
      ops({ creates: [create({ contentType: 'x'.repeat(129) })] }),
      /contentType is longer than 128 bytes/,
    );
    await refusedRaw(
      ops({ creates: [create({ stringAttributes: [{ key: 'bad-name', value: 'v' }] })] }),
      /invalid annotation identifier/,
    );
    await refusedRaw(
      ops({ creates: [create({ numericAttributes: [{ key: '1st', value: 1n }] })] }),
      /invalid annotation identifier/,
    );
    await refusedRaw(
      ops({
        creates: [
          create({
            stringAttributes: [
              { key: 'a', value: '1' },
              { key: 'a', value: '2' },
            ],
          }),
        ],
      }),
      /duplicate annotation key "a"/,
    );
    await refusedRaw(ops({ extends: [{ entityKey: key, numberOfBlocks: 0n }] }), /extend\[0\] number of blocks is 0/);
    await refusedRaw(
      ops({ deletes: Array.from({ length: 1001 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}` as Hex) }),
      /number of operations is greater than 1000/,
    );
  });

  test('validation: the same name may be a string and a numeric attribute, and Unicode names are allowed', async () => {
    const { entityKey: k } = await alice.createEntity({
      payload: text('both'),
      contentType: 'text/plain',
      attributes: [
        { key: 'v', value: 'x' },
        { key: 'v', value: 1 },
        { key: 'αβγ', value: 'ok' },
      ],
      expiresIn: 60,
    });
    const entity = await reader.getEntity(k);
    assert.equal(entity.attributes.length, 3);
  });

  test('pool checks: wrong chain id, nonce too low, intrinsic gas too low', async () => {
    const data = ops({ creates: [create()] });
    const wrongChain = await rpc(devnet, 'eth_sendRawTransaction', [await signRaw(data, { chainId: 1 })]);
    assert.match(wrongChain.error!.message, /invalid chain id/);
    const low = await rpc(devnet, 'eth_sendRawTransaction', [await signRaw(data, { nonce: 0 })]);
    assert.match(low.error!.message, /nonce too low/);
    const noGas = await rpc(devnet, 'eth_sendRawTransaction', [await signRaw(data, { gas: 21_000n })]);
    assert.match(noGas.error!.message, /intrinsic gas too low/);
  });
});

describe('devnet: JSON-RPC envelope', () => {
  let devnet: Devnet;
  before(async () => (devnet = await startTestDevnet()));
  after(() => devnet.stop());

  const post = async (body: string) =>
    (
      await fetch(devnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    ).json() as Promise<unknown>;

  test('unknown methods answer -32601 (viem falls back from eth_fillTransaction on it)', async () => {
    const answer = await rpc(devnet, 'eth_fillTransaction', [{}]);
    assert.deepEqual(answer.error, {
      code: -32601,
      message: 'the method eth_fillTransaction does not exist/is not available',
    });
  });

  test('batches answer in order; parse errors answer -32700; a missing params member is accepted', async () => {
    assert.deepEqual(
      await post(
        JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
          { jsonrpc: '2.0', id: 2, method: 'net_version' },
        ]),
      ),
      [
        { jsonrpc: '2.0', id: 1, result: '0x539' },
        { jsonrpc: '2.0', id: 2, result: '1337' },
      ],
    );
    assert.deepEqual(await post('{"jsonrpc":'), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
  });

  test('eth_getLogs: ranges over 1000 blocks are refused like public nodes do', async () => {
    const answer = await rpc(devnet, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3e8' }]);
    assert.equal(answer.error?.code, -32005);
    assert.match(answer.error!.message, /1001 blocks requested, at most 1000/);
    const ok = await rpc<unknown[]>(devnet, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3e7' }]);
    assert.deepEqual(ok.result, []);
  });
});
