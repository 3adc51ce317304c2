// `arkivector serve --rpc` with a --data-dir snapshot starts while its RPC answers 503, or hangs: it serves
// the snapshot's collections as `stalled` from its first answer (/readyz 503) and follows the chain once the
// RPC answers. A hanging RPC costs it the start deadline (3 block times), not the transport's retries.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { spawnGateway } from '../helpers/gatewayProcess.ts';
import { devnetProxy } from '../helpers/rpcProxy.ts';
import { definitionArgs, openDefinition } from '../helpers/writes.ts';

const readyz = async (url: string) => (await (await fetch(`${url}/readyz`)).json()) as { sync_state: string };

test('serve with a snapshot and an RPC answering 503: starts, serves the snapshot as stalled, then follows', async () => {
  const devnet = await startTestDevnet();
  let down = false;
  const proxy = await devnetProxy(devnet.url, async (_req, res) => {
    if (!down) return false;
    res.writeHead(503).end('unavailable');
    return true;
  });
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-offline-'));
  const args = ['--http', '127.0.0.1:0', '--rpc', proxy.url, '--data-dir', dir];
  try {
    await walletClient(devnet, 0).createEntity(definitionArgs('notes', openDefinition({})));
    const first = await spawnGateway(args);
    const firstUrl = first.url;
    for (let i = 0; i < 300 && (await readyz(firstUrl)).sync_state !== 'live'; i++) await sleep(100);
    assert.equal((await readyz(firstUrl)).sync_state, 'live');
    assert.equal((await first.stop()).code, 0);

    down = true;
    const second = await spawnGateway(args);
    try {
      // The listener opens on the snapshot: its very first answer says `stalled`, never `starting`.
      assert.equal((await readyz(second.url)).sync_state, 'stalled');
      for (let i = 0; i < 300 && (await readyz(second.url)).sync_state !== 'stalled'; i++) await sleep(100);
      const response = await fetch(`${second.url}/readyz`);
      assert.equal(response.status, 503);
      assert.equal(((await response.json()) as { sync_state: string }).sync_state, 'stalled');
      const listed = (await (await fetch(`${second.url}/v1/collections`)).json()) as {
        collections: { name: string }[];
      };
      assert.deepEqual(
        listed.collections.map((c) => c.name),
        ['notes'],
      );
      down = false;
      for (let i = 0; i < 300 && (await readyz(second.url)).sync_state !== 'live'; i++) await sleep(100);
      assert.equal((await readyz(second.url)).sync_state, 'live');
    } finally {
      await second.stop();
    }
  } finally {
    await proxy.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve with a snapshot and an RPC that hangs: listens within the start deadline, stalled from its first answer', async () => {
  const devnet = await startTestDevnet();
  let hang = false;
  const held: ServerResponse[] = [];
  const proxy = await devnetProxy(devnet.url, async (_req, res) => {
    if (!hang) return false;
    held.push(res);
    return true;
  });
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-hang-'));
  const args = ['--http', '127.0.0.1:0', '--rpc', proxy.url, '--data-dir', dir];
  try {
    await walletClient(devnet, 0).createEntity(definitionArgs('notes', openDefinition({})));
    const first = await spawnGateway(args);
    for (let i = 0; i < 300 && (await readyz(first.url)).sync_state !== 'live'; i++) await sleep(100);
    assert.equal((await readyz(first.url)).sync_state, 'live');
    assert.equal((await first.stop()).code, 0);

    hang = true;
    const second = await spawnGateway(args);
    try {
      assert.equal((await readyz(second.url)).sync_state, 'stalled');
      const listed = (await (await fetch(`${second.url}/v1/collections`)).json()) as {
        collections: { name: string }[];
      };
      assert.deepEqual(
        listed.collections.map((c) => c.name),
        ['notes'],
      );
      hang = false;
      for (const res of held.splice(0)) res.destroy();
      for (let i = 0; i < 600 && (await readyz(second.url)).sync_state !== 'live'; i++) await sleep(100);
      assert.equal((await readyz(second.url)).sync_state, 'live');
    } finally {
      await second.stop();
    }
  } finally {
    for (const res of held.splice(0)) res.destroy();
    await proxy.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
