// What cannot be checked is said, with why, never passed as verified: a block the RPC no longer holds
// (past its retention window), a collection over the completeness bound, a keyword ranking, and a v1 chain.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyAnswer, VerifyInputError, type VerifyReport } from '../../src/verify/index.ts';
import { devnetProxy, type RpcProxy } from '../helpers/rpcProxy.ts';
import { call, startChain, type Chain, type Node } from '../http/fixture.ts';

function assertUnverifiable(report: VerifyReport, check: string, reason: RegExp) {
  assert.equal(report.verdict, 'unverifiable', JSON.stringify(report.checks, null, 1));
  assert.ok(
    report.checks.some((c) => c.check === check && c.verdict === 'unverifiable' && reason.test(c.reason ?? '')),
    `${check} unverifiable with ${reason}: ${JSON.stringify(report.checks, null, 1)}`,
  );
  assert.ok(!report.checks.some((c) => c.verdict === 'refuted'), JSON.stringify(report.checks));
}

describe('verify: unverifiable, with the reason', () => {
  let chain: Chain;
  let node: Node;
  let pruned: RpcProxy;
  const search = { vector: [1, 0, 0, 0], k: 2 };

  before(async () => {
    chain = await startChain({ protocol: 'dbchain' });
    node = await chain.node();
    // An RPC that keeps no history: every historical arkiv_query answers "block not available".
    pruned = await devnetProxy(chain.devnet.url, async (_req, res, body, forward) => {
      const calls = [JSON.parse(body.toString('utf8'))].flat() as { id: number; method: string }[];
      if (!calls.some((c) => c.method === 'arkiv_query')) return false;
      const answers = [JSON.parse((await forward()).text)].flat() as { id: number }[];
      const rewritten = answers.map((a) =>
        calls.find((c) => c.id === a.id)?.method === 'arkiv_query'
          ? { jsonrpc: '2.0', id: a.id, error: { code: -32006, message: 'block is not available' } }
          : a,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rewritten));
      return true;
    });
  });
  after(async () => {
    await pruned.close();
    await chain.close();
  });

  const answerOf = async (path: string, request: unknown) =>
    (await call(`${node.url}/v1/collections/notes/${path}`, { method: 'POST', json: request })).body;

  test('a block past the RPC’s retention window', async () => {
    const answer = await answerOf('search', search);
    const report = await verifyAnswer({ rpc: pruned.url, collection: 'notes', request: search, answer });
    assertUnverifiable(report, 'chain', /does not hold block \d+ \(past its retention window\)/);
    assert.equal(report.checks.find((c) => c.check === 'block')?.verdict, 'verified');
  });

  test('a collection over the completeness bound: the results are checked, completeness is not', async () => {
    const answer = await answerOf('search', search);
    const report = await verifyAnswer({
      rpc: chain.devnet.url,
      collection: 'notes',
      request: search,
      answer,
      complete: 3,
    });
    assertUnverifiable(report, 'completeness', /holds 4 vector entities at block \d+, more than the bound 3/);
    assert.equal(report.checks.filter((c) => c.check === 'entity' && c.verdict === 'verified').length, 2);
    const counted = await answerOf('count', {});
    const countReport = await verifyAnswer({
      rpc: chain.devnet.url,
      collection: 'notes',
      answer: counted,
      complete: 3,
    });
    assertUnverifiable(countReport, 'count', /more than the bound 3/);
  });

  test('a keyword ranking', async () => {
    const request = { text: 'purr', mode: 'keyword', k: 2 };
    const answer = await answerOf('search', request);
    const report = await verifyAnswer({ rpc: chain.devnet.url, collection: 'notes', request, answer });
    assertUnverifiable(report, 'completeness', /keyword index/);
  });

  test('not an answer of arkivector: refused before any RPC call (no verdict)', async () => {
    const answer = await answerOf('search', search);
    const padded = { ...answer, results: Array.from({ length: 101 }, () => answer.results[0]) };
    const rpc = { cost: { calls: 0, requests: 0 }, request: () => Promise.reject(new Error('no call expected')) };
    await assert.rejects(
      verifyAnswer({ rpc, collection: 'notes', request: search, answer: padded }),
      (e: Error) => e instanceof VerifyInputError && /holds 101 entities/.test(e.message),
    );
    await assert.rejects(verifyAnswer({ rpc, collection: 'notes', answer: { hello: 1 } }), VerifyInputError);
    await assert.rejects(
      verifyAnswer({ rpc, collection: 'notes', answer: { ...answer, as_of_block: 'latest' } }),
      VerifyInputError,
    );
  });

  test('a v1 chain', async () => {
    const v1 = await startChain({ protocol: 'v1' });
    try {
      const v1Node = await v1.node();
      const answer = (await call(`${v1Node.url}/v1/collections/notes/search`, { method: 'POST', json: search })).body;
      const report = await verifyAnswer({ rpc: v1.devnet.url, collection: 'notes', request: search, answer });
      assertUnverifiable(report, 'chain', /Arkiv v1/);
    } finally {
      await v1.close();
    }
  });
});
