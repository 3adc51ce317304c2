// A DB-chain follower behind an RPC that answers wrongly for a while, then honestly again. On the DB-chain a
// registry transaction that emitted logs always decodes (the node decodes it strictly before it logs), so
// logs that do not match their calldata, or calldata that is not the canonical encoding, are the RPC's
// fault: the node must not skip that transaction's operations for good. It fails the step (`last_error`,
// then `stalled`), applies nothing of the block, and once the answers are honest again it holds exactly
// what the chain holds (the oracle's answer from the devnet itself).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hex } from 'viem';
import { createDbChainSource, createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import { EVENT_TOPICS } from '../../src/chain/dbchain/abi.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { createEntityAs, deleteEntityAs, updateEntityAs } from '../helpers/generations.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { devnetProxy, type RpcProxy } from '../helpers/rpcProxy.ts';
import { definitionArgs, openDefinition, stateReached, vectorArgs } from '../helpers/writes.ts';

type Call = { id: number; method: string; params: unknown[] };
type Answer = { id: number; result?: unknown };
/** Rewrites one answer of the devnet in place. */
type Lie = (call: Call, answer: Answer) => void;

const notes = openDefinition({ topic: 'str' });
const word = (n: number) => n.toString(16).padStart(64, '0');

/** Each way the attacker's proxy answered wrongly, for transactions it had not yet answered honestly. */
const LIES: Record<string, Lie> = {
  // Every registry log claims a deletion: no log matches its operation.
  'mangled logs': (call, answer) => {
    if (call.method !== 'eth_getLogs' || !Array.isArray(answer.result)) return;
    for (const log of answer.result as { topics: Hex[]; data: Hex }[]) {
      log.topics = [EVENT_TOPICS.deleted, defined(log.topics[1], 'key topic'), defined(log.topics[2], 'owner topic')];
      log.data = '0x';
    }
  },
  // The outer array moved one word further: it decodes, but it is not the canonical layout.
  'aliased ABI calldata': (call, answer) => {
    const tx = answer.result as { input?: Hex } | null;
    if (call.method !== 'eth_getTransactionByHash' || !tx?.input) return;
    tx.input = `${tx.input.slice(0, 10)}${word(0x40)}${word(0)}${tx.input.slice(10 + 64)}` as Hex;
  },
  // Megabytes of zeros after the real calldata.
  'oversized calldata': (call, answer) => {
    const tx = answer.result as { input?: Hex } | null;
    if (call.method !== 'eth_getTransactionByHash' || !tx?.input) return;
    tx.input = `${tx.input}${'00'.repeat(2 * 1024 * 1024)}` as Hex;
  },
};

/** Resolves once the indexer's last step failed with `error` (no event says so: polled, bounded). */
async function failed(indexer: ChainIndexer, error: RegExp, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!error.test(indexer.lastError ?? '')) {
    if (Date.now() > until) throw new Error(`no failure matching ${error} within ${ms} ms: ${indexer.lastError}`);
    await sleep(20);
  }
}

describe('indexer: a DB-chain RPC that answers wrongly for a while', () => {
  let devnet: Devnet;
  let proxy: RpcProxy;
  let lie: Lie | undefined;
  const transports: RpcTransport[] = [];
  const indexers: ChainIndexer[] = [];
  /** Vector entities written so far, by id (updated and deleted by the tests). */
  const written = new Map<string, Hex>();
  let nextId = 0;

  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    await createEntityAs(devnet, 0, definitionArgs('notes', notes), notes);
    for (let i = 0; i < 3; i++) await writeVector();
    proxy = await devnetProxy(devnet.url, async (_req, res, body, forward) => {
      const current = lie;
      if (!current) return false;
      const parsed = JSON.parse(body.toString('utf8')) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const { status, text } = await forward();
      const answers = JSON.parse(text) as Answer | Answer[];
      for (const answer of Array.isArray(answers) ? answers : [answers]) {
        const call = calls.find((c) => c.id === answer.id);
        if (call) current(call, answer);
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
      return true;
    });
  });

  after(async () => {
    for (const indexer of indexers) await indexer.stop();
    for (const transport of transports) await transport.close();
    await proxy?.close();
    await devnet?.stop();
  });

  async function writeVector(): Promise<void> {
    const id = `v${nextId++}`;
    const vector = [1, nextId % 3, 0, 1];
    written.set(
      id,
      await createEntityAs(devnet, 0, vectorArgs('notes', { id, vector, attributes: { topic: id } }, notes), notes),
    );
  }

  async function follower(): Promise<ChainIndexer> {
    const transport = createHttpTransport({ url: proxy.url, attempts: 1 });
    transports.push(transport);
    const indexer = new ChainIndexer({
      source: createDbChainSource(transport),
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
    });
    indexers.push(indexer);
    indexer.start();
    await stateReached(indexer, 'live');
    return indexer;
  }

  for (const [name, how] of Object.entries(LIES)) {
    test(`${name}: the block is retried, not skipped; the error shows until an honest answer heals it`, async () => {
      lie = undefined;
      const indexer = await follower();
      const before = defined(indexer.asOfBlock, 'a live follower has a block');
      lie = how;
      // A create, an update and a delete, each in a block of its own, all answered wrongly.
      await writeVector();
      const [firstId, firstKey] = defined([...written].at(0), 'a written vector');
      const updated = defined([...written].at(1), 'a second vector');
      await updateEntityAs(
        devnet,
        0,
        updated[1],
        vectorArgs('notes', { id: updated[0], vector: [0, 0, 1, 1], attributes: { topic: 'changed' } }, notes),
        notes,
      );
      await deleteEntityAs(devnet, 0, firstKey);
      written.delete(firstId);
      indexer.poke();
      await stateReached(indexer, 'stalled', 15_000);
      await failed(indexer, /RPC/);
      assert.equal(indexer.asOfBlock, before, 'nothing of a wrongly answered block was applied');

      lie = undefined;
      indexer.poke();
      assert.ok(
        await indexer.waitForBlock(devnet.headNumber, 15_000),
        `stuck at ${indexer.asOfBlock}: ${indexer.lastError}`,
      );
      // Out of `stalled` only once the step that applied it finished and cleared the error.
      await stateReached(indexer, 'live');
      assert.equal(indexer.lastError, undefined);
      assert.ok(indexer.lastFailure?.recoveredAt, 'the failure is kept with when it healed');
      assert.deepEqual(
        indexedCollections(indexer),
        await expectedCollections(devnet, defined(indexer.asOfBlock, 'block')),
      );
      assert.equal(indexer.counters.anomalies, 0);
      await indexer.stop();
    });
  }
});
