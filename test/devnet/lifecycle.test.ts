// Devnet conformance: expiry, event subscriptions (HTTP filters through the SDK, WebSocket eth_subscribe),
// interval blocks, forced reorgs, --state persistence and the `arkivector devnet` command.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NoEntityFoundError, type Hex } from '@arkiv-network/sdk';
import { ExpirationTime } from '@arkiv-network/sdk/utils';
import WebSocket from 'ws';
import { ARKIV_TOPICS, SYSTEM_TX_FROM } from '../../src/chain/v1/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { publicClient, rpcResult, startTestDevnet, text, walletClient } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

/** Resolves once `predicate` holds after an event, failing after `ms` instead of hanging. */
function waitFor<T>(subscribe: (check: () => void) => void, value: () => T | undefined, ms = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`condition not reached within ${ms} ms`)), ms);
    subscribe(() => {
      const result = value();
      if (result !== undefined) {
        clearTimeout(timer);
        resolve(result);
      }
    });
  });
}

describe('devnet: expiry', () => {
  let devnet: Devnet;
  before(async () => (devnet = await startTestDevnet()));
  after(() => devnet.stop());

  test('an entity is visible through expiresAt - 1 and gone at expiresAt, with an Expired log on tx 0', async () => {
    const reader = publicClient(devnet);
    const alice = walletClient(devnet);
    const { entityKey: key, txHash } = await alice.createEntity({
      payload: text('short'),
      contentType: 'text/plain',
      attributes: [{ key: 'ttl', value: 'short' }],
      expiresIn: ExpirationTime.fromBlocks(2),
    });
    const createdIn = (await reader.getTransactionReceipt({ hash: txHash })).blockNumber;
    assert.equal((await reader.getEntity(key)).expiresAtBlock, createdIn + 2n);
    devnet.mine();
    assert.equal((await reader.getEntity(key)).toText(), 'short');
    const expiryBlock = devnet.mine();
    assert.equal(BigInt(expiryBlock.number), createdIn + 2n);
    await assert.rejects(reader.getEntity(key), NoEntityFoundError);
    const [systemReceipt] = await rpcResult<
      { from: string; transactionIndex: string; logs: { topics: Hex[]; data: Hex }[] }[]
    >(devnet, 'eth_getBlockReceipts', [`0x${expiryBlock.number.toString(16)}`]);
    assert.ok(systemReceipt, 'the expiry block has a system receipt');
    assert.equal(systemReceipt.from, SYSTEM_TX_FROM);
    assert.equal(systemReceipt.transactionIndex, '0x0');
    assert.equal(systemReceipt.logs.length, 1);
    assert.deepEqual(defined(systemReceipt.logs[0], 'systemReceipt.logs[0]').topics.slice(0, 2), [
      ARKIV_TOPICS.expired,
      key,
    ]);
    assert.equal(defined(systemReceipt.logs[0], 'systemReceipt.logs[0]').data, key);
    const before = await reader
      .buildQuery()
      .where([])
      .validAtBlock(createdIn + 1n)
      .withPayload()
      .fetch()
      .catch(() => undefined);
    assert.equal(before, undefined, 'an empty builder query is rejected (SDK sends "")');
    const history = await reader.query('ttl = "short"', { atBlock: createdIn + 1n });
    assert.equal(history.entities.length, 1);
    assert.equal(await reader.getEntityCount(), 0);
  });

  test('an extended entity does not expire at its old expiry', async () => {
    const reader = publicClient(devnet);
    const alice = walletClient(devnet);
    const { entityKey: key } = await alice.createEntity({
      payload: text('kept'),
      contentType: 'text/plain',
      attributes: [],
      expiresIn: ExpirationTime.fromBlocks(2),
    });
    await alice.extendEntity({ entityKey: key, expiresIn: ExpirationTime.fromBlocks(5) });
    devnet.mine(2);
    assert.equal((await reader.getEntity(key)).toText(), 'kept');
  });
});

