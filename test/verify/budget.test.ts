// arkivector_verify spends from the node's call budget (`--rpc-budget`): every call it makes to the RPC is
// counted as the follower's and the signer's are. A verification starts only while the bucket holds a call,
// and is refused with an error naming the budget when it is spent; the honest path does not wait for it.
// The budget runs on the test's own clock, which stands still unless the test moves it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createCallBudget, type CallBudget } from '../../src/chain/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import { createLogger, startGateway } from '../../src/node/index.ts';
import type { VerifyReport } from '../../src/verify/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { call, startChain, type Chain } from '../http/fixture.ts';

const CALLS_PER_HOUR = 60;
const ONE_CALL_MS = 3_600_000 / CALLS_PER_HOUR;

describe('verify: calls counted against the call budget', () => {
  let chain: Chain;
  let client: Client;
  let budget: CallBudget;
  const time = { now: 1_000_000 };
  before(async () => {
    chain = await startChain({ protocol: 'dbchain' });
    budget = createCallBudget(CALLS_PER_HOUR, 10, { now: () => time.now, sleep: async () => undefined });
    const checker = await chain.node({
      ctx: {
        verifyRpc: { url: chain.devnet.url },
        chain: { ...chain.ctx.chain, callsPerHour: CALLS_PER_HOUR, callBudget: budget },
      },
    });
    client = new Client({ name: 'verify-budget-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${checker.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await chain?.close();
  });

  const ask = async () => {
    const node = await chain.node();
    const request = { vector: [1, 0, 0, 0], k: 3, include_document: true };
    const answer = (await call(`${node.url}/v1/collections/notes/search`, { method: 'POST', json: request })).body;
    return (await client.callTool({
      name: 'arkivector_verify',
      arguments: { collection: 'notes', request, answer },
    })) as CallToolResult;
  };

  test("an honest verification spends its calls from the node's budget, without waiting for it", async () => {
    assert.equal(budget.waitMs(10), 0, 'a full bucket');
    const result = await ask();
    assert.ok(!result.isError, JSON.stringify(result.content));
    const report = result.structuredContent as unknown as VerifyReport;
    assert.equal(report.verdict, 'verified', JSON.stringify(report.checks));
    assert.ok(report.cost.calls >= 4, JSON.stringify(report.cost));
    // The clock stood still: the bucket lacks exactly the calls the verification made.
    assert.equal(budget.waitMs(10), report.cost.calls * ONE_CALL_MS);
  });

  test('a spent budget refuses the verification with an error naming it, and spends nothing more', async () => {
    budget.spend(20);
    const before = budget.waitMs(1);
    assert.ok(before > 0, 'spent');
    const result = await ask();
    assert.equal(result.isError, true, JSON.stringify(result.structuredContent));
    const text = JSON.stringify(result.content);
    assert.match(text, /rate_limited/);
    assert.match(text, new RegExp(`--rpc-budget ${CALLS_PER_HOUR}`));
    assert.match(text, /retry in \d+ s/);
    assert.equal(budget.waitMs(1), before, 'the refused verification made no call');
    // Once the bucket holds a call again, the verification runs.
    time.now += before;
    const again = await ask();
    assert.ok(!again.isError, JSON.stringify(again.content));
  });
});

test('serve --rpc-budget with --verify-rpc: the node hands its budget to arkivector_verify', async () => {
  const devnet = await startTestDevnet({ protocol: 'dbchain' });
  // One call an hour: the node's first contact with the chain spends more than the bucket holds.
  const gateway = await startGateway(
    parseServeConfig(
      [
        '--rpc',
        devnet.url,
        '--rpc-budget',
        '1',
        '--verify-rpc',
        devnet.url,
        '--http',
        '127.0.0.1:0',
        '--embedder',
        'none',
      ],
      {},
    ),
    createLogger('silent'),
  );
  const client = new Client({ name: 'verify-budget-test', version: '0.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${defined(gateway.httpUrl, 'http')}/mcp`)));
    const result = (await client.callTool({
      name: 'arkivector_verify',
      arguments: { collection: 'notes', answer: { as_of_block: 0, as_of_block_hash: '0x00', results: [] } },
    })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(result.content));
    assert.match(JSON.stringify(result.content), /--rpc-budget 1 calls an hour\) is spent/);
  } finally {
    await client.close();
    await gateway.close();
    await devnet.stop();
  }
});
