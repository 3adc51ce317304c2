// `npm run screenshots` photographs a token prompt: its second node must really require a token (it once
// got an empty environment, so it had none, and the script always failed waiting for the prompt).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, startGateway } from '../../src/node/index.ts';
import { demoNodeConfig, guardedNodeConfig, SCREENSHOT_TOKEN } from '../helpers/screenshotNodes.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

test('the screenshots: a demo node that keeps nothing, and a guarded node that asks for a token', async () => {
  const demo = demoNodeConfig();
  assert.deepEqual([demo.rpc, demo.dataDir, demo.devnetPort], [undefined, undefined, 0]);
  const devnet = await startTestDevnet();
  const guarded = await startGateway(guardedNodeConfig(devnet.url), createLogger('silent'));
  try {
    assert.equal(guarded.tokens, true);
    const page = await fetch(`${guarded.httpUrl}/console/node.json`);
    assert.equal(page.status, 401);
    const ok = await fetch(`${guarded.httpUrl}/console/node.json`, {
      headers: { authorization: `Bearer ${SCREENSHOT_TOKEN}` },
    });
    assert.equal(ok.status, 200);
  } finally {
    await guarded.close();
    await devnet.stop();
  }
});
