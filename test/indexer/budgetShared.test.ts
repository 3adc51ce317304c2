// One call budget for the whole node (README, `--rpc-budget`: "Writes and status reads spend from the same
// budget"): a gateway started with a budget, a signer and REST, in front of a DB-chain devnet through a
// proxy that counts every JSON-RPC call (each element of a batch). A write and a status read do not wait
// for the budget, but every call they make moves the follower's next poll later by exactly one call's
// share of the hour: the follower spends from the bucket they spent from.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseServeConfig } from '../../src/config.ts';
import { createLogger, startGateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { devnetProxy } from '../helpers/rpcProxy.ts';

/** The follower has re-read its budget: a poke wakes its wait, which asks the bucket again at once. */
async function rereadBudget(gateway: { indexer: { poke(): void; pacedUntil: number | undefined } }) {
  gateway.indexer.poke();
  await new Promise((resolve) => setImmediate(resolve));
  return defined(gateway.indexer.pacedUntil, 'the follower waits for its budget');
}

test("a write through the signer and a status read spend from the follower's budget: its next poll moves by their calls", async () => {
  const devnet = await startTestDevnet({ protocol: 'dbchain' });
  let calls = 0;
  const proxy = await devnetProxy(devnet.url, async (_req, _res, body) => {
    const parsed = JSON.parse(body.toString()) as unknown;
    calls += Array.isArray(parsed) ? parsed.length : 1;
    return false;
  });
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-budget-'));
  await writeFile(join(dir, 'key'), `${defined(devnet.accounts[0], 'dev account 0').privateKey}\n`);
  // 60 calls an hour: one a minute, so the node's first steps empty the bucket and the follower then waits
  // minutes, during which only the test's write and status read call the chain.
  const callsPerHour = 60;
  const gateway = await startGateway(
    parseServeConfig(
      [
        '--rpc',
        proxy.url,
        '--rpc-budget',
        String(callsPerHour),
        '--http',
        '127.0.0.1:0',
        '--private-key-file',
        join(dir, 'key'),
        '--embedder',
        'none',
      ],
      {},
    ),
    createLogger('silent'),
  );
  try {
    const rest = async (path: string, body?: unknown) => {
      const response = await fetch(`${gateway.httpUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    assert.ok(await gateway.indexer.waitForBlock(0, 30_000), 'bootstrapped');
    // Waiting for the budget: the bucket's 10 went to detection, the bootstrap and the first step.
    for (let i = 0; i < 200 && gateway.indexer.pacedUntil === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const oneCall = 3_600_000 / callsPerHour;
    const before = await rereadBudget(gateway);
    assert.ok(
      before - Date.now() > 10_000,
      `the follower waits for its budget (next poll in ${before - Date.now()} ms)`,
    );
    const beforeCalls = calls;
    const writeStarted = Date.now();

    const made = await rest('/v1/collections', { name: 'budgeted', dim: 2, metric: 'cosine', wait: 'receipt' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const afterWrite = await rereadBudget(gateway);
    const writeCalls = calls - beforeCalls;
    assert.ok(writeCalls >= 2, `the write called the chain ${writeCalls} times`);
    assert.ok(
      Math.abs(afterWrite - before - writeCalls * oneCall) < 1_000,
      `next poll moved ${afterWrite - before} ms for the write's ${writeCalls} calls (${oneCall} ms each)`,
    );

    const status = await rest('/v1/status');
    assert.equal(status.status, 200);
    assert.deepEqual((status.body.rpc_budget as { calls_per_hour: number }).calls_per_hour, callsPerHour);
    const afterStatus = await rereadBudget(gateway);
    const statusCalls = calls - beforeCalls - writeCalls;
    assert.ok(statusCalls >= 1, 'the status read asked the signer balance');
    assert.ok(
      Math.abs(afterStatus - afterWrite - statusCalls * oneCall) < 1_000,
      `next poll moved ${afterStatus - afterWrite} ms for the status read's ${statusCalls} calls`,
    );
    // What status says is when the follower polls next, and when it last read the head: before the write
    // (writes and status do not read the head), so `live` is as of then.
    const next = (status.body.rpc_budget as { next_poll_at: string | null }).next_poll_at;
    assert.ok(next !== null && Date.parse(next) >= before - 1_000);
    const seenAt = Date.parse(String(status.body.head_seen_at));
    assert.ok(seenAt <= writeStarted, `head seen at ${status.body.head_seen_at}, before the write`);
    assert.equal(status.body.bootstrap, null, 'no bootstrap runs');
  } finally {
    await gateway.close();
    await proxy.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
