// The shared page walk (src/chain/pageWalk.ts) against a node made of a list: whatever sizes the node
// refuses as too large, the walk visits every entity once and in order; its page and time bounds hold.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ChainDataError } from '../../src/chain/source.ts';
import { readInHalves, walkPages, type WalkPage } from '../../src/chain/pageWalk.ts';
import { RpcAnswerTooLargeError } from '../../src/chain/transport.ts';

const tooLarge = () => new RpcAnswerTooLargeError(1, 'answered more than 1 byte');

/** A node over `items` whose answers are too large when they hold more than `maxWeight` weight in all. */
function listNode(items: number[], weight: (item: number) => number, maxWeight: number) {
  const sizes: number[] = [];
  const ask = async (size: number, cursor: string | undefined): Promise<WalkPage<number>> => {
    sizes.push(size);
    const at = cursor === undefined ? 0 : Number(cursor);
    const data = items.slice(at, at + size);
    if (data.reduce((sum, item) => sum + weight(item), 0) > maxWeight) throw tooLarge();
    return at + size < items.length ? { data, cursor: String(at + size) } : { data };
  };
  return { ask, sizes };
}

describe('walkPages', () => {
  test('property: any weights under any bound that one entity fits give the whole list in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 50, max: 400 }),
        async (items, pageSize, maxWeight) => {
          const node = listNode(items, (w) => w, maxWeight);
          const seen: number[] = [];
          await walkPages(
            { what: '*', pageLimit: 200, ask: node.ask, visit: (page) => seen.push(...page) },
            { pageSize },
          );
          assert.deepEqual(seen, items);
          for (let i = 1; i < node.sizes.length; i++)
            assert.ok((node.sizes[i] as number) <= (node.sizes[i - 1] as number));
        },
      ),
      { numRuns: 100 },
    );
  });

  test("one entity over the bound is the caller's error, not an endless halving", async () => {
    const node = listNode([5, 500], (w) => w, 100);
    await assert.rejects(
      walkPages({ what: '*', pageLimit: 200, ask: node.ask, visit: () => {} }),
      RpcAnswerTooLargeError,
    );
    assert.deepEqual(node.sizes.slice(-2), [1, 1]);
  });

  test('a cursor that never ends stops quietly after maxPages pages', async () => {
    let asked = 0;
    const endless = async () => ({ data: [asked++], cursor: 'again' });
    const seen: number[] = [];
    await walkPages({ what: '*', pageLimit: 200, ask: endless, visit: (p) => seen.push(...p) }, { maxPages: 3 });
    assert.deepEqual(seen, [0, 1, 2]);
  });

  test('a walk past maxMs fails with ChainDataError naming the query', async () => {
    let asked = 0;
    const slow = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      asked++;
      return { data: [1], cursor: 'again' };
    };
    const started = Date.now();
    await assert.rejects(
      walkPages({ what: "kind = str('x')", pageLimit: 200, ask: slow, visit: () => {} }, { maxMs: 30 }),
      (error: unknown) => error instanceof ChainDataError && /kind = str\('x'\).*30 ms/.test(error.message),
    );
    assert.ok(asked > 0 && Date.now() - started < 5_000);
  });

  test('an answer without a data list is ChainDataError', async () => {
    await assert.rejects(
      walkPages({ what: '*', pageLimit: 200, ask: async () => null as never, visit: () => {} }),
      ChainDataError,
    );
  });
});

describe('readInHalves', () => {
  test('property: a batch whose answers are too large above any size is read in parts, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer(), { maxLength: 64 }),
        fc.integer({ min: 1, max: 64 }),
        async (items, max) => {
          const read = async (part: readonly number[]) => {
            if (part.length > max) throw tooLarge();
            return part.map((x) => x * 2);
          };
          assert.deepEqual(
            await readInHalves(items, read),
            items.map((x) => x * 2),
          );
        },
      ),
    );
  });

  test('other errors pass through at once', async () => {
    let calls = 0;
    await assert.rejects(
      readInHalves([1, 2, 3], async () => {
        calls++;
        throw new ChainDataError('gone');
      }),
      ChainDataError,
    );
    assert.equal(calls, 1);
  });
});
