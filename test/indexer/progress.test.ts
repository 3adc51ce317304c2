// Progress from start to `live` (issue 14 item 8): the indexer reports what it is doing (connecting, reading
// the collections or loading a snapshot, catching up) to its progress sink; on a terminal that is one line
// rewritten in place, otherwise log lines.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { ChainIndexer, logProgress, type ProgressSink, ttyProgress } from '../../indexer/index.ts';
import { createLogger } from '../../src/node/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { definitionArgs, stateReached, vectorArgs } from '../helpers/writes.ts';

/** A sink that keeps every call, in order. */
function recorder(): ProgressSink & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    phase: (text) => events.push(`phase ${text}`),
    bootstrap: (entities) => events.push(`bootstrap ${entities}`),
    catchUp: ({ block, target }) => events.push(`catchUp ${block}/${target}`),
    done: () => events.push('done'),
  };
}

describe('indexer: progress from start to live', () => {
  let devnet: Devnet;
  let transport: RpcTransport;
  let dataDir: string;

  before(async () => {
    devnet = await startTestDevnet({ blockTime: 0 });
    transport = createHttpTransport({ url: devnet.url });
    dataDir = await mkdtemp(join(tmpdir(), 'arkivector-progress-'));
    const alice = walletClient(devnet);
    const spec: CollectionDefinition = {
      dim: 2,
      metric: 'l2',
      attributes: {},
      open: false,
      writers: [],
      index: { m: 16, ef_construction: 64, ef_search: 40 },
    };
    await alice.createEntity(definitionArgs('progress', spec));
    await alice.mutateEntities({
      creates: [0, 1, 2].map((i) => vectorArgs('progress', { id: `e${i}`, vector: [i, 1] }, spec)),
    });
  });
  after(async () => {
    await transport.close();
    await devnet.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs an indexer on the shared data dir until `live`, then stops it; what it reported, in order. */
  const runToLive = async () => {
    const sink = recorder();
    const indexer = new ChainIndexer({
      transport,
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
      dataDir,
      progress: sink,
    });
    indexer.start();
    await stateReached(indexer, 'live', 30_000);
    await indexer.stop();
    return { events: sink.events, phases: sink.events.filter((e) => e.startsWith('phase ')) };
  };

  test('a fresh node: connecting, reading the collections at a block, entities read, bootstrap done, live', async () => {
    const { events, phases } = await runToLive();
    assert.equal(phases[0], 'phase connecting to the chain');
    assert.equal(phases[1], 'phase loading the snapshot');
    assert.match(phases[2] ?? '', /^phase bootstrap: reading the collections at block \d+$/);
    assert.match(phases[3] ?? '', /^phase bootstrap done at block \d+; following the chain$/);
    // The definition and three vectors were read before the bootstrap was done.
    const read = events.slice(
      events.indexOf(defined(phases[2], 'bootstrap phase')),
      events.indexOf(defined(phases[3], 'bootstrap done phase')),
    );
    assert.ok(read.includes('bootstrap 4'), `entities read: ${read.join(', ')}`);
  });

  test('a restart: loading the snapshot, snapshot loaded at its block', async () => {
    const { phases } = await runToLive();
    assert.deepEqual(phases.slice(0, 2), ['phase connecting to the chain', 'phase loading the snapshot']);
    assert.match(phases[2] ?? '', /^phase snapshot loaded at block \d+; following the chain from there$/);
    assert.ok(!phases.some((p) => p.includes('bootstrap')), `no bootstrap after a snapshot: ${phases.join(', ')}`);
  });
});

test('ttyProgress: milestones at once, rates throttled, one line rewritten in place and cleared at live', () => {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream;
  let written = '';
  (stream as unknown as PassThrough).on('data', (chunk: Buffer) => (written += chunk.toString()));
  const sink = ttyProgress(stream, 60_000);
  sink.phase('connecting to the chain');
  sink.bootstrap(10, 1000);
  sink.bootstrap(20, 2000); // within the interval: not shown
  sink.phase('bootstrap done at block 7; following the chain');
  sink.done();
  (stream as unknown as PassThrough).end();
  assert.equal(
    written,
    '\r\x1b[2Kconnecting to the chain\r\x1b[2Kbootstrap: 10 entities read (10/s)' +
      '\r\x1b[2Kbootstrap done at block 7; following the chain\r\x1b[2K',
  );
});

test("a paced bootstrap shows its pages, and a wait for the call budget at once with the next call's time", () => {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream;
  let written = '';
  (stream as unknown as PassThrough).on('data', (chunk: Buffer) => (written += chunk.toString()));
  const tty = ttyProgress(stream, 60_000);
  tty.bootstrap(400, 2000, { pages: 2 });
  tty.bootstrap(600, 3000, { pages: 3 }); // within the interval: not shown
  const nextCallAt = Date.UTC(2026, 11, 2, 3, 4, 5);
  tty.bootstrap(600, 3000, { pages: 3, nextCallAt }); // a wait: shown at once
  (stream as unknown as PassThrough).end();
  assert.equal(
    written,
    '\r\x1b[2Kbootstrap: 400 entities read in 2 pages (200/s)' +
      '\r\x1b[2Kbootstrap: 600 entities read in 3 pages (200/s); waiting for the rpc budget, next call at 03:04:05 UTC',
  );
  const lines: string[] = [];
  const log = logProgress({ info: (fields) => lines.push(String(fields.progress)) }, 5_000);
  log.bootstrap(400, 2000, { pages: 2 });
  log.bootstrap(400, 2000, { pages: 2, nextCallAt: Date.now() + 90_000 }); // longer than the interval: logged
  log.bootstrap(400, 2000, { pages: 2, nextCallAt: Date.now() + 1_000 }); // a short wait: throttled
  assert.equal(lines.length, 2);
  assert.match(
    lines[1] ?? '',
    /^bootstrap: 400 entities read in 2 pages \(200\/s\); waiting for the rpc budget, next call at \d\d:\d\d:\d\d UTC$/,
  );
});

test('a log line on the terminal first clears the progress line, which the next update draws again', async () => {
  const stream = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.WriteStream;
  let written = '';
  (stream as unknown as PassThrough).on('data', (chunk: Buffer) => (written += chunk.toString()));
  const sink = ttyProgress(stream, 0);
  const logger = createLogger('info', 'pretty', stream);
  sink.phase('catch-up: block 1 / 9');
  logger.warn('chain step failed; retrying');
  logger.info('second line');
  sink.phase('catch-up: block 2 / 9');
  (stream as unknown as PassThrough).end();
  const clear = '\r\x1b[2K';
  assert.equal(
    written.replace(/\d\d:\d\d:\d\d/g, 'HH:MM:SS'),
    `${clear}catch-up: block 1 / 9${clear}HH:MM:SS WARN  chain step failed; retrying\nHH:MM:SS INFO  second line\n` +
      `${clear}catch-up: block 2 / 9`,
  );
  // Cleared once, not before every line: only a line that is showing is cleared.
  assert.equal(written.split(clear).length - 1, 3);
});

test('logProgress: milestones as log lines at once, rates at most once per interval', () => {
  const lines: unknown[] = [];
  const sink = logProgress({ info: (fields, message) => lines.push({ ...fields, message }) }, 60_000);
  sink.phase('connecting to the chain');
  sink.catchUp({ block: 10, target: 110, blocksPerSecond: 20, entitiesPerSecond: 5 });
  sink.catchUp({ block: 30, target: 110, blocksPerSecond: 20, entitiesPerSecond: 5 });
  sink.done();
  assert.deepEqual(lines, [
    { progress: 'connecting to the chain', message: 'progress' },
    { progress: 'catch-up: block 10 / 110 (20 blocks/s, 5 entities/s, ETA 5 s)', message: 'progress' },
  ]);
});
