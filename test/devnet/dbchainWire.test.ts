// DB-chain devnet conformance, the write side: the recorded cheesecake transactions' calldata (re-signed by
// a devnet account) is executed and logs the same shapes; broken rules revert with the named custom error
// (eth_call / eth_estimateGas carry it as revert data, a mined one has status 0) and change nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { decodeErrorResult, decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { REGISTRY_ADDRESS, entityKey, errorAbi, registryAbi } from '../../src/chain/dbchain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import {
  body,
  cell,
  createData,
  createEntity as createOne,
  dbchainClients,
  entityNonce,
  deleteData,
  executeData,
  extendData,
  ident,
  patchData,
  sorted,
  transferData,
  type Triple,
} from '../helpers/dbchainDevnet.ts';
import { rpc, rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

interface RecordedTx {
  label: string;
  input: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex }[];
}
const recorded: RecordedTx[] = JSON.parse(
  readFileSync(new URL('../chain/dbchain/fixtures/cheesecake.json', import.meta.url), 'utf8'),
).transactions;
const fixture = (label: string) =>
  defined(
    recorded.find((t) => t.label === label),
    label,
  );
/** The one entity key a recorded patch / extend / delete names, swapped for one that exists on the devnet. */
const RECORDED_KEY = '8863dac4f91b14da979331f4c5277036f257f97bb6bcd5cac8048acbdbc0e057';
const RECORDED_DELETED_KEY = 'bc7713534bc76ca8ab92f6e98681b251b4ea318b58a98fbc3649035f8ab3a61c';
const retarget = (input: Hex, from: string, key: Hex) => {
  assert.equal(input.split(from).length, 2, 'the recorded key appears once in the calldata');
  return input.replace(from, key.slice(2)) as Hex;
};
const saltOf = (input: Hex, createIndex = 0) => {
  const salts = [...input.matchAll(/00000000000000000000000000000000([0-9a-f]{32})0{64}0{62}1e/g)];
  return BigInt(`0x${defined(salts[createIndex], 'salt')[1]}`);
};

