// Searches on threads keep `as_of_block` honest (issue 23 item 5): with the native engine a vector search's
// scan runs on a thread while the indexer keeps committing blocks from the devnet; every answer, filtered
// or not, must be the one of the block it reports. Each write adds an entity nearer to the query than
// every earlier one, so the true top 3 at block B are the three newest writes at or before B, newest first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import { search } from '../../src/service/index.ts';
import { createEntityAs } from '../helpers/generations.ts';
import { type Chain, NOTES, startChain, vectorArgs } from '../http/fixture.ts';

const QUERY = [0, -1, 0, 0];
const WRITES = 12;
const READERS = 4;
/** Bound of each reader's loop (it stops when the writes are done). */
const READS_MAX = 1_500;

describe('vector searches on threads answer for the block they report', () => {
  let chain: Chain;
  const engineBefore = process.env[ENGINE_ENV];
  before(async () => {
    // The indexer's stores are created with the engine of the environment.
    process.env[ENGINE_ENV] = 'native';
    chain = await startChain();
  });
  after(async () => {
    await chain?.close();
    if (engineBefore === undefined) delete process.env[ENGINE_ENV];
    else process.env[ENGINE_ENV] = engineBefore;
  });

  /**
   * Writes `${prefix}{i}` with topic `prefix` while readers search (with `where`, when given, the topic's
   * filter: the pinned path's plan then scans the few allowed records, on the main thread at this size).
   */
  async function readWhileWriting(prefix: string, where?: string): Promise<void> {
    const { devnet, ctx } = chain;
    /** Block of each write, in order; write i is w{i}, nearer to the query than w{i-1}. */
    const blocks: number[] = [];
    const write = async (i: number) => {
      const entity = {
        id: `${prefix}${i}`,
        vector: [0.5 / (i + 1), -1, 0, 0],
        document: '',
        attributes: { topic: prefix, stars: i },
      };
      await createEntityAs(devnet, 0, vectorArgs('notes', entity), NOTES);
      blocks.push(devnet.headNumber);
    };
    for (let i = 0; i < 3; i++) await write(i);
    const truth = (block: number) => {
      const ids: string[] = [];
      for (let i = blocks.length - 1; i >= 0 && ids.length < 3; i--) if (blocks[i]! <= block) ids.push(`${prefix}${i}`);
      return ids;
    };
    let writing = true;
    // Checked once every write's block is known (a write can be indexed before its receipt returns).
    const answers: { block: number; ids: string[] }[] = [];
    const reader = async () => {
      for (let n = 0; n < READS_MAX && writing; n++) {
        const answer = await search(ctx, { collection: 'notes', vector: QUERY, k: 3, min_block: blocks[2], where });
        answers.push({ block: answer.as_of_block, ids: answer.results.map((r) => r.id) });
        // A search answered on the main thread resolves without leaving the microtask queue: let the
        // indexer apply blocks between reads, as separate requests would.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const readers = Array.from({ length: READERS }, reader);
    try {
      for (let i = 3; i < 3 + WRITES; i++) {
        await write(i);
        await ctx.indexer.waitForBlock(blocks.at(-1)!, 10_000);
      }
    } finally {
      writing = false;
    }
    await Promise.all(readers);
    for (const { block, ids } of answers) assert.deepEqual(ids, truth(block), `as_of_block ${block}`);
    const seen = new Set(answers.map((a) => a.block));
    const last = await search(ctx, { collection: 'notes', vector: QUERY, k: 3, min_block: blocks.at(-1), where });
    assert.deepEqual(
      last.results.map((r) => r.id),
      truth(last.as_of_block),
    );
    assert.ok(answers.length >= READERS, `only ${answers.length} reads`);
    assert.ok(seen.size >= 2, `answers at ${seen.size} blocks only`);
  }

  test('while blocks commit, each answer is the one of its as_of_block', () => readWhileWriting('w'));

  test('filtered: while blocks commit, each answer is the one of its as_of_block', () =>
    readWhileWriting('f', "topic = 'f'"));
});
