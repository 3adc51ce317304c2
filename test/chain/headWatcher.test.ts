// newHeads push (--ws) against the devnet's WebSocket: heads arrive as blocks are mined, and the watcher
// subscribes again by itself after the endpoint goes away and comes back.
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { test } from 'node:test';
import { watchHeads } from '../../src/chain/index.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

test('watchHeads: reports mined blocks, and again after an outage', async () => {
  const devnet = await startTestDevnet();
  const events = new EventEmitter();
  const watcher = watchHeads(devnet.wsUrl, (n) => events.emit('head', n), {
    onSubscribed: () => events.emit('subscribed'),
  });
  const nextHead = () => once(events, 'head', { signal: AbortSignal.timeout(15_000) }).then(([n]) => n as number);
  try {
    await once(events, 'subscribed', { signal: AbortSignal.timeout(15_000) });
    let head = nextHead();
    let mined = devnet.mine().number;
    assert.equal(await head, mined);

    const resubscribed = once(events, 'subscribed', { signal: AbortSignal.timeout(15_000) });
    await devnet.suspend();
    await devnet.resume();
    await resubscribed;
    head = nextHead();
    mined = devnet.mine().number;
    assert.equal(await head, mined);
  } finally {
    watcher.close();
    await devnet.stop();
  }
});
