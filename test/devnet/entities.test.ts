// Devnet conformance: entity writes through the unmodified @arkiv-network/sdk wallet client
// (create, update, delete, extend, change owner, mutateEntities), checked against keys, logs and state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NoEntityFoundError, decodeEventLog, type Hex } from '@arkiv-network/sdk';
import { ExpirationTime } from '@arkiv-network/sdk/utils';
import { ARKIV_ADDRESS, ARKIV_TOPICS, SYSTEM_TX_FROM, arkivEventAbi, entityKey } from '../../src/chain/v1/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { lower, publicClient, startTestDevnet, text, walletClient } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

describe('devnet: entity writes through the SDK', () => {
  let devnet: Devnet;
  let reader: ReturnType<typeof publicClient>;
  let alice: ReturnType<typeof walletClient>;
  let bob: ReturnType<typeof walletClient>;

  before(async () => {
    devnet = await startTestDevnet();
    reader = publicClient(devnet);
    alice = walletClient(devnet, 0);
    bob = walletClient(devnet, 1);
  });
  after(() => devnet.stop());

  const create = (client = alice, payload = 'hello', attributes: { key: string; value: string | number }[] = []) =>
    client.createEntity({ payload: text(payload), contentType: 'text/plain', attributes, expiresIn: 3600 });

  test('event topics: topic0 values equal the documented constants', () => {
    assert.equal(ARKIV_TOPICS.created, '0x73dc52f9255c70375a8835a75fca19be3d9f6940536cccf5a7bc414368b389fa');
    assert.equal(ARKIV_TOPICS.updated, '0x7e0bc9bab49e941b50c40ff21a415b0917df8caa9a3c3e85d6b8cfda94b52ff9');
    assert.equal(ARKIV_TOPICS.deleted, '0x749d62eff980a5016f4f357bd7eb8b65163f1e25bc400dcfc5e33f0e7910149e');
    assert.equal(ARKIV_TOPICS.extended, '0x0a5f98a4e3c7ac5f503e302ccd21b6132f04d51b89c5e02487c89ab3b7c6d60b');
    assert.equal(ARKIV_TOPICS.ownerChanged, '0x7ccdcb525ffa054be1f1902b048545dbf59495a428169a95b032546ad54708c4');
    assert.equal(ARKIV_TOPICS.expired, '0xe3dbbcdb0a31e8bbde82b5756869daff81ae12c21009a8f7fcc8a07e00948a0f');
  });

  test('create: key is keccak256(txHash ‖ payload ‖ uint256(0)) and getEntity returns what was written', async () => {
    const { entityKey: key, txHash } = await create(alice, 'hello', [
      { key: 'category', value: 'doc' },
      { key: 'n', value: 200 },
      { key: 'zero', value: 0 },
    ]);
    assert.equal(key, entityKey(txHash, text('hello'), 0));
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    const entity = await reader.getEntity(key);
    assert.equal(entity.toText(), 'hello');
    assert.equal(entity.contentType, 'text/plain');
    assert.equal(entity.owner, lower(alice.account.address));
    assert.equal(entity.creator, lower(alice.account.address));
    assert.equal(entity.expiresAtBlock, receipt.blockNumber + 1800n);
    assert.equal(entity.createdAtBlock, receipt.blockNumber);
    assert.equal(entity.transactionIndexInBlock, 1n);
    assert.equal(entity.operationIndexInTransaction, 0n);
    assert.deepEqual(
      [...entity.attributes].sort((a, b) => a.key.localeCompare(b.key)),
      [
        { key: 'category', value: 'doc' },
        { key: 'n', value: 200 },
        { key: 'zero', value: 0 },
      ],
    );
  });

  test('create: the receipt carries one Created log with the exact topics and 64 data bytes', async () => {
    const { entityKey: key, txHash } = await create();
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.logs.length, 1);
    const log = defined(receipt.logs[0], 'the log');
    assert.equal(log.address, ARKIV_ADDRESS);
    assert.deepEqual(log.topics, [
      ARKIV_TOPICS.created,
      key,
      `0x${'0'.repeat(24)}${alice.account.address.slice(2).toLowerCase()}`,
    ]);
    const decoded = decodeEventLog({ abi: arkivEventAbi, topics: log.topics as [Hex], data: log.data, strict: true });
    assert.equal(decoded.eventName, 'ArkivEntityCreated');
    assert.equal((decoded.args as unknown as { expirationBlock: bigint }).expirationBlock, receipt.blockNumber + 1800n);
    assert.equal((decoded.args as unknown as { cost: bigint }).cost, 0n);
  });

  test('create: an empty payload is allowed and comes back as undefined', async () => {
    const { entityKey: key } = await alice.createEntity({
      payload: new Uint8Array(),
      contentType: 'text/plain',
      attributes: [],
      expiresIn: 60,
    });
    const entity = await reader.getEntity(key);
    assert.equal(entity.payload, undefined);
    assert.equal(entity.contentType, 'text/plain');
  });

  test('update: replaces payload, content type and attributes, keeps creator and creation block, resets expiry', async () => {
    const { entityKey: key, txHash: createTx } = await create(alice, 'v1', [{ key: 'version', value: 1 }]);
    const created = await reader.getTransactionReceipt({ hash: createTx });
    const { txHash } = await alice.updateEntity({
      entityKey: key,
      payload: text('{"v":2}'),
      contentType: 'application/json',
      attributes: [{ key: 'status', value: 'edited' }],
      expiresIn: ExpirationTime.fromBlocks(10),
    });
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    const entity = await reader.getEntity(key);
    assert.deepEqual(entity.toJson(), { v: 2 });
    assert.equal(entity.contentType, 'application/json');
    assert.deepEqual(entity.attributes, [{ key: 'status', value: 'edited' }]);
    assert.equal(entity.expiresAtBlock, receipt.blockNumber + 10n);
    assert.equal(entity.createdAtBlock, created.blockNumber);
    assert.equal(entity.lastModifiedAtBlock, receipt.blockNumber);
    assert.equal(entity.creator, lower(alice.account.address));
    const log = defined(receipt.logs[0], 'the log');
    assert.equal(log.topics[0], ARKIV_TOPICS.updated);
    const args = decodeEventLog({ abi: arkivEventAbi, topics: log.topics as [Hex], data: log.data })
      .args as unknown as Record<string, bigint>;
    assert.equal(args.oldExpirationBlock, created.blockNumber + 1800n);
    assert.equal(args.newExpirationBlock, receipt.blockNumber + 10n);
  });

  test('delete: the entity is gone and getEntity throws NoEntityFoundError', async () => {
    const { entityKey: key } = await create();
    const { txHash } = await alice.deleteEntity({ entityKey: key });
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    assert.equal(defined(receipt.logs[0], 'receipt.logs[0]').topics[0], ARKIV_TOPICS.deleted);
    assert.equal(defined(receipt.logs[0], 'receipt.logs[0]').topics[1], key);
    await assert.rejects(reader.getEntity(key), NoEntityFoundError);
  });

  test('extend: adds to the current expiry, and anyone may extend', async () => {
    const { entityKey: key } = await create();
    const before = (await reader.getEntity(key)).expiresAtBlock!;
    await bob.extendEntity({ entityKey: key, expiresIn: ExpirationTime.fromBlocks(500) });
    const entity = await reader.getEntity(key);
    assert.equal(entity.expiresAtBlock, before + 500n);
    assert.equal(entity.owner, lower(alice.account.address));
  });

  test('changeOwnership: the new owner may update, the old one may not', async () => {
    const { entityKey: key } = await create();
    const { txHash } = await alice.changeOwnership({ entityKey: key, newOwner: bob.account.address });
    const receipt = await reader.getTransactionReceipt({ hash: txHash as Hex });
    assert.equal(defined(receipt.logs[0], 'receipt.logs[0]').topics[0], ARKIV_TOPICS.ownerChanged);
    assert.equal((await reader.getEntity(key)).owner, lower(bob.account.address));
    await assert.rejects(
      alice.updateEntity({
        entityKey: key,
        payload: text('x'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 60,
      }),
      /Transaction failed/,
    );
    await bob.updateEntity({
      entityKey: key,
      payload: text('by bob'),
      contentType: 'text/plain',
      attributes: [],
      expiresIn: 60,
    });
    const entity = await reader.getEntity(key);
    assert.equal(entity.toText(), 'by bob');
    assert.equal(entity.creator, lower(alice.account.address));
  });

  test('mutateEntities: keys per list and logs in the order creates, deletes, updates, extends, owner changes', async () => {
    const seeds: Hex[] = [];
    for (let i = 0; i < 4; i++) seeds.push((await create(alice, `seed-${i}`)).entityKey);
    const [a, b, c, d] = seeds;
    assert.ok(a && b && c && d, 'four seed entities');
    const result = await alice.mutateEntities({
      creates: [
        { payload: text('new-0'), contentType: 'text/plain', attributes: [], expiresIn: 60 },
        { payload: text('new-1'), contentType: 'text/plain', attributes: [], expiresIn: 60 },
      ],
      updates: [{ entityKey: b, payload: text('updated'), contentType: 'text/plain', attributes: [], expiresIn: 60 }],
      deletes: [{ entityKey: a }],
      extensions: [{ entityKey: c, expiresIn: 20 }],
      ownershipChanges: [{ entityKey: d, newOwner: bob.account.address }],
    });
    assert.deepEqual(result.createdEntities, [
      entityKey(result.txHash, text('new-0'), 0),
      entityKey(result.txHash, text('new-1'), 1),
    ]);
    assert.deepEqual(result.deletedEntities, [a]);
    assert.deepEqual(result.updatedEntities, [b]);
    assert.deepEqual(result.extendedEntities, [c]);
    const receipt = await reader.getTransactionReceipt({ hash: result.txHash });
    assert.deepEqual(
      receipt.logs.map((l) => l.topics[0]),
      [
        ARKIV_TOPICS.created,
        ARKIV_TOPICS.created,
        ARKIV_TOPICS.deleted,
        ARKIV_TOPICS.updated,
        ARKIV_TOPICS.extended,
        ARKIV_TOPICS.ownerChanged,
      ],
    );
    assert.deepEqual(
      receipt.logs.map((l) => l.logIndex),
      [0, 1, 2, 3, 4, 5],
    );
    assert.equal(
      (await reader.getEntity(defined(result.createdEntities[1], 'result.createdEntities[1]')))
        .operationIndexInTransaction,
      1n,
    );
    assert.equal((await reader.getEntity(d)).owner, lower(bob.account.address));
  });

  test('blocks: every block starts with the system deposit transaction at index 0', async () => {
    const { txHash } = await create();
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    const block = await reader.getBlock({ blockNumber: receipt.blockNumber, includeTransactions: true });
    assert.equal(block.transactions.length, 2);
    assert.equal(defined(block.transactions[0], 'block.transactions[0]').from, SYSTEM_TX_FROM);
    assert.equal(
      defined(block.transactions[0], 'block.transactions[0]').to,
      '0x4200000000000000000000000000000000000015',
    );
    assert.equal(defined(block.transactions[1], 'block.transactions[1]').hash, txHash);
    assert.equal(receipt.transactionIndex, 1);
    assert.ok(block.baseFeePerGas! > 0n);
  });

  test('blocks: eth_getBlockReceipts returns the same receipts as eth_getTransactionReceipt', async () => {
    const { txHash } = await create();
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    const receipts = (await reader.request({
      method: 'eth_getBlockReceipts' as never,
      params: [`0x${receipt.blockNumber.toString(16)}`] as never,
    })) as { transactionHash: Hex; status: Hex; logs: unknown[] }[];
    assert.equal(receipts.length, 2);
    assert.equal(defined(receipts[1], 'receipts[1]').transactionHash, txHash);
    assert.equal(defined(receipts[1], 'receipts[1]').status, '0x1');
    assert.equal(defined(receipts[1], 'receipts[1]').logs.length, 1);
    assert.equal(defined(receipts[0], 'receipts[0]').logs.length, 0);
  });

  test('accounts: gas is charged from the sender and the nonce increments', async () => {
    const balanceBefore = await reader.getBalance({ address: bob.account.address });
    const nonceBefore = await reader.getTransactionCount({ address: bob.account.address });
    const { txHash } = await create(bob);
    const receipt = await reader.getTransactionReceipt({ hash: txHash });
    assert.equal(await reader.getTransactionCount({ address: bob.account.address }), nonceBefore + 1);
    assert.equal(
      await reader.getBalance({ address: bob.account.address }),
      balanceBefore - receipt.gasUsed * receipt.effectiveGasPrice,
    );
    assert.ok(receipt.gasUsed > 21000n);
  });
});
