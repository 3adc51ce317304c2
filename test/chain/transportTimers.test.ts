// Issue 24, item 20: a request of the transport leaves nothing behind once its answer is read. The
// per-request timeout used to be an AbortSignal.timeout(), whose timer (and the fetch state its signal
// holds) lives on for the whole 30 s after the answer: a write daemon polling receipts every 250 ms kept
// thousands. Counted with async_hooks: timers created while requests ran and not destroyed after them.
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createHttpTransport } from '../../src/chain/index.ts';

const REQUESTS = 40;

test('finished RPC requests leave no pending timers (the per-request timeout is cleared)', async () => {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const transport = createHttpTransport({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  const pending = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type === 'Timeout') pending.add(asyncId);
    },
    destroy(asyncId) {
      pending.delete(asyncId);
    },
  });
  try {
    await transport.request('eth_blockNumber', []); // warm: the connection and undici's own timers
    hook.enable();
    for (let i = 0; i < REQUESTS; i++) assert.equal(await transport.request('eth_blockNumber', []), '0x10');
    // destroy hooks of cleared timers run on a later turn
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    hook.disable();
    assert.ok(pending.size < REQUESTS / 4, `${pending.size} timers still pending after ${REQUESTS} requests`);
  } finally {
    hook.disable();
    await transport.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
