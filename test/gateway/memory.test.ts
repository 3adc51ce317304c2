// Memory that lasts: `arkivector serve` on the embedded devnet with --data-dir keeps the chain in
// DATA_DIR/devnet-dbchain.json. Start, write, stop, start again: the entity is still there and searchable, and
// the demo collections were seeded only into the new chain.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, parseServeConfig } from '../../src/config.ts';
import { spawnGateway } from '../helpers/gatewayProcess.ts';

async function json(url: string, init: RequestInit & { body?: string } = {}) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json' } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('the embedded chain kept in --data-dir: written memory survives a restart; demo seeded once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-memory-'));
  const args = ['--http', '127.0.0.1:0', '--devnet-port', '0', '--data-dir', dir, '--block-time', '1'];
  try {
    const first = await spawnGateway(args);
    let written: { block_number: number };
    try {
      assert.match(first.banner, /demo collections notes and demo\.docs written/);
      assert.ok(first.banner.includes(`Memory:   kept in ${join(dir, 'devnet-dbchain.json')}`), first.banner);
      const upsert = await json(`${first.url}/v1/collections/notes/entities`, {
        method: 'POST',
        body: JSON.stringify({
          entities: [
            {
              id: 'remember-me',
              vector: [0, 0, 0, 1],
              document: 'The user likes tea.',
              attributes: { topic: 'prefs' },
            },
          ],
        }),
      });
      assert.equal(upsert.status, 200, JSON.stringify(upsert.body));
      written = upsert.body as unknown as { block_number: number };
    } finally {
      const { code, stderr } = await first.stop();
      assert.equal(code, 0, stderr);
    }
    assert.ok(existsSync(join(dir, 'devnet-dbchain.json')));

    const second = await spawnGateway(args);
    try {
      assert.doesNotMatch(second.banner, /demo collections .* written/, 'a kept chain is not seeded again');
      assert.match(second.banner, /head block [1-9]\d*/);
      const minBlock = `?min_block=${written.block_number}`;
      const got = await json(
        `${second.url}/v1/collections/notes/entities/remember-me${minBlock}&include_document=true`,
      );
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal((got.body.entity as { document: string }).document, 'The user likes tea.');
      const found = await json(`${second.url}/v1/collections/notes/search`, {
        method: 'POST',
        body: JSON.stringify({ vector: [0, 0, 0.05, 1], k: 1, min_block: written.block_number }),
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.deepEqual(
        (found.body.results as { id: string }[]).map((r) => r.id),
        ['remember-me'],
      );
      const listed = await json(`${second.url}/v1/collections`);
      assert.deepEqual(
        (listed.body.collections as { name: string; stats: { live_entities: number } }[]).map((c) => [
          c.name,
          c.stats.live_entities,
        ]),
        [
          ['demo.docs', 200],
          ['notes', 4],
        ],
      );
    } finally {
      const { code, stderr } = await second.stop();
      assert.equal(code, 0, stderr);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a data directory that holds only a v1 chain (kept before the DB-chain default) keeps following it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-memory-v1-'));
  const args = ['--http', '127.0.0.1:0', '--devnet-port', '0', '--data-dir', dir, '--block-time', '1', '--no-demo'];
  try {
    const old = await spawnGateway([...args, '--protocol', 'v1']);
    let created: { block_number: number };
    try {
      const answer = await json(`${old.url}/v1/collections`, {
        method: 'POST',
        body: JSON.stringify({ name: 'kept', dim: 4, metric: 'cosine', open: true }),
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      created = answer.body as unknown as { block_number: number };
    } finally {
      const { code, stderr } = await old.stop();
      assert.equal(code, 0, stderr);
    }
    assert.ok(existsSync(join(dir, 'devnet.json')));

    const upgraded = await spawnGateway(args);
    try {
      assert.ok(upgraded.banner.includes(`Memory:   kept in ${join(dir, 'devnet.json')}`), upgraded.banner);
      const got = await json(`${upgraded.url}/v1/collections/kept?min_block=${created.block_number}`);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal((await json(`${upgraded.url}/v1/status`)).body.protocol, 'v1');
    } finally {
      const { code, stderr } = await upgraded.stop();
      assert.equal(code, 0, stderr);
    }
    assert.ok(!existsSync(join(dir, 'devnet-dbchain.json')), 'no second chain beside the kept one');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('config: devnet state defaults under --data-dir, the stable port, environment twins, refusals', () => {
  // Without --data-dir the embedded devnet's chain is kept in the per-user data directory (XDG).
  const home = parseServeConfig([], { HOME: '/home/ann' });
  assert.deepEqual(
    [home.dataDir, home.devnetState, home.devnetPort],
    ['/home/ann/.local/share/arkivector', '/home/ann/.local/share/arkivector/devnet-dbchain.json', 8545],
  );
  assert.equal(
    parseServeConfig([], { HOME: '/home/ann', XDG_DATA_HOME: '/data/ann' }).devnetState,
    '/data/ann/arkivector/devnet-dbchain.json',
  );
  const none = parseServeConfig(['--no-data-dir'], {});
  assert.deepEqual([none.dataDir, none.devnetState], [undefined, undefined]);
  assert.equal(parseServeConfig([], { ARKIVECTOR_NO_DATA_DIR: 'true' }).dataDir, undefined);
  assert.throws(() => parseServeConfig(['--no-data-dir', '--data-dir', '/tmp/a'], {}), /contradict/);
  // A flag wins over the other one's environment twin.
  assert.equal(parseServeConfig(['--data-dir', '/tmp/a'], { ARKIVECTOR_NO_DATA_DIR: '1' }).dataDir, '/tmp/a');
  assert.equal(parseServeConfig(['--no-data-dir'], { ARKIVECTOR_DATA_DIR: '/tmp/a' }).dataDir, undefined);
  // A node following --rpc keeps snapshots only where told.
  assert.equal(parseServeConfig(['--rpc', 'http://127.0.0.1:9'], { HOME: '/home/ann' }).dataDir, undefined);
  const kept = parseServeConfig(['--data-dir', '/tmp/a'], {});
  assert.equal(kept.devnetState, join('/tmp/a', 'devnet-dbchain.json'));
  const env = parseServeConfig([], { ARKIVECTOR_DEVNET_STATE: '/tmp/s.json', ARKIVECTOR_DEVNET_PORT: '9545' });
  assert.deepEqual([env.devnetState, env.devnetPort], ['/tmp/s.json', 9545]);
  assert.equal(parseServeConfig(['--data-dir', '/tmp/a', '--rpc', 'http://127.0.0.1:9'], {}).devnetState, undefined);
  assert.throws(() => parseServeConfig(['--devnet-port', '70000'], {}), ConfigError);
  assert.throws(
    () => parseServeConfig(['--rpc', 'http://127.0.0.1:9', '--devnet-state', 'x.json'], {}),
    /embedded devnet only/,
  );
});

test('a busy --devnet-port is refused with a clear message', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    await assert.rejects(
      spawnGateway(['--http', '127.0.0.1:0', '--devnet-port', String(port), '--no-demo']),
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`),
    );
  } finally {
    blocker.close();
  }
});

test('an embedder that does not answer is reported at start, without its credentials', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as AddressInfo).port;
  await new Promise<void>((resolve) => blocker.close(() => resolve()));
  const gateway = await spawnGateway(
    [
      '--http',
      '127.0.0.1:0',
      '--devnet-port',
      '0',
      '--no-demo',
      '--embedder',
      `http://user:pw-secret@127.0.0.1:${port}/v1`,
      '--embedder-model',
      'nomic-embed-text',
    ],
    { ARKIVECTOR_EMBEDDER_KEY: 'sk-never-logged' },
  );
  try {
    const line = await gateway.waitForStderr(/.*embedder does not answer yet.*/);
    assert.match(line, /"model":"nomic-embed-text"/);
    assert.match(line, /cannot be reached \(connection refused\) \(after 4 attempts\)/);
  } finally {
    const { code, stderr } = await gateway.stop();
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /pw-secret|sk-never-logged/);
  }
});
