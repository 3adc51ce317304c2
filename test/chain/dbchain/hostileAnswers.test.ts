// What a hostile (or broken) RPC answers the DB-chain source. A patch carries only its changes, so the
// follower completes it with arkiv_getEntity at the patch's block, and that answer becomes the entity's
// content: an answer for another entity, or with another owner than the patch's log names, must fail the
// read (ChainDataError) rather than write a stranger's entity into this one's collection. Answers of the
// wrong shape fail the read as the node's fault, never as a TypeError; a u64 answered zero-padded is kept.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { ChainDataError, createDbChainSource, createHttpTransport } from '../../../src/chain/index.ts';
import type { Devnet } from '../../../src/devnet/index.ts';
import { defined } from '../../helpers/defined.ts';
import { startTestDevnet } from '../../helpers/devnet.ts';
import { createEntityAs, updateEntityAs } from '../../helpers/generations.ts';
import { devnetProxy, type RpcProxy } from '../../helpers/rpcProxy.ts';
import { openDefinition, vectorArgs } from '../../helpers/writes.ts';

type Call = { id: number; method: string; params: unknown[] };
type Answer = { id: number; result?: Record<string, unknown> | null };
type Lie = (call: Call, answer: Answer) => void;

const notes = openDefinition({ topic: 'str', n: 'uint' });

describe('DB-chain source: the entity answer that completes a patch', () => {
  let devnet: Devnet;
  let proxy: RpcProxy;
  let lie: Lie | undefined;
  let mine: Hex;
  let stranger: Hex;
  let patchBlock: number;

  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    mine = await createEntityAs(devnet, 0, vectorArgs('notes', { id: 'mine', vector: [1, 0, 0, 0] }, notes), notes);
    stranger = await createEntityAs(
      devnet,
      1,
      vectorArgs('other', { id: 'theirs', vector: [0, 1, 0, 0], attributes: { topic: 'x' } }, notes),
      notes,
    );
    await updateEntityAs(
      devnet,
      0,
      mine,
      vectorArgs('notes', { id: 'mine', vector: [0, 0, 1, 0], attributes: { topic: 'y', n: 5 } }, notes),
      notes,
    );
    patchBlock = devnet.headNumber;
    proxy = await devnetProxy(devnet.url, async (_req, res, body, _forward) => {
      if (!lie) return false;
      const parsed = JSON.parse(body.toString('utf8')) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const response = await fetch(devnet.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answers = (await response.json()) as Answer | Answer[];
      const list = Array.isArray(answers) ? answers : [answers];
      for (const answer of list) {
        const call = calls.find((c) => c.id === answer.id);
        if (call) lie(call, answer);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
      return true;
    });
  });

  after(async () => {
    await proxy?.close();
    await devnet?.stop();
  });

  async function readPatchBlock() {
    const transport = createHttpTransport({ url: proxy.url, attempts: 1 });
    try {
      return await createDbChainSource(transport).blocks(patchBlock, patchBlock);
    } finally {
      await transport.close();
    }
  }

  test('an honest answer completes the patch as an update of the patched entity', async () => {
    lie = undefined;
    const [block] = await readPatchBlock();
    const update = defined(block, 'the patch block').ops.find((op) => op.type === 'update');
    assert.equal(update?.key, mine);
  });

  test("an answer for another entity (another collection's) fails the read", async () => {
    const theirs = (await (
      await fetch(devnet.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'arkiv_getEntity', params: [stranger, patchBlock] }),
      })
    ).json()) as { result: Record<string, unknown> };
    lie = (call, answer) => {
      if (call.method === 'arkiv_getEntity') answer.result = theirs.result;
    };
    await assert.rejects(readPatchBlock(), (error: Error) => {
      assert.ok(error instanceof ChainDataError, String(error));
      assert.match(error.message, /another entity/);
      return true;
    });
  });

  test('an answer naming another owner than the patch log fails the read', async () => {
    lie = (call, answer) => {
      if (call.method === 'arkiv_getEntity' && answer.result)
        answer.result.owner = defined(devnet.accounts[1], 'account 1').address;
    };
    await assert.rejects(readPatchBlock(), ChainDataError);
  });

  test('a log topic that is not hex fails the read as the node answering badly, not as a TypeError', async () => {
    lie = (call, answer) => {
      if (call.method === 'eth_getLogs' && Array.isArray(answer.result))
        for (const log of answer.result as { topics: unknown[] }[]) log.topics[0] = 42;
    };
    await assert.rejects(readPatchBlock(), (error: Error) => {
      assert.ok(error instanceof ChainDataError, String(error));
      assert.match(error.message, /not hex/);
      return true;
    });
  });

  test('a transaction answered for another hash fails the read', async () => {
    lie = (call, answer) => {
      if (call.method === 'eth_getTransactionByHash' && answer.result) answer.result.hash = `0x${'ab'.repeat(32)}`;
    };
    await assert.rejects(readPatchBlock(), /another transaction/);
  });

  test('a u64 attribute answered as a zero-padded word keeps its value', async () => {
    lie = (call, answer) => {
      if (call.method !== 'arkiv_getEntity' || !answer.result) return;
      for (const a of answer.result.attributes as { type: string; value: string }[])
        if (a.type === 'u64') a.value = `0x${BigInt(a.value).toString(16).padStart(64, '0')}`;
    };
    const [block] = await readPatchBlock();
    const update = defined(block, 'the patch block').ops.find((op) => op.type === 'update');
    assert.ok(update?.type === 'update');
    assert.deepEqual(
      update.content.numericAttributes.filter((a) => a.key === 'n').map((a) => a.value),
      [5n],
    );
  });
});
