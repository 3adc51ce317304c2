// bench:e2e waits for a started node to be live before writing to it (a loaded machine shows `stalled`
// first): waitLive against real nodes over a devnet, one live and one whose indexer reports stalled.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitLive } from '../helpers/serveProcess.ts';
import { type Chain, startChain } from '../http/fixture.ts';

let chain: Chain;
before(async () => {
  chain = await startChain({ write: false });
});
after(async () => {
  await chain?.close();
});

test('waitLive resolves once the node reports live', async () => {
  const node = await chain.node();
  await waitLive(node.url, 5_000);
});

test('waitLive gives up in its time bound, naming the state the node reported', async () => {
  const live = chain.indexer;
  const stalled = {
    asOfBlock: undefined,
    headBlock: live.headBlock,
    syncState: 'stalled' as const,
    lastError: 'timeout',
    collections: new Map(),
    waitForBlock: async () => false,
  };
  const node = await chain.node({ ctx: { indexer: stalled } });
  const started = performance.now();
  await assert.rejects(waitLive(node.url, 600), /not live within 0\.6 s \(last: stalled\)/);
  assert.ok(performance.now() - started < 5_000);
});
