// A node paced to a tight call budget polls the head rarely: between polls the chain runs on. Its `lag` and
// `sync_state` are measured against the head it expects now (the last head seen plus the blocks since, at the
// block time it measured), so a node far behind the real head says so instead of `live`; `head_block` keeps
// meaning the head last seen. A node that polls freely reads as before: the estimate is the head it just read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';

/** A number the status must carry (null or missing fails). */
const num = (value: number | null | undefined, what: string): number => {
  assert.equal(typeof value, 'number', `${what}: ${value}`);
  return value as number;
};

type Status = {
  head_block: number | null;
  head_block_estimated: number | null;
  as_of_block: number | null;
  lag: number | null;
  sync_state: string;
};

const getJson = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const realHead = async (devnet: Devnet) => Number(BigInt(await rpcResult<string>(devnet, 'eth_blockNumber')));

/** Resolves at the first block of `devnet` for which `done()` holds. */
function blockWhen(devnet: Devnet, done: () => boolean, timeoutMs = 60_000): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      devnet.node.off('block', check);
      reject(new Error(`not reached by block ${devnet.headNumber}`));
    }, timeoutMs);
    function check() {
      if (!done()) return;
      clearTimeout(timer);
      devnet.node.off('block', check);
      resolve();
    }
    devnet.node.on('block', check);
  });
}

async function gatewayOn(devnet: Devnet, extra: string[]): Promise<Gateway> {
  return startGateway(
    parseServeConfig(['--rpc', devnet.url, '--http', '127.0.0.1:0', '--embedder', 'none', ...extra], {}),
    createLogger('silent'),
  );
}

test('a node paced to its call budget measures lag and sync_state against the head it expects now', async () => {
  // Blocks every 100 ms; one call a second lets the follower poll about every 5 s, 50 blocks apart.
  const devnet = await startTestDevnet({ protocol: 'dbchain', blockTime: 0.1 });
  const gateway = await gatewayOn(devnet, ['--rpc-budget', '3600']);
  try {
    const { indexer } = gateway;
    const url = defined(gateway.httpUrl, 'http');
    assert.ok(await indexer.waitForBlock(0, 30_000), 'bootstrapped');
    // Two polls after the first one, so the node has seen the chain move and measured its pace.
    let polls = 0;
    let seen = indexer.headSeenAt;
    await blockWhen(devnet, () => {
      if (indexer.headSeenAt !== seen) {
        seen = indexer.headSeenAt;
        polls++;
      }
      return polls >= 2;
    });
    // Far behind the real head: 30 blocks past the head the node last read, before its next poll.
    const lastSeen = defined(indexer.headBlock, 'a head was read');
    let far = false;
    await blockWhen(devnet, () => {
      far = (indexer.headBlock ?? 0) === lastSeen && devnet.headNumber >= lastSeen + 30;
      return far || (indexer.headBlock ?? 0) !== lastSeen;
    });
    if (!far) {
      // The node polled first: wait for the next gap from its new head.
      const next = defined(indexer.headBlock, 'head');
      await blockWhen(devnet, () => devnet.headNumber >= next + 30 || indexer.headBlock !== next);
    }
    const before = await realHead(devnet);
    const status = (await getJson(`${url}/v1/status`)).body as unknown as Status;
    const ready = await getJson(`${url}/readyz`);
    const after = await realHead(devnet);
    const head = num(status.head_block, 'head_block');
    const asOf = num(status.as_of_block, 'as_of_block');
    const gap = before - head;
    assert.ok(gap >= 20, `the real head ${before} is far past the head last seen ${head}`);
    assert.notEqual(
      status.sync_state,
      'live',
      `${before - asOf} blocks behind the real head: ${JSON.stringify(status)}`,
    );
    const estimated = num(status.head_block_estimated, 'head_block_estimated');
    assert.ok(estimated >= head, `estimated ${estimated} is never below head_block ${head}`);
    // Within half the distance the node has not seen: the pace it measured, not the preset's 2 s blocks.
    assert.ok(
      Math.abs(estimated - before) <= gap / 2 || Math.abs(estimated - after) <= gap / 2,
      `estimated head ${estimated} against the real head ${before}..${after} (last seen ${head})`,
    );
    assert.equal(status.lag, estimated - asOf, 'lag is counted from the estimated head');
    assert.equal(status.sync_state, 'catching_up');
    assert.equal(ready.status, 503, JSON.stringify(ready.body));
    assert.equal(ready.body.sync_state, 'catching_up');
  } finally {
    await gateway.close();
    await devnet.stop();
  }
});

test('a node that polls freely reads as before: the estimated head is the head it just read', async () => {
  const devnet = await startTestDevnet({ protocol: 'dbchain' });
  const gateway = await gatewayOn(devnet, []);
  try {
    const url = defined(gateway.httpUrl, 'http');
    devnet.mine(3);
    assert.ok(await gateway.indexer.waitForBlock(devnet.headNumber, 30_000), 'followed');
    const status = (await getJson(`${url}/v1/status`)).body as unknown as Status;
    assert.equal(status.head_block, devnet.headNumber);
    assert.equal(status.head_block_estimated, status.head_block);
    assert.equal(status.lag, 0);
    assert.equal(status.sync_state, 'live');
  } finally {
    await gateway.close();
    await devnet.stop();
  }
});
