// The indexer behind a loopback proxy that turns the devnet into a bad RPC provider: it hangs, answers 503,
// answers blocks that do not link or hashes that keep changing, or lags behind (null for blocks already
// applied, a head below them). The node must say so (`stalled`, `last_error`), back off instead of busy
// looping, never rebuild from the chain for it, and start from its snapshot without the RPC.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createArkivV1Writer, createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import { status } from '../../src/service/index.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { STATUS_BALANCE_WAIT_MS } from '../../src/service/limits.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import type { ChainIndexer } from '../../indexer/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { devnetProxy, methodsOf, type RpcProxy } from '../helpers/rpcProxy.ts';
import { definitionArgs, openDefinition, stateReached, vectorArgs } from '../helpers/writes.ts';

type Mode = 'pass' | 'hang' | '503' | 'nolink' | 'badtip' | 'lag';
const notes = openDefinition({ topic: 'str' });
const BLOCK_SECONDS = 0.2;

/** Polls `check` every 20 ms for at most `ms`. */
async function eventually(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

describe('indexer: a hostile RPC', () => {
  let devnet: Devnet;
  let proxy: RpcProxy;
  let mode: Mode = 'pass';
  /** 'lag': the block the lagging backend is at. */
  let lagAt = 0;
  const hung: ServerResponse[] = [];
  const transports: RpcTransport[] = [];
  const suite = suiteIndexers(() => devnet, 20_000);
  const through = (options: { attempts?: number } = {}) => {
    const transport = createHttpTransport({ url: proxy.url, backoffMs: 20, ...options });
    transports.push(transport);
    return transport;
  };
  const setMode = (next: Mode) => {
    mode = next;
    // Requests held by 'hang' are dropped, so the node's retries see the new mode at once.
    for (const res of hung.splice(0)) res.destroy();
  };

  before(async () => {
    devnet = await startTestDevnet();
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    for (let i = 0; i < 4; i++)
      await alice.createEntity(
        vectorArgs(
          'notes',
          { id: `n${i}`, vector: [1, i, 0, 1], document: `doc ${i}`, attributes: { topic: 't' } },
          notes,
        ),
      );
    proxy = await devnetProxy(devnet.url, async (_req, res, body, forward) => {
      if (mode === 'pass') return false;
      if (mode === 'hang') {
        hung.push(res);
        return true;
      }
      if (mode === '503') {
        res.writeHead(503).end('unavailable');
        return true;
      }
      const calls = JSON.parse(body.toString('utf8')) as { id: number; method: string; params: unknown[] }[];
      const batch = Array.isArray(calls) ? calls : [calls];
      const { text } = await forward();
      const parsed = JSON.parse(text) as { id: number; result: unknown }[] | { id: number; result: unknown };
      const answers = Array.isArray(parsed) ? parsed : [parsed];
      for (const answer of answers) {
        const call = batch.find((c) => c.id === answer.id);
        if (!call) continue;
        const block = answer.result as { number: string; hash: string; parentHash: string } | null;
        if (mode === 'nolink' && call.method === 'eth_getBlockByNumber' && call.params[1] === true && block)
          block.parentHash = `0x${'11'.repeat(32)}`;
        // The per-step check (head + the last applied block's header in one batch) sees another hash each time.
        if (
          mode === 'badtip' &&
          call.method === 'eth_getBlockByNumber' &&
          block &&
          methodsOf(body)[0] === 'eth_blockNumber'
        )
          block.hash = `0x${Math.floor(Math.random() * 2 ** 48)
            .toString(16)
            .padStart(64, '0')}`;
        if (mode === 'lag') {
          if (call.method === 'eth_blockNumber') answer.result = `0x${lagAt.toString(16)}`;
          if (call.method.startsWith('eth_getBlock') && Number(call.params[0]) > lagAt) answer.result = null;
        }
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      return true;
    });
  });
  after(async () => {
    setMode('pass');
    await suite.stopAll();
    for (const transport of transports) await transport.close();
    await proxy.close();
    await devnet.stop();
  });

  /** Requests the proxy receives per second over `ms`. */
  const requestRate = async (ms = 1_000) => {
    const first = proxy.requests;
    await sleep(ms);
    return ((proxy.requests - first) * 1000) / ms;
  };

  test('a hanging RPC: stalled three block times after the last head, whatever the request is doing', async () => {
    // Default timeouts (30 s a request, 4 attempts): before, `live` held for the whole of them.
    const indexer = suite.create(through({ attempts: 4 }), { blockTimeSeconds: BLOCK_SECONDS });
    await suite.synced(indexer);
    await stateReached(indexer, 'live');
    const started = Date.now();
    setMode('hang');
    await stateReached(indexer, 'stalled', 10_000);
    const took = Date.now() - started;
    assert.ok(took < 6 * BLOCK_SECONDS * 1000, `stalled after ${took} ms`);
    setMode('pass');
    devnet.mine();
    await stateReached(indexer, 'live', 15_000);
    assert.equal(indexer.lastError, undefined, 'no current error once recovered');
    assert.ok(indexer.lastFailure === undefined || indexer.lastFailure.recoveredAt !== undefined);
    await indexer.stop();
  });

  test('a next block that does not link: retried with backoff (no busy loop), reported, no rebuild', async () => {
    const indexer = suite.create(through(), { blockTimeSeconds: BLOCK_SECONDS });
    await suite.synced(indexer);
    setMode('nolink');
    devnet.mine();
    indexer.poke();
    await eventually(() => /does not link/.test(indexer.lastError ?? ''), 'the anomaly in last_error');
    const rate = await requestRate();
    assert.ok(rate < 40, `${rate} RPC requests/s while the chain does not link`);
    setMode('pass');
    await suite.synced(indexer);
    assert.equal(indexer.counters.bootstraps, 1);
    await eventually(() => indexer.lastError === undefined, 'last_error cleared after recovery');
    await indexer.stop();
  });

  test('a head block whose hash changes at every look: reorgs back off and are reported', async () => {
    const indexer = suite.create(through(), { blockTimeSeconds: BLOCK_SECONDS });
    await suite.synced(indexer);
    setMode('badtip');
    indexer.poke();
    await eventually(() => /hashes flap|keep changing/.test(indexer.lastError ?? ''), 'the flapping in last_error');
    const reorgs = indexer.counters.reorgs;
    const rate = await requestRate();
    assert.ok(rate < 40, `${rate} RPC requests/s while hashes flap`);
    assert.ok(indexer.counters.reorgs - reorgs < 20, `${indexer.counters.reorgs - reorgs} reorgs in a second`);
    setMode('pass');
    devnet.mine();
    await suite.synced(indexer);
    assert.equal(indexer.counters.bootstraps, 1);
    await indexer.stop();
  });

  test('a lagging backend: unavailable, not a reorg; the head never shows below as_of_block; recovers', async () => {
    const indexer = suite.create(through(), { blockTimeSeconds: BLOCK_SECONDS });
    await suite.synced(indexer);
    const applied = indexer.asOfBlock!;
    const below: string[] = [];
    const watch = setInterval(() => {
      const { headBlock, asOfBlock } = indexer;
      if (headBlock !== undefined && asOfBlock !== undefined && headBlock < asOfBlock)
        below.push(`${headBlock} < ${asOfBlock}`);
    }, 10);
    try {
      lagAt = applied - 3;
      setMode('lag');
      indexer.poke();
      await stateReached(indexer, 'stalled', 10_000);
      assert.match(indexer.lastError ?? '', /lagging backend|below block/);
      assert.equal(indexer.counters.bootstraps, 1, 'no rebuild from the chain');
      assert.equal(indexer.counters.reorgs, 0, 'no rollback');
      assert.equal(indexer.asOfBlock, applied);
      setMode('pass');
      devnet.mine();
      await suite.synced(indexer);
      await stateReached(indexer, 'live');
      assert.equal(indexer.lastError, undefined);
      assert.ok(indexer.lastFailure?.recoveredAt !== undefined, 'the failure is kept, marked recovered');
      assert.deepEqual(below, []);
    } finally {
      clearInterval(watch);
    }
    await indexer.stop();
  });

  test('/v1/status of a signer node answers at once while the RPC hangs, the balance from its cache with its age', async () => {
    const indexer = suite.create(through(), { blockTimeSeconds: BLOCK_SECONDS });
    await suite.synced(indexer);
    const account = devnet.accounts[0]!;
    const writer = createArkivV1Writer({
      rpcUrl: proxy.url,
      chainId: devnet.chainId,
      privateKey: account.privateKey,
      transport: through(),
    });
    const ctx = { indexer, chain: { chainId: devnet.chainId, rpc: proxy.url }, writer } as unknown as ServiceContext;
    setMode('hang');
    const timed = async () => {
      const started = Date.now();
      const answer = await status(ctx);
      return { answer, ms: Date.now() - started };
    };
    const first = await timed();
    assert.ok(first.ms < STATUS_BALANCE_WAIT_MS + 500, `status took ${first.ms} ms`);
    assert.equal(first.answer.signer?.balance_wei, '-1', 'no balance read yet');
    assert.equal(first.answer.signer?.balance_age_seconds, null);
    const again = await timed();
    assert.ok(again.ms < STATUS_BALANCE_WAIT_MS + 500, `status took ${again.ms} ms`);
    setMode('pass');
    const recovered = await timed();
    assert.ok(BigInt(recovered.answer.signer?.balance_wei ?? '-1') > 0n, 'the balance once the RPC answers');
    assert.ok((recovered.answer.signer?.balance_age_seconds ?? 99) < 5);
    await indexer.stop();
  });

  for (const down of ['503', 'hang'] as const) {
    test(`start with a snapshot while the RPC ${down === '503' ? 'answers 503' : 'hangs'}: serves it as stalled, then follows`, async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-offline-'));
      try {
        const first: ChainIndexer = suite.create(through(), { dataDir, blockTimeSeconds: BLOCK_SECONDS });
        await suite.synced(first);
        await first.stop();
        const snapshotBlock = first.asOfBlock!;
        setMode(down);
        const second = suite.create(through({ attempts: 2 }), { dataDir, blockTimeSeconds: BLOCK_SECONDS });
        second.start();
        assert.ok(await second.waitForBlock(snapshotBlock, 10_000), `not served: ${second.lastError}`);
        await stateReached(second, 'stalled', 5_000);
        assert.equal(second.collections.get('notes')?.stats.live_entities, 4);
        setMode('pass');
        devnet.mine();
        await suite.synced(second);
        await stateReached(second, 'live', 15_000);
        assert.equal(second.counters.snapshotsLoaded, 1);
        assert.equal(second.counters.bootstraps, 0);
        await second.stop();
      } finally {
        setMode('pass');
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }
});
