// A DB-chain patch carries only its changes, so the follower completes it with arkiv_getEntity at the
// patch's block, and that answer becomes the entity's content. An RPC that answers for another entity, or
// with another owner than the patch's log names, must fail the read (ChainDataError) rather than write a
// stranger's entity into this one's collection.
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

const notes = openDefinition({ topic: 'str' });

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
      vectorArgs('notes', { id: 'mine', vector: [0, 0, 1, 0], attributes: { topic: 'y' } }, notes),
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
        if (call?.method === 'arkiv_getEntity') lie(call, answer);
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
    lie = (_call, answer) => {
      answer.result = theirs.result;
    };
    await assert.rejects(readPatchBlock(), (error: Error) => {
      assert.ok(error instanceof ChainDataError, String(error));
      assert.match(error.message, /another entity/);
      return true;
    });
  });

  test('an answer naming another owner than the patch log fails the read', async () => {
    lie = (_call, answer) => {
      if (answer.result) answer.result.owner = defined(devnet.accounts[1], 'account 1').address;
    };
    await assert.rejects(readPatchBlock(), ChainDataError);
  });
});