describe('DB-chain devnet: recorded transactions and reverts', () => {
  let devnet: Devnet;
  let alice: ReturnType<typeof dbchainClients>;
  let bob: ReturnType<typeof dbchainClients>;

  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    alice = dbchainClients(devnet, 0);
    bob = dbchainClients(devnet, 1);
  });
  after(() => devnet.stop());

  const nonceOf = (address: Hex) => entityNonce(devnet, address);
  const entity = (key: Hex) => rpcResult<Record<string, unknown> | null>(devnet, 'arkiv_getEntity', [key]);
  const shape = (log: { address: Hex; topics: readonly Hex[]; data: Hex }) => ({
    address: log.address.toLowerCase(),
    topic0: log.topics[0],
    topics: log.topics.length,
    dataBytes: (log.data.length - 2) / 2,
  });

  test('the five recorded transactions, re-signed by a devnet account, run and log the same shapes', async () => {
    const owner = alice.account.address.toLowerCase() as Hex;
    const ownerTopic = `0x${owner.slice(2).padStart(64, '0')}`;
    // create (readonly, minLifetime 30): the key follows from the sender, its entity nonce and the salt.
    const create = fixture('create');
    const created = await alice.send(create.input);
    assert.equal(created.status, 'success');
    assert.deepEqual(created.logs.map(shape), create.logs.map(shape));
    const key0 = entityKey({ chainId: devnet.chainId, owner, nonce: 0n, salt: saltOf(create.input) });
    const [log] = created.logs;
    assert.deepEqual(log?.topics.slice(1), [key0, ownerTopic]);
    assert.equal(BigInt(`0x${log?.data.slice(2, 66)}`), created.blockNumber + 30n, 'expiresAt = block + minLifetime');
    assert.equal(BigInt(`0x${log?.data.slice(66)}`), 1n, 'readonly flag');
    assert.equal(await nonceOf(owner), 1n);
    const stored = await entity(key0);
    assert.ok(stored, 'created entity');
    assert.equal(stored.contentType, 'application/json');
    assert.deepEqual(stored.attributes, [
      { name: 'kind', type: 'str', value: 'smoke' },
      { name: 'run', type: 'str', value: 'rmsysl2em' },
    ]);

    // batch: create, create, patch; the patch is retargeted at the batch's own first create.
    const batch = fixture('batch');
    const key1 = entityKey({ chainId: devnet.chainId, owner, nonce: 1n, salt: saltOf(batch.input, 0) });
    const key2 = entityKey({ chainId: devnet.chainId, owner, nonce: 2n, salt: saltOf(batch.input, 1) });
    const batched = await alice.send(retarget(batch.input, RECORDED_KEY, key1));
    assert.equal(batched.status, 'success');
    assert.deepEqual(batched.logs.map(shape), batch.logs.map(shape));
    assert.deepEqual(
      batched.logs.map((l) => l.topics[1]),
      [key1, key2, key1],
    );
    assert.equal(await nonceOf(owner), 3n);
    assert.deepEqual((await entity(key1))?.attributes, [
      { name: 'batched', type: 'str', value: 'yes' },
      { name: 'kind', type: 'str', value: 'smoke-batch' },
      { name: 'rank', type: 'i32', value: 1 },
      { name: 'run', type: 'str', value: 'rmsysl2em' },
    ]);

    // patch: tombstone `flag` (absent here), rank i32(2), status str('patched').
    const patch = fixture('patch');
    const patched = await alice.send(retarget(patch.input, RECORDED_KEY, key1));
    assert.equal(patched.status, 'success');
    assert.deepEqual(patched.logs.map(shape), patch.logs.map(shape));
    const after = await entity(key1);
    assert.ok(after, 'patched');
    assert.deepEqual(
      (after.attributes as { name: string; value: unknown }[]).map((a) => [a.name, a.value]),
      [
        ['batched', 'yes'],
        ['kind', 'smoke-batch'],
        ['rank', 2],
        ['run', 'rmsysl2em'],
        ['status', 'patched'],
      ],
    );
    assert.equal(after.updatedAt, `0x${patched.blockNumber.toString(16)}`);

    // extend: expiresAt 0, minLifetime 150 → block + 150.
    const extend = fixture('extend_expiry');
    const extended = await alice.send(retarget(extend.input, RECORDED_KEY, key1));
    assert.equal(extended.status, 'success');
    assert.deepEqual(extended.logs.map(shape), extend.logs.map(shape));
    assert.equal(BigInt(defined(extended.logs[0], 'log').data), extended.blockNumber + 150n);

    // delete
    const del = fixture('delete');
    const deleted = await alice.send(retarget(del.input, RECORDED_DELETED_KEY, key1));
    assert.equal(deleted.status, 'success');
    assert.deepEqual(deleted.logs.map(shape), del.logs.map(shape));
    assert.equal(await entity(key1), null);
    assert.notEqual(await entity(key2), null);

    // eth_getLogs returns the same logs by topic.
    const logs = await rpcResult<{ topics: Hex[] }[]>(devnet, 'eth_getLogs', [
      { fromBlock: '0x0', toBlock: 'latest', address: REGISTRY_ADDRESS, topics: [null, key1] },
    ]);
    assert.equal(logs.length, 5, 'create, batch patch, patch, extend, delete of key1');
  });

  const createEntity = async (who: ReturnType<typeof dbchainClients>, fields: Parameters<typeof createData>[0]) =>
    (await createOne(devnet, who, fields)).key;

  /**
   * Expects `data` from `who` to revert with `errorName`: eth_estimateGas and eth_call carry the error as
   * revert data, the mined transaction has status 0 and no logs, and no entity, count or nonce changes.
   */
  async function expectRevert(who: ReturnType<typeof dbchainClients>, data: Hex, errorName: string, args?: unknown[]) {
    const call = { from: who.account.address, to: REGISTRY_ADDRESS, data };
    for (const method of ['eth_call', 'eth_estimateGas']) {
      const answer = await rpc(devnet, method, [call, 'latest']);
      assert.equal(answer.error?.code, 3, `${method} reverts`);
      const revert = decodeErrorResult({ abi: errorAbi, data: (answer.error as { data?: Hex }).data ?? '0x' });
      assert.equal(revert.errorName, errorName);
      if (args) assert.deepEqual(revert.args, args);
    }
    const nonce = await nonceOf(who.account.address);
    const receipt = await who.send(data);
    assert.equal(receipt.status, 'reverted');
    assert.deepEqual(receipt.logs, []);
    assert.equal(await nonceOf(who.account.address), nonce, 'the entity nonce does not advance');
    // The state after the reverted block is the one before it, less what expired at that very block.
    const block = Number(receipt.blockNumber);
    const before = (await everything(block - 1)).filter((e) => BigInt(e.expiresAt as Hex) > BigInt(block));
    const after = await everything(block);
    assert.deepEqual(after, before, 'a reverted transaction changes nothing');
    assert.equal(await rpcResult(devnet, 'arkiv_getEntityCount', [{ block }]), after.length);
  }
  const everything = async (block: number) =>
    (
      await rpcResult<{ data: Record<string, unknown>[] }>(devnet, 'arkiv_query', [
        '*',
        {
          atBlock: `0x${block.toString(16)}`,
          limit: 200,
          select: { key: true, owner: true, expiresAt: true, updatedAt: true, payload: true, attributes: true },
        },
      ])
    ).data;

  const op = (operation: number, operationData: Hex) => ({ operation, operationData });

  test('non-canonical, unsorted, oversized and malformed operations revert with the named error', async () => {
    const good = createData({ attributes: body('x', cell.str('topic', 'a')) });
    await expectRevert(alice, executeData([]), 'EmptyBatch');
    await expectRevert(alice, executeData([op(9, good)]), 'InvalidOpType', [9]);
    // A trailing word, and a dirty high byte in the uint8 creationFlags word: decodable, not canonical.
    await expectRevert(alice, executeData([op(1, `${good}${'00'.repeat(32)}`)]), 'NonCanonicalOperationData', [1]);
    const dirty = `${good.slice(0, 2 + 64 * 4)}ff${good.slice(2 + 64 * 4 + 2)}` as Hex;
    await expectRevert(alice, executeData([op(1, dirty)]), 'NonCanonicalOperationData', [1]);
    // Unsorted and duplicate names.
    const unsorted = [cell.payload('x'), cell.contentType('text/plain'), cell.str('topic', 'a')];
    await expectRevert(alice, executeData([op(1, createData({ attributes: unsorted }))]), 'AttributesNotSorted');
    const duplicate = body('x', cell.str('topic', 'a'), cell.str('topic', 'b'));
    await expectRevert(alice, executeData([op(1, createData({ attributes: duplicate }))]), 'AttributesNotSorted');
    // 33 cells; a str over 128 bytes; bytes on a user name; an i32 not sign-extended.
    const many = Array.from({ length: 31 }, (_, i) => cell.i32(`a${String(i).padStart(2, '0')}`, i));
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x', ...many) }))]),
      'TooManyAttributes',
      [33n, 32n],
    );
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x', cell.str('topic', 'x'.repeat(129))) }))]),
      'InvalidValueType',
      [ident('topic'), 8],
    );
    const notSignExtended: Triple = { name: ident('rank'), typeId: 2, value: `0x${'00'.repeat(28)}ffffffff` };
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x', notSignExtended) }))]),
      'InvalidValueType',
    );
    // Names: uppercase (variant L), a system name the engine controls, a tombstone in a create.
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x', cell.str('entityType', 'a')) }))]),
      'Ident32InvalidByte',
      [6n, '0x54'],
    );
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: sorted([...body('x'), cell.str('$owner', 'a')]) }))]),
      'SystemAttributeNotWritable',
    );
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x', cell.tombstone('gone')) }))]),
      'TombstoneInCreate',
    );
    // Flags and expiry.
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x'), creationFlags: 4 }))]),
      'ReservedCreationFlags',
      [4],
    );
    await expectRevert(
      alice,
      executeData([op(1, createData({ attributes: body('x'), minLifetime: 0n, expiresAt: 1n }))]),
      'ExpiryDeadOnArrival',
    );
    // block + minLifetime over uint64 has no custom error: the node reverts with Error(string).
    const overflow = executeData([op(1, createData({ attributes: body('x'), minLifetime: 2n ** 64n - 1n }))]);
    await expectRevert(alice, overflow, 'Error');
    const call = { from: alice.account.address, to: REGISTRY_ADDRESS, data: overflow };
    const answer = await rpc(devnet, 'eth_call', [call, 'latest']);
    const data = (answer.error as { data?: Hex } | undefined)?.data ?? '0x';
    assert.match(
      String(decodeErrorResult({ abi: errorAbi, data }).args?.[0]),
      /^expiry overflow \(\d+ \+ 18446744073709551615\)$/,
    );
  });

  test('the auth and liveness table: who may patch, extend, transfer and delete', async () => {
    const key = await createEntity(alice, { attributes: body('mine', cell.str('topic', 'a')), minLifetime: 1000n });
    const bobAddress = bob.account.address.toLowerCase();
    const aliceAddress = alice.account.address.toLowerCase();
    await expectRevert(bob, executeData([op(2, patchData(key, [cell.str('topic', 'b')]))]), 'NotOwner', [
      key,
      bob.account.address,
      alice.account.address,
    ]);
    await expectRevert(bob, executeData([op(3, extendData(key, 0n, 5000n))]), 'NotOwner');
    await expectRevert(bob, executeData([op(4, transferData(key, bobAddress as Hex))]), 'NotOwner');
    await expectRevert(bob, executeData([op(5, deleteData(key))]), 'NotOwner');
    await expectRevert(alice, executeData([op(2, patchData(key, []))]), 'EmptyMutations', [key]);
    await expectRevert(
      alice,
      executeData([op(2, patchData(key, [cell.bool('x', true), { ...cell.tombstone('y'), value: '0x01' }]))]),
      'TombstoneValueNotEmpty',
    );
    await expectRevert(alice, executeData([op(3, extendData(key, 0n, 10n))]), 'ExpiryNotExtended');
    await expectRevert(alice, executeData([op(4, transferData(key, aliceAddress as Hex))]), 'TransferToSelf', [key]);
    await expectRevert(
      alice,
      executeData([op(4, transferData(key, `0x${'00'.repeat(20)}`))]),
      'TransferToZeroAddress',
      [key],
    );
    const missing = `0x${'ab'.repeat(32)}` as Hex;
    await expectRevert(alice, executeData([op(5, deleteData(missing))]), 'EntityNotFound', [missing]);
    // All or nothing: a good patch followed by a bad op leaves the entity as it was.
    await expectRevert(
      alice,
      executeData([op(2, patchData(key, [cell.str('topic', 'b')])), op(5, deleteData(missing))]),
      'EntityNotFound',
    );

    // Readonly: patch refused, extend still works; permissionless extension: anyone may extend.
    const frozen = await createEntity(alice, { attributes: body('frozen'), creationFlags: 0b11, minLifetime: 1000n });
    await expectRevert(alice, executeData([op(2, patchData(frozen, [cell.str('topic', 'b')]))]), 'ReadOnlyEntity', [
      frozen,
    ]);
    const extended = await bob.send(executeData([op(3, extendData(frozen, 0n, 2000n))]));
    assert.equal(extended.status, 'success', 'anyone may extend a permissionless-extension entity');
    assert.equal(
      extended.logs[0]?.topics[2],
      `0x${aliceAddress.slice(2).padStart(64, '0')}`,
      'the log names the entity owner',
    );

    // Transfer: the new owner may patch, the old one no longer.
    const moved = await alice.send(executeData([op(4, transferData(key, bobAddress as Hex))]));
    assert.equal(moved.status, 'success');
    assert.equal(moved.logs[0]?.topics.length, 4);
    await expectRevert(alice, executeData([op(2, patchData(key, [cell.str('topic', 'c')]))]), 'NotOwner');
    assert.equal((await bob.send(executeData([op(2, patchData(key, [cell.str('topic', 'c')]))]))).status, 'success');
    assert.equal((await entity(key))?.owner, bobAddress);

    // Expired: patch, extend and transfer refuse with EntityExpired; delete still works (§1.9).
    const brief = await createEntity(alice, { attributes: body('brief'), minLifetime: 1n });
    devnet.mine();
    await expectRevert(alice, executeData([op(2, patchData(brief, [cell.str('topic', 'b')]))]), 'EntityExpired');
    await expectRevert(alice, executeData([op(3, extendData(brief, 0n, 100n))]), 'EntityExpired');
    await expectRevert(alice, executeData([op(4, transferData(brief, bobAddress as Hex))]), 'EntityExpired');
    const deleted = await alice.send(executeData([op(5, deleteData(brief))]));
    assert.equal(deleted.status, 'success', 'an expired entity can still be deleted');
    assert.equal(deleted.logs.length, 1);
  });

  test('view calls: entityNonce, customAttributeNames, attributeTypeId; other selectors revert', async () => {
    const owner = bob.account.address.toLowerCase() as Hex;
    const before = await nonceOf(owner);
    const key = await createEntity(bob, { attributes: body('v', cell.u64('size', 5n), cell.str('topic', 't')) });
    assert.equal(await nonceOf(owner), before + 1n);
    const view = async (functionName: 'customAttributeNames' | 'attributeTypeId', args: readonly unknown[]) =>
      decodeFunctionResult({
        abi: registryAbi,
        functionName,
        data: await rpcResult<Hex>(devnet, 'eth_call', [
          { to: REGISTRY_ADDRESS, data: encodeFunctionData({ abi: registryAbi, functionName, args } as never) },
        ]),
      } as never);
    assert.deepEqual(await view('customAttributeNames', [key]), [ident('size'), ident('topic')]);
    assert.equal(await view('attributeTypeId', [key, ident('size')]), 3);
    assert.equal(await view('attributeTypeId', [key, ident('absent')]), 0);
    const purge = await rpc(devnet, 'eth_call', [{ to: REGISTRY_ADDRESS, data: '0xad9e3f1c' }]);
    assert.equal(purge.error?.code, 3);
  });
});