describe('devnet: events and blocks', () => {
  let devnet: Devnet;
  before(async () => (devnet = await startTestDevnet()));
  after(() => devnet.stop());

  test('subscribeEntityEvents (HTTP filters): created, updated, extended, deleted and expired reach their handlers', async () => {
    const reader = publicClient(devnet);
    const alice = walletClient(devnet);
    const events: string[] = [];
    let notify = () => {};
    const unwatch = await reader.subscribeEntityEvents(
      {
        onEntityCreated: (e) => {
          events.push(`created ${e.entityKey}`);
          notify();
        },
        onEntityUpdated: (e) => {
          events.push(`updated ${e.entityKey}`);
          notify();
        },
        onEntityExpiresInExtended: (e) => {
          events.push(`extended ${e.entityKey} ${e.newExpirationBlock - e.oldExpirationBlock}`);
          notify();
        },
        onEntityDeleted: (e) => {
          events.push(`deleted ${e.entityKey}`);
          notify();
        },
        onEntityExpired: (e) => {
          events.push(`expired ${e.entityKey}`);
          notify();
        },
      },
      50,
      (await reader.getBlockNumber({ cacheTime: 0 })) + 1n,
    );
    try {
      const { entityKey: a } = await alice.createEntity({
        payload: text('a'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 3600,
      });
      await alice.updateEntity({
        entityKey: a,
        payload: text('a2'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 3600,
      });
      await alice.extendEntity({ entityKey: a, expiresIn: ExpirationTime.fromBlocks(7) });
      await alice.deleteEntity({ entityKey: a });
      const { entityKey: b } = await alice.createEntity({
        payload: text('b'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: ExpirationTime.fromBlocks(1),
      });
      devnet.mine();
      const expected = [
        `created ${a}`,
        `updated ${a}`,
        `extended ${a} 7`,
        `deleted ${a}`,
        `created ${b}`,
        `expired ${b}`,
      ];
      await waitFor(
        (check) => {
          notify = check;
          check();
        },
        () => (events.length >= expected.length ? true : undefined),
      );
      assert.deepEqual(events, expected);
    } finally {
      unwatch();
    }
  });

  test('WebSocket eth_subscribe: newHeads and logs notifications follow new blocks', async () => {
    const socket = new WebSocket(devnet.wsUrl);
    await once(socket, 'open');
    const messages: {
      id?: number;
      result?: string;
      params?: { subscription: string; result: { number?: string; topics?: Hex[] } };
    }[] = [];
    let notify = () => {};
    socket.on('message', (data) => {
      messages.push(JSON.parse(data.toString()));
      notify();
    });
    const answer = (id: number) =>
      waitFor(
        (check) => {
          notify = check;
          check();
        },
        () => messages.find((m) => m.id === id),
      );
    try {
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'eth_subscribe',
          params: ['logs', { topics: [[ARKIV_TOPICS.created]] }],
        }),
      );
      const heads = (await answer(1)).result!;
      const logs = (await answer(2)).result!;
      const { entityKey: key, txHash } = await walletClient(devnet).createEntity({
        payload: text('ws'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 60,
      });
      const block = (await publicClient(devnet).getTransactionReceipt({ hash: txHash })).blockNumber;
      const head = await waitFor(
        (check) => {
          notify = check;
          check();
        },
        () => messages.find((m) => m.params?.subscription === heads),
      );
      const log = await waitFor(
        (check) => {
          notify = check;
          check();
        },
        () => messages.find((m) => m.params?.subscription === logs),
      );
      assert.equal(BigInt(head.params!.result.number!), block);
      assert.deepEqual(log.params!.result.topics!.slice(0, 2), [ARKIV_TOPICS.created, key]);
    } finally {
      socket.close();
    }
  });

  test('interval mining: with --block-time 1 blocks arrive on their own with increasing timestamps', async () => {
    const ticking = await startTestDevnet({ blockTime: 1 });
    try {
      const first = await once(ticking.node, 'block');
      const second = await once(ticking.node, 'block');
      assert.equal(second[0].number, first[0].number + 1);
      assert.ok(second[0].timestamp > first[0].timestamp);
    } finally {
      await ticking.stop();
    }
  });

  test('automine off: transactions wait in the pool and are mined together by devnet_mine', async () => {
    const reader = publicClient(devnet);
    await rpcResult(devnet, 'devnet_setAutomine', [false]);
    try {
      const alice = walletClient(devnet, 2);
      const hashes: Hex[] = [];
      for (let i = 0; i < 3; i++) {
        hashes.push(await alice.sendTransaction({ to: walletClient(devnet, 3).account.address, value: 1n }));
      }
      assert.equal(await reader.getTransactionCount({ address: alice.account.address, blockTag: 'pending' }), 3);
      assert.equal(await rpcResult(devnet, 'eth_getTransactionReceipt', [hashes[0]]), null);
      await rpcResult(devnet, 'devnet_mine', []);
      const receipts = await Promise.all(hashes.map((hash) => reader.getTransactionReceipt({ hash })));
      assert.deepEqual(
        receipts.map((r) => r.transactionIndex),
        [1, 2, 3],
      );
      assert.equal(new Set(receipts.map((r) => r.blockNumber)).size, 1);
    } finally {
      await rpcResult(devnet, 'devnet_setAutomine', [true]);
    }
  });
});

describe('devnet: reorgs and persistence', () => {
  test('devnet_reorg: the replaced blocks get new hashes and their entities vanish; replay brings them back', async () => {
    const devnet = await startTestDevnet();
    try {
      const reader = publicClient(devnet);
      const alice = walletClient(devnet);
      const { entityKey: kept } = await alice.createEntity({
        payload: text('kept'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 3600,
      });
      const { entityKey: lost, txHash } = await alice.createEntity({
        payload: text('lost'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 3600,
      });
      const block = (await reader.getTransactionReceipt({ hash: txHash })).blockNumber;
      const oldHash = (await reader.getBlock({ blockNumber: block })).hash;
      const result = await rpcResult<{ commonAncestor: number; oldHead: number; newHead: number }>(
        devnet,
        'devnet_reorg',
        [{ depth: 1 }],
      );
      assert.deepEqual(result, {
        commonAncestor: Number(block) - 1,
        oldHead: Number(block),
        newHead: Number(block) + 1,
        replayed: 0,
      });
      assert.notEqual((await reader.getBlock({ blockNumber: block })).hash, oldHash);
      assert.equal(
        (await reader.getBlock({ blockNumber: block + 1n })).parentHash,
        (await reader.getBlock({ blockNumber: block })).hash,
      );
      await assert.rejects(reader.getEntity(lost), NoEntityFoundError);
      assert.equal((await reader.getEntity(kept)).toText(), 'kept');
      assert.equal(await rpcResult(devnet, 'eth_getTransactionReceipt', [txHash]), null);

      const { entityKey: again, txHash: againTx } = await alice.createEntity({
        payload: text('again'),
        contentType: 'text/plain',
        attributes: [],
        expiresIn: 3600,
      });
      const replay = devnet.reorg(1, { replay: true });
      assert.equal(replay.replayed, 1);
      const receipt = await reader.getTransactionReceipt({ hash: againTx });
      assert.equal(receipt.blockNumber, BigInt(replay.commonAncestor + 1));
      assert.equal((await reader.getEntity(again)).toText(), 'again');
    } finally {
      await devnet.stop();
    }
  });

  test('--state: a restarted devnet reloads the same chain, entities and hashes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-devnet-'));
    const stateFile = join(dir, 'chain.json');
    try {
      const first = await startTestDevnet({ stateFile });
      const { entityKey: key } = await walletClient(first).createEntity({
        payload: text('persisted'),
        contentType: 'text/plain',
        attributes: [{ key: 'n', value: 7 }],
        expiresIn: 3600,
      });
      first.mine(3);
      const head = await publicClient(first).getBlock();
      await first.stop();

      const second = await startTestDevnet({ stateFile });
      try {
        const reader = publicClient(second);
        assert.equal((await reader.getBlock()).hash, head.hash);
        const entity = await reader.getEntity(key);
        assert.equal(entity.toText(), 'persisted');
        assert.deepEqual(entity.attributes, [{ key: 'n', value: 7 }]);
        // The reloaded chain keeps accepting transactions from the same accounts (nonces restored).
        await walletClient(second).createEntity({
          payload: text('more'),
          contentType: 'text/plain',
          attributes: [],
          expiresIn: 60,
        });
        assert.equal(await reader.getEntityCount(), 2);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('suspend/resume: the RPC goes away and comes back on the same port with the same chain', async () => {
    const devnet = await startTestDevnet();
    try {
      const reader = publicClient(devnet);
      const head = await reader.getBlockNumber({ cacheTime: 0 });
      await devnet.suspend();
      await assert.rejects(fetch(devnet.url, { method: 'POST', body: '{}' }));
      devnet.mine();
      await devnet.resume();
      assert.equal(await reader.getBlockNumber({ cacheTime: 0 }), head + 1n);
    } finally {
      await devnet.stop();
    }
  });
});

describe('arkivector devnet (command)', () => {
  test('prints the dev accounts, serves JSON-RPC on loopback, and passes the SDK-only smoke script', async () => {
    const child = spawn(process.execPath, ['bin/arkivector.js', 'devnet', '--port', '0', '--block-time', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      const url = await waitFor(
        (check) =>
          child.stdout.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            check();
          }),
        () => /Listening:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
        // A cold start compiles the TypeScript sources: 20 s was too short on a loaded 2-core machine.
        90_000,
      );
      assert.match(output, /\(0\) 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266/);
      assert.match(output, /\(0\) 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80/);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_chainId' }),
      });
      assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 7, result: '0x539' });
      const smoke = spawn(process.execPath, ['scripts/devnet-smoke.mjs', url], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let smokeOutput = '';
      smoke.stdout.on('data', (chunk: Buffer) => (smokeOutput += chunk.toString()));
      const [code] = await once(smoke, 'exit');
      assert.equal(code, 0, smokeOutput);
      assert.equal(smokeOutput.match(/^ok - /gm)?.length, 6, smokeOutput);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
