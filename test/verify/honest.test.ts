// Honest answers of a node on the DB-chain devnet verify: search (filtered, with documents), count, get and
// a listing, each check by check, at a cost of a couple of batches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { verifyAnswer, type VerifyReport } from '../../src/verify/index.ts';
import { call, startChain, type Chain, type Node } from '../http/fixture.ts';

function assertVerified(report: VerifyReport, checks: string[]) {
  assert.equal(report.verdict, 'verified', JSON.stringify(report.checks, null, 1));
  for (const check of checks)
    assert.ok(
      report.checks.some((c) => c.check === check && c.verdict === 'verified'),
      `${check} checked: ${JSON.stringify(report.checks)}`,
    );
}

describe('verify: honest answers of a DB-chain node', () => {
  let chain: Chain;
  let node: Node;
  before(async () => {
    chain = await startChain({ protocol: 'dbchain' });
    node = await chain.node();
  });
  after(() => chain.close());

  const base = () => `${node.url}/v1/collections/notes`;
  const verify = (request: Record<string, unknown> | undefined, answer: Record<string, unknown>) =>
    verifyAnswer({ rpc: chain.devnet.url, collection: 'notes', request, answer });

  test('a filtered search with documents: every result, its distance, the order and completeness', async () => {
    const request = { vector: [1, 0, 0, 0], k: 3, include_document: true, where: "topic = 'pets'" };
    const answer = await call(`${base()}/search`, { method: 'POST', json: request });
    assert.equal(answer.body.results.length, 2);
    const report = await verify(request, answer.body);
    assertVerified(report, ['block', 'entity', 'filter', 'distance', 'order', 'completeness']);
    assert.equal(report.checks.filter((c) => c.check === 'distance').length, 2);
    assert.equal(report.block_hash, answer.body.as_of_block_hash);
    assert.equal(report.checks.find((c) => c.check === 'block')?.detail?.head, chain.devnet.headNumber);
    assert.ok(report.cost.requests <= 3, JSON.stringify(report.cost));
  });

  test('arkivector_verify on a node with --verify-rpc (MCP over HTTP): verified, and refuted with evidence', async () => {
    const checker = await chain.node({ ctx: { verifyRpc: { url: chain.devnet.url } } });
    const client = new Client({ name: 'verify-tool-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${checker.url}/mcp`)));
    try {
      const request = { vector: [0, 0, 1, 0], k: 2, include_document: true };
      const answer = (await call(`${base()}/search`, { method: 'POST', json: request })).body;
      const ask = async (a: Record<string, unknown>) =>
        (
          (await client.callTool({
            name: 'arkivector_verify',
            arguments: { collection: 'notes', request, answer: a },
          })) as CallToolResult
        ).structuredContent as unknown as VerifyReport;
      assertVerified(await ask(answer), ['block', 'entity', 'distance', 'completeness']);
      const forged = { ...answer, results: [{ ...answer.results[0], document: 'Forged.' }, answer.results[1]] };
      const refuted = await ask(forged);
      assert.equal(refuted.verdict, 'refuted');
      assert.match(
        refuted.checks.find((c) => c.verdict === 'refuted')?.evidence ?? '',
        /document: the answer says "Forged\."/,
      );
      // A node without an RPC to trust does not offer it.
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'arkivector_verify'));
      const plain = new Client({ name: 'verify-tool-test', version: '0.0.0' });
      await plain.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`)));
      assert.ok(!(await plain.listTools()).tools.some((t) => t.name === 'arkivector_verify'));
      await plain.close();
    } finally {
      await client.close();
    }
  });

  test('count, get and a listing page', async () => {
    const countRequest = { filter: { gte: { stars: 3 } } };
    const count = await call(`${base()}/count`, { method: 'POST', json: countRequest });
    assertVerified(await verify(countRequest, count.body), ['block', 'count']);
    const get = await call(`${base()}/entities/dog?include_document=true`);
    assertVerified(await verify({ ref: 'dog' }, get.body), ['block', 'entity']);
    const list = await call(`${base()}/entities?limit=2&order=oldest`);
    assertVerified(await verify({ limit: 2, order: 'oldest' }, list.body), [
      'entity',
      'order',
      'total',
      'completeness',
    ]);
  });
});
