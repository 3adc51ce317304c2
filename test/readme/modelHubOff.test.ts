// README "Local embedder": `--model-hub off` never fetches. A node whose model is not in the cache must say
// so from the start (banner, /v1/status) rather than promise a fetch at the first text call.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseServeConfig } from '../../src/config.ts';
import { connectionBanner, createLogger, startGateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { docSection } from '../helpers/readme.ts';
import { call } from '../http/fixture.ts';

test('README Local embedder: with --model-hub off and no model on disk, the banner and /v1/status say text is unavailable, not that it will be fetched', async () => {
  assert.match(
    docSection('embedders.md', 'Local embedder'),
    /`--model-hub off` never fetches: a model not on disk is `failed`/,
  );
  const cache = await mkdtemp(join(tmpdir(), 'arkivector-hub-off-'));
  const previous = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cache;
  const devnet = await startTestDevnet();
  const config = parseServeConfig(['--rpc', devnet.url, '--http', '127.0.0.1:0', '--model-hub', 'off'], {});
  const gateway = await startGateway(config, createLogger('silent'));
  try {
    const line = defined(
      connectionBanner(gateway)
        .split('\n')
        .find((l) => l.startsWith('Embedder:')),
      'the Embedder: line',
    );
    assert.doesNotMatch(line, /fetched from the hub/);
    assert.match(line, /unavailable .*not in the cache .*fetching is off \(--model-hub off\)/);
    const status = await call(`${gateway.httpUrl}/v1/status`);
    assert.equal(status.body.embedder.state, 'failed');
    assert.match(status.body.embedder.error, /fetching is off/);
  } finally {
    await gateway.close();
    await devnet.stop();
    if (previous === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previous;
    await rm(cache, { recursive: true, force: true });
  }
});
